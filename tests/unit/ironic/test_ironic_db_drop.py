"""Removing a killed owner's Ironic database from /dev/shm (:mod:`tripleo_flow.ironic.db_drop`):
real files, a real process holding them open, the ironic-dir's real lock and run record."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tripleo_flow.ironic import db_drop
from tripleo_flow.ironic.workdir import IronicDir

STARTED = "2026-11-27T03:00:00+00:00"


def _launch(tmp_path: Path) -> tuple[IronicDir, Path]:
    work = IronicDir(tmp_path / "work")
    work.ensure()
    shm = tmp_path / "shm"
    shm.mkdir()
    db = shm / "tripleo-flow-ironic-x.sqlite"
    db.write_bytes(b"nodes")
    Path(f"{db}-journal").write_bytes(b"journal")
    work.saved_db.write_bytes(b"saved")
    work.write_run({"started_at": STARTED, "database": str(db)})
    return work, db


def test_the_files_are_removed_once_nothing_holds_them(tmp_path: Path) -> None:
    work, db = _launch(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                               f"f = open({str(db)!r}, 'rb')\nprint('open', flush=True)\n"
                               "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        said = db_drop.run(work.root, db, STARTED, timeout=0.5)
        assert "left where it is" in said and db.exists()
    finally:
        holder.kill()
        holder.wait()
    assert db_drop.main(["--ironic-dir", str(work.root), "--db", str(db),
                         "--started-at", STARTED]) == 0
    assert list(db.parent.iterdir()) == []
    assert work.saved_db.read_bytes() == b"saved"  # the node state that lasts stays


def test_another_launch_s_database_is_left_alone(tmp_path: Path) -> None:
    work, db = _launch(tmp_path)
    work.write_run({"started_at": "later", "database": str(db)})
    said = db_drop.run(work.root, db, STARTED, timeout=5)
    assert "another launch" in said and db.exists()
