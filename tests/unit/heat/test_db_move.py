"""Moving a killed owner's Heat SQLite database off /dev/shm (:mod:`.db_move`): real
files, a real process holding them open, the heat-dir's real lock and run record."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import threading
from pathlib import Path

from tripleo_flow.heat import db_move
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


def test_held_past_the_timeout_it_is_left_where_it_is(tmp_path: Path) -> None:
    work, db = _launch(tmp_path)
    with db.open("rb"), work.locked():  # held by this process: not counted; the lock is
        said = db_move.run(work.root, db, STARTED, timeout=0.5)
    assert "left where it is" in said and db.exists() and not work.moved_db.exists()
