"""Moving a killed owner's Heat SQLite database off /dev/shm (:mod:`.db_move`): real
files, a real process holding them open, the heat-dir's real lock and run record."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tripleo_flow.heat import db_move, workdir
from tripleo_flow.heat.workdir import HeatDir

STARTED = "2026-11-26T23:00:00+00:00"


def _launch(tmp_path: Path) -> tuple[HeatDir, Path]:
    """A heat-dir whose run record names a SQLite database outside it (with a journal)."""
    work = HeatDir(tmp_path / "work")
    work.ensure()
    shm = tmp_path / "shm"
    shm.mkdir()
    db = shm / "tripleo-flow-heat-x.sqlite"
    db.write_bytes(b"main" * 1000)
    Path(f"{db}-journal").write_bytes(b"journal")
    Path(f"{db}-shm").write_bytes(b"scratch")
    work.write_run({"started_at": STARTED, "database": {"kind": "sqlite", "path": str(db)}})
    return work, db


def test_the_files_move_whole_and_private_and_leave_nothing(tmp_path: Path) -> None:
    work, db = _launch(tmp_path)
    Path(f"{work.moved_db}-wal").write_bytes(b"stale")  # an older run's: never kept
    said = db_move.run(work.root, db, STARTED, timeout=10)
    assert said.startswith("moved "), said
    assert work.moved_db.read_bytes() == b"main" * 1000
    assert Path(f"{work.moved_db}-journal").read_bytes() == b"journal"
    assert not Path(f"{work.moved_db}-wal").exists()
    assert stat.S_IMODE(work.moved_db.stat().st_mode) == 0o600
    assert list(db.parent.iterdir()) == []


def test_nothing_moves_while_a_process_holds_the_database(tmp_path: Path) -> None:
    work, db = _launch(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                               f"f = open({str(db)!r}, 'rb')\nprint('open', flush=True)\n"
                               "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        result: list[str] = []
        mover = threading.Thread(target=lambda: result.append(
            db_move.run(work.root, db, STARTED, timeout=30)))
        mover.start()
        mover.join(1.0)
        assert mover.is_alive() and db.exists() and not work.moved_db.exists()
    finally:
        holder.kill()
        holder.wait()
    mover.join(30)
    assert result and result[0].startswith("moved "), result
    assert not db.exists() and work.moved_db.exists()


def test_another_launch_s_database_is_left_alone(tmp_path: Path) -> None:
    work, db = _launch(tmp_path)
    record = json.loads(work.run_file.read_text())
    work.write_run({**record, "started_at": "later"})  # a new launch took the heat-dir
    said = db_move.run(work.root, db, STARTED, timeout=10)
    assert "another launch" in said and db.exists() and not work.moved_db.exists()


def test_held_past_the_timeout_it_is_left_where_it_is(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workdir, "LOCK_WAIT", 0.3)  # refused all the same, sooner
    work, db = _launch(tmp_path)
    with db.open("rb"), work.locked():  # held by this process: not counted; the lock is
        said = db_move.run(work.root, db, STARTED, timeout=0.5)
    assert "left where it is" in said and db.exists() and not work.moved_db.exists()


def _services(tmp_path: Path) -> tuple[HeatDir, Path]:
    """A heat-dir (type processes) whose run record names its servers' directory outside
    it: MariaDB data (with a fifo and a link the move leaves out), the broker's files, the
    init file."""
    work = HeatDir(tmp_path / "work")
    work.ensure()
    root = tmp_path / "shm" / "tripleo-flow-heat-x-services"
    (root / "mariadb" / "mysql").mkdir(parents=True)
    (root / "mariadb" / "mysql" / "user.MAI").write_bytes(b"hash")
    (root / "mariadb" / "ibdata1").write_bytes(b"data" * 1000)
    (root / "mariadb" / "ibdata1").chmod(0o660)  # as mariadbd makes them
    (root / "rabbitmq").mkdir()
    (root / "rabbitmq" / ".erlang.cookie").write_text("cookie")
    (root / "mariadb-init.sql").write_text("CREATE USER ...")
    os.mkfifo(root / "mariadb" / "x.sock")  # not a regular file (as the socket)
    (root / "mariadb" / "link").symlink_to("/etc/passwd")
    work.write_run({"started_at": STARTED, "services": {"root": str(root)}})
    return work, root


def test_a_services_dir_moves_its_mariadb_data_private_and_leaves_nothing(
        tmp_path: Path) -> None:
    work, root = _services(tmp_path)
    stale = work.moved_mariadb.with_name(f".{work.moved_mariadb.name}.partial")
    stale.mkdir()  # a move cut short earlier
    assert db_move.main(["--heat-dir", str(work.root), "--services",
                         "--started-at", STARTED]) == 0
    assert not root.exists() and list(root.parent.iterdir()) == []
    moved = work.moved_mariadb
    assert (moved / "ibdata1").read_bytes() == b"data" * 1000
    assert (moved / "mysql" / "user.MAI").read_bytes() == b"hash"
    assert not (moved / "x.sock").exists() and not (moved / "link").is_symlink()
    assert not stale.exists()
    modes = {p.relative_to(moved).as_posix(): oct(stat.S_IMODE(p.stat().st_mode))
             for p in [moved, *moved.rglob("*")]}
    assert modes == {".": "0o700", "mysql": "0o700", "mysql/user.MAI": "0o600",
                     "ibdata1": "0o600"}


def test_a_services_dir_is_left_alone_while_a_server_names_it(tmp_path: Path) -> None:
    work, root = _services(tmp_path)
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                               f"--datadir={root / 'mariadb'}"])
    try:
        said = db_move.run_services(work.root, root, STARTED, timeout=0.5)
    finally:
        server.kill()
        server.wait()
    assert "left where it is" in said and (root / "mariadb" / "ibdata1").exists()
    assert not work.moved_mariadb.exists()
    work.write_run({"started_at": "later", "services": {"root": str(root)}})
    said = db_move.run_services(work.root, root, STARTED, timeout=5)
    assert "another launch" in said and root.exists()
