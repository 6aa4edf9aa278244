"""Heat type ``processes`` launched by an owner that is SIGKILLed together with its
watcher (a killed session): the private servers' directory (MariaDB data with the stack's
passwords, the admin password's init file, RabbitMQ's cookie) stayed on /dev/shm until
the next launch of that very heat-dir.  The next launch of any heat-dir moves the MariaDB
data home (0700/0600) and removes the rest, and leaves a live run's directory alone
(real MariaDB, RabbitMQ, heat-api and heat-engine; real processes killed)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.functional.heat.conftest import make_conf
from tests.functional.killed_owner import launch_then_kill_watcher_and_owner
from tripleo_flow.client import Client
from tripleo_flow.heat import process
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional


def _services(work: HeatDir) -> Path:
    return Path("/dev/shm") / f"tripleo-flow-heat-{work.token}-services"


def _killed_with_its_watcher(tmp_path: Path, heat_venv: Path) -> None:
    """An owner that launches ``processes`` Heat, killed with its database watcher."""
    launch_then_kill_watcher_and_owner(f"""
        from pathlib import Path
        from tests.functional.heat.conftest import make_conf
        from tripleo_flow.heat import make_launcher
        from tripleo_flow.heat.workdir import HeatDir
        conf = make_conf(Path({str(tmp_path)!r}), Path({str(heat_venv)!r}), engine_workers=1)
        make_launcher(conf, "processes", {str(tmp_path / 'dead')!r}).launch(owned_by="deploy")
        work = HeatDir({str(tmp_path / 'dead')!r})
    """)


def test_a_later_launch_moves_a_dead_runs_servers_data_home_and_spares_a_live_one(
        tmp_path: Path, heat_venv: Path) -> None:
    dead, live, later = (HeatDir(tmp_path / n) for n in ("dead", "live", "later"))
    live_api = Client(make_conf(tmp_path / "l", heat_venv, engine_workers=1))
    live_api.heat.launch(str(live.given), "processes")  # a live run owned by nobody
    try:
        _killed_with_its_watcher(tmp_path, heat_venv)
        record = dead.read_run()
        assert record is not None and record["owner"]["by"] == "deploy"
        left = _services(dead)
        assert record["services"]["root"] == str(left)
        deadline = time.monotonic() + 60
        while process.find_naming(str(left)) or process.find(str(dead.conf_file)):
            assert time.monotonic() < deadline, "the dead owner's servers live on"
            time.sleep(0.2)
        time.sleep(2)
        if left.exists():
            assert (left / "mariadb" / "mysql").is_dir(), left
            assert not dead.moved_mariadb.exists()
        else:
            # Any launch on this machine sweeps (the test session's background THT
            # deployments, another test run): one started meanwhile already moved
            # the data home, which is what is proven below all the same.
            assert dead.moved_mariadb.exists(), (
                "the dead run's data is neither on /dev/shm nor moved home")

        later_api = Client(make_conf(tmp_path / "n", heat_venv))
        later_api.heat.launch(str(later.given), "native")  # any later launch
        later_api.heat.kill(str(later.given))
        assert not left.exists() and not Path(f"{left}.heat-dir").exists()
        assert (dead.moved_mariadb / "mysql").is_dir()
        modes = {p.stat().st_mode & 0o777 for p in dead.moved_mariadb.rglob("*")}
        assert modes <= {0o700, 0o600}, modes
        assert (_services(live) / "mariadb" / "mysql").is_dir()
        status = live_api.heat.status(str(live.given))
        assert status["running"] and status["api_answers"], status
        # The killed run's next launch takes it over from there (its data, then removed).
        ep = later_api.heat.launch(str(dead.given), "processes")
        assert any("left by a killed deploy" in line for line in ep["cleaned"]), ep
        assert later_api.heat.status(str(dead.given))["api_answers"]
    finally:
        Client(make_conf(tmp_path / "k", heat_venv)).heat.kill(str(dead.given))
        live_api.heat.kill(str(live.given))
    assert not _services(live).exists() and not _services(dead).exists()
    assert not dead.moved_mariadb.exists()
