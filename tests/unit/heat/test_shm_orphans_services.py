"""Orphaned private-server directories of heat type ``processes`` and Ironic databases on
the tmpfs (:mod:`tripleo_flow.heat.shm_orphans`, kinds beyond Heat's SQLite file): their
watcher and owner both killed with SIGKILL (real processes), the launcher dir's real lock
and run record; a live run's entries are never touched."""

from __future__ import annotations

import signal
import stat
import subprocess
import sys
from pathlib import Path

from tripleo_flow.heat import shm_orphans
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.ironic import launcher as ironic
from tripleo_flow.ironic.workdir import IronicDir
from tripleo_flow.workspace import owner

SLEEP = "import time; time.sleep(60)"


def _killed(*args: str) -> dict:
    """A real process (``args`` on its command line) killed with SIGKILL: its record as
    an owner ({pid, started}) and as a watcher ({pid, label})."""
    proc = subprocess.Popen([sys.executable, "-c", SLEEP, *args])
    recorded = {**owner.current(), "pid": proc.pid, "started": owner.start_ticks(proc.pid),
                "label": args[-1] if args else "\0"}
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return recorded


def _services(tmp_path: Path, name: str, who: dict | None) -> tuple[HeatDir, Path]:
    """A ``processes`` run whose servers' directory (MariaDB data with a password hash,
    the init file with the admin password) is on ``tmp_path/shm``, its watcher killed."""
    work = HeatDir(tmp_path / name)
    work.ensure()
    shm = tmp_path / "shm"
    shm.mkdir(exist_ok=True)
    root = shm / f"tripleo-flow-heat-{work.token}-services"
    (root / "mariadb" / "mysql").mkdir(parents=True)
    (root / "mariadb" / "mysql" / "user.MAI").write_bytes(b"hash")
    (root / "mariadb-init.sql").write_text("CREATE USER admin IDENTIFIED BY 'secret'")
    shm_orphans.write_note(root, work)
    work.write_run({"started_at": "x", "owner": who, "heat_type": "processes",
                    "services": {"root": str(root)},
                    "db_watcher": _killed("-m", "db_move", "--services")})
    return work, root


def _ironic(tmp_path: Path, name: str, who: dict | None) -> tuple[IronicDir, Path]:
    work = IronicDir(tmp_path / name)
    work.ensure()
    shm = tmp_path / "shm"
    shm.mkdir(exist_ok=True)
    db = shm / f"tripleo-flow-ironic-{work.token}.sqlite"
    db.write_bytes(b"bmc passwords")
    shm_orphans.write_note(db, work)
    work.write_run({"started_at": "x", "owner": who, "database": str(db),
                    "db_watcher": _killed("-m", "db_drop", str(db))})
    return work, db


def test_a_killed_runs_services_dir_moves_its_mariadb_data_home(tmp_path: Path) -> None:
    work, root = _services(tmp_path, "a", _killed())
    said = shm_orphans.sweep(root.parent)
    assert said == [f"moved {root / 'mariadb'} to {work.moved_mariadb}; removed {root}, "
                    "left by a killed run"]
    assert (work.moved_mariadb / "mysql" / "user.MAI").read_bytes() == b"hash"
    assert stat.S_IMODE((work.moved_mariadb / "mysql" / "user.MAI").stat().st_mode) == 0o600
    assert list(root.parent.iterdir()) == []  # the init file and the note went too


def test_a_services_dir_a_live_server_or_owner_uses_is_left_alone(tmp_path: Path) -> None:
    _, live = _services(tmp_path, "live", owner.current())
    work, served = _services(tmp_path, "served", _killed())
    server = subprocess.Popen([sys.executable, "-c", SLEEP, f"--datadir={served / 'mariadb'}"])
    try:
        assert shm_orphans.sweep(live.parent) == []
        assert (live / "mariadb").is_dir() and (served / "mariadb").is_dir()
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
    assert shm_orphans.sweep(live.parent)[0].startswith(f"moved {served / 'mariadb'}")
    assert work.moved_mariadb.is_dir() and (live / "mariadb").is_dir()


def test_a_services_dir_no_run_uses_or_nobody_names_is_removed(tmp_path: Path) -> None:
    work, root = _services(tmp_path, "a", _killed())
    work.clear_run()  # a teardown cut short
    assert shm_orphans.sweep(root.parent) == [f"removed {root}: no run of {work.root} uses it"]
    assert list(root.parent.iterdir()) == [] and not work.moved_mariadb.exists()
    _, unnamed = _services(tmp_path, "b", _killed())
    shm_orphans.note_path(unnamed).unlink()  # a launch from before the notes
    assert shm_orphans.sweep(unnamed.parent, grace=3600) == [] and unnamed.is_dir()
    assert shm_orphans.sweep(unnamed.parent, grace=0) == [
        f"removed {unnamed}: no heat-dir recorded for it and no process uses it"]
    assert list(unnamed.parent.iterdir()) == []


def test_a_killed_owners_ironic_database_is_removed(tmp_path: Path) -> None:
    work, db = _ironic(tmp_path, "a", _killed())
    work.saved_db.write_bytes(b"saved")
    said = shm_orphans.sweep(db.parent, kinds=(ironic.ORPHANS,))
    assert said == [f"removed {db}, left by a killed run (its owner's database is never kept)"]
    assert list(db.parent.iterdir()) == []
    assert work.saved_db.read_bytes() == b"saved"  # the node state that lasts stays


def test_a_live_ironics_database_is_left_alone(tmp_path: Path) -> None:
    _, live = _ironic(tmp_path, "live", owner.current())
    work, running = _ironic(tmp_path, "running", _killed())
    unowned, kept = _ironic(tmp_path, "unowned", None)  # launch ironic: its kill saves it
    proc = subprocess.Popen([sys.executable, "-c", SLEEP, "--config-file", str(work.conf_file)])
    try:
        assert shm_orphans.sweep(live.parent, kinds=(ironic.ORPHANS,)) == []
        assert live.exists() and running.exists() and kept.exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert shm_orphans.sweep(live.parent, kinds=(ironic.ORPHANS,)) == [
        f"removed {running}, left by a killed run (its owner's database is never kept)"]
    assert live.exists() and kept.exists() and unowned.read_run()


def test_each_kind_sweeps_only_its_own_entries(tmp_path: Path) -> None:
    heat, root = _services(tmp_path, "heat", _killed())
    _, db = _ironic(tmp_path, "ironic", _killed())
    assert shm_orphans.sweep(root.parent, kinds=(ironic.ORPHANS,)) == [
        f"removed {db}, left by a killed run (its owner's database is never kept)"]
    assert root.is_dir()
    assert shm_orphans.sweep(root.parent, skip=heat.token) == [] and root.is_dir()
    assert shm_orphans.note_path(root).exists()
