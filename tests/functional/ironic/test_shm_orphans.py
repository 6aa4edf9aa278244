"""An owned Ironic whose owner and database watcher were both killed with SIGKILL (a
killed session): its database (the nodes' BMC credentials) stayed on /dev/shm until the
next launch of that very ironic-dir.  The next launch of any ironic-dir removes it, and
leaves a live Ironic's database alone (real Ironic, real processes)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.functional.killed_owner import launch_then_kill_watcher_and_owner
from tripleo_flow.heat import process
from tripleo_flow.ironic.client import IronicClient
from tripleo_flow.ironic.launcher import IronicLauncher
from tripleo_flow.ironic.workdir import IronicDir

pytestmark = pytest.mark.functional


def _live(work: IronicDir) -> Path:
    return Path("/dev/shm") / f"tripleo-flow-ironic-{work.token}.sqlite"


def _killed_with_its_watcher(ironic_venv: Path, root: Path) -> None:
    """An owner that launches Ironic and registers a node with a BMC password, killed
    with its database watcher."""
    launch_then_kill_watcher_and_owner(f"""
        from pathlib import Path
        from tripleo_flow.ironic.client import IronicClient
        from tripleo_flow.ironic.launcher import IronicLauncher
        from tripleo_flow.ironic.workdir import IronicDir
        ready = IronicLauncher({str(root)!r}, Path({str(ironic_venv)!r})).launch(
            owned_by="deploy")
        IronicClient(ready.endpoint).create_node(
            {{"name": "bmc", "driver": "fake-hardware",
              "driver_info": {{"ipmi_password": "do-not-leave-me"}}}})
        work = IronicDir({str(root)!r})
    """)


def test_a_later_launch_removes_a_dead_runs_database_and_spares_a_live_one(
        ironic_venv: Path, tmp_path: Path) -> None:
    dead, live, later = (IronicDir(tmp_path / n) for n in ("dead", "live", "later"))
    running = IronicLauncher(live.given, ironic_venv)
    ready = running.launch()  # launch ironic: a live Ironic owned by nobody
    try:
        IronicClient(ready.endpoint).create_node({"name": "kept", "driver": "fake-hardware"})
        _killed_with_its_watcher(ironic_venv, dead.given)
        record = dead.read_run()
        assert record is not None and record["owner"]["by"] == "deploy"
        deadline = time.monotonic() + 60
        while process.find(str(dead.conf_file)):  # its tether kills Ironic
            assert time.monotonic() < deadline, "the dead owner's Ironic lives on"
            time.sleep(0.2)
        time.sleep(1)
        assert _live(dead).exists(), "the database was meant to stay on /dev/shm"
        assert b"do-not-leave-me" in _live(dead).read_bytes()

        other = IronicLauncher(later.given, ironic_venv)
        other.launch()  # any later launch
        try:
            assert sorted(Path("/dev/shm").glob(f"tripleo-flow-ironic-{dead.token}*")) == []
            assert not dead.saved_db.exists()  # a killed owner's database is never kept
            assert _live(live).exists() and _live(later).exists()
            names = [n["name"] for n in IronicClient(ready.endpoint).list_nodes(("name",))]
            assert names == ["kept"]  # the live Ironic still answers from its database
        finally:
            other.kill()
    finally:
        running.kill()
    assert not _live(live).exists() and not _live(later).exists()
