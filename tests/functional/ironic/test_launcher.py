"""``launch ironic``: a real all-in-one Ironic, its kill, restart and leftovers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tripleo_flow import exceptions
from tripleo_flow.heat import process
from tripleo_flow.ironic.client import IronicClient
from tripleo_flow.ironic.launcher import IronicLauncher
from tripleo_flow.ironic.workdir import IronicDir


def _group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
        return True
    except ProcessLookupError:
        return False


def test_kill_stops_the_group_and_a_relaunch_keeps_the_nodes(ironic_venv: Path,
                                                             tmp_path: Path) -> None:
    launcher = IronicLauncher(tmp_path, ironic_venv)
    ready = launcher.launch()
    try:
        assert ready.endpoint.startswith("http://127.0.0.1:")
        with pytest.raises(exceptions.IronicRunning, match="--kill"):
            IronicLauncher(tmp_path, ironic_venv).launch()
        IronicClient(ready.endpoint).create_node({"name": "kept", "driver": "fake-hardware"})
    finally:
        stopped = launcher.kill()
    assert stopped.saved_db and not _group_alive(ready.pid)
    assert launcher.status()["running"] is False
    again = launcher.launch()
    try:
        assert [n["name"] for n in IronicClient(again.endpoint).list_nodes(("uuid", "name"))] \
            == ["kept"]
    finally:
        launcher.kill()
    assert launcher.kill().stopped == []  # safe to repeat


def test_leftovers_of_a_killed_owner_are_cleaned_by_the_next_launch(ironic_venv: Path,
                                                                    tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import os, signal, sys
        from pathlib import Path
        from tripleo_flow.ironic.launcher import IronicLauncher
        ready = IronicLauncher({str(tmp_path)!r}, Path({str(ironic_venv)!r})).launch(
            owned_by="deploy")
        print(ready.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    owner = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=120, check=False)
    assert owner.returncode == -signal.SIGKILL, owner.stderr
    work = IronicDir(tmp_path)
    record = work.read_run()
    assert record is not None and record["owner"]["by"] == "deploy"
    launcher = IronicLauncher(tmp_path, ironic_venv)
    ready = launcher.launch()
    try:
        assert len(ready.cleaned) == 1 and "killed deploy" in ready.cleaned[0]
        assert not process.is_running(record["pid"], str(work.conf_file))
        assert not work.saved_db.exists()  # the half-done run's database was not kept
    finally:
        launcher.kill()


def _shm_files(work: IronicDir) -> list[Path]:
    """What this ironic-dir's launches put in /dev/shm (its name carries the dir's token)."""
    return sorted(Path("/dev/shm").glob(f"*tripleo-flow-ironic-{work.token}*"))


def test_a_killed_owner_leaves_nothing_on_dev_shm(ironic_venv: Path, tmp_path: Path) -> None:
    """``kill -9`` of an owner: its Ironic's database (the nodes' BMC credentials) was
    0600 from the start and leaves /dev/shm within seconds, not at the next launch
    (issue 29: 0644 files of killed runs stayed there for good)."""
    work = IronicDir(tmp_path)
    assert _shm_files(work) == []
    script = textwrap.dedent(f"""
        import json, os, signal, stat
        from pathlib import Path
        from tripleo_flow.ironic.client import IronicClient
        from tripleo_flow.ironic.launcher import IronicLauncher
        from tripleo_flow.ironic.workdir import IronicDir
        ready = IronicLauncher({str(tmp_path)!r}, Path({str(ironic_venv)!r})).launch(
            owned_by="deploy")
        IronicClient(ready.endpoint).create_node(
            {{"name": "bmc", "driver": "fake-hardware",
              "driver_info": {{"ipmi_password": "do-not-leave-me"}}}})
        live = IronicDir({str(tmp_path)!r}).read_run()["database"]
        names = [p for p in Path(live).parent.iterdir() if p.name.startswith(Path(live).name)]
        print(json.dumps({{"live": live,
                           "modes": {{p.name: oct(p.stat().st_mode & 0o777) for p in names}}}}),
              flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    owner = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=120, check=False)
    assert owner.returncode == -signal.SIGKILL, owner.stderr
    seen = json.loads(owner.stdout)
    assert Path(seen["live"]).parent == Path("/dev/shm"), seen  # what this test is about
    assert seen["modes"] and set(seen["modes"].values()) == {"0o600"}, seen
    deadline = time.monotonic() + 30
    while _shm_files(work):
        log = work.log_dir / "db-watcher.log"
        assert time.monotonic() < deadline, (
            _shm_files(work), log.read_text() if log.exists() else "(no watcher log)")
        time.sleep(0.1)
    # The next launch still cleans up after the killed run (its process, its record),
    # keeps no database of it, and its own database is 0600 too.
    launcher = IronicLauncher(tmp_path, ironic_venv)
    ready = launcher.launch()
    try:
        assert len(ready.cleaned) == 1 and "killed deploy" in ready.cleaned[0]
        assert IronicClient(ready.endpoint).list_nodes(("uuid", "name")) == []
        live = Path("/dev/shm") / f"tripleo-flow-ironic-{work.token}.sqlite"
        assert oct(live.stat().st_mode & 0o777) == "0o600"
    finally:
        launcher.kill()
    assert _shm_files(work) == []
    assert oct(work.saved_db.stat().st_mode & 0o777) == "0o600"


def test_a_crashed_ironic_is_cleaned_by_kill(ironic_venv: Path, tmp_path: Path) -> None:
    launcher = IronicLauncher(tmp_path, ironic_venv)
    ready = launcher.launch()
    os.killpg(ready.pid, signal.SIGKILL)
    process.kill(ready.pid, str(IronicDir(tmp_path).conf_file))  # reap our child
    assert launcher.status()["running"] is False
    launcher.kill()
    assert IronicDir(tmp_path).read_run() is None
    launcher.launch()
    launcher.kill()


def test_a_missing_virtualenv_names_the_script(tmp_path: Path) -> None:
    with pytest.raises(exceptions.IronicNotInstalled, match="tools/setup-ironic.sh"):
        IronicLauncher(tmp_path, tmp_path / "no-venv").launch()
    assert IronicDir(tmp_path).read_run() is None
