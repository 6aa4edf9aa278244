"""Orphaned Heat SQLite files on the tmpfs (:mod:`tripleo_flow.heat.shm_orphans`): real
files, real processes (a dead owner, a live one, one holding the file open), the
heat-dir's real lock and run record."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tripleo_flow.heat import shm_orphans, workdir
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.workspace import owner


def _dead_owner() -> dict:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    recorded = {**owner.current(), "pid": proc.pid, "started": owner.start_ticks(proc.pid)}
    proc.kill()
    proc.wait()
    return recorded


def _run(tmp_path: Path, name: str, who: dict | None, note: bool = True) -> tuple[HeatDir, Path]:
    """A heat-dir whose run record names its database on ``tmp_path/shm``."""
    work = HeatDir(tmp_path / name)
    work.ensure()
    shm = tmp_path / "shm"
    shm.mkdir(exist_ok=True)
    db = shm / f"tripleo-flow-heat-{work.token}.sqlite"
    db.write_bytes(b"passwords" * 100)
    Path(f"{db}-journal").write_bytes(b"journal")
    if note:
        shm_orphans.write_note(db, work)
    work.write_run({"started_at": "x", "owner": who, "pid": None, "heat_type": "native",
                    "database": {"kind": "sqlite", "path": str(db)}})
    return work, db


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_dead_owners_file_moves_into_its_heat_dir(tmp_path: Path) -> None:
    work, db = _run(tmp_path, "a", _dead_owner())
    assert stat.S_IMODE(shm_orphans.note_path(db).stat().st_mode) == 0o600
    said = shm_orphans.sweep(db.parent)
    assert said == [f"moved {db}, left by a killed run, to {work.moved_db}"]
    assert work.moved_db.read_bytes() == b"passwords" * 100
    assert Path(f"{work.moved_db}-journal").read_bytes() == b"journal"
    assert stat.S_IMODE(work.moved_db.stat().st_mode) == 0o600
    assert list(db.parent.iterdir()) == []  # the note went with it


def test_a_live_owners_file_and_a_held_file_are_left_alone(tmp_path: Path) -> None:
    _, live = _run(tmp_path, "live", owner.current())
    _, held = _run(tmp_path, "held", _dead_owner())
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                               f"f = open({str(held)!r}, 'rb')\nprint('open', flush=True)\n"
                               "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        assert shm_orphans.sweep(live.parent) == []
        assert live.exists() and held.exists()
    finally:
        holder.kill()
        holder.wait()
    assert shm_orphans.sweep(live.parent) == [
        f"moved {held}, left by a killed run, to {HeatDir(tmp_path / 'held').moved_db}"]
    assert live.exists()


def test_a_heat_dir_being_launched_is_not_raced(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workdir, "LOCK_WAIT", 0.3)  # refused all the same, sooner
    work, db = _run(tmp_path, "a", _dead_owner())
    with work.locked():
        assert shm_orphans.sweep(db.parent) == []
    assert db.exists()


def test_a_heat_process_of_the_heat_dir_keeps_its_file(tmp_path: Path) -> None:
    work, db = _run(tmp_path, "a", None)  # launch heat: no owner, heat-all is what lives
    heat = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                             "--config-file", str(work.conf_file)])
    try:
        time.sleep(0.2)
        assert shm_orphans.sweep(db.parent) == [] and db.exists()
    finally:
        heat.kill()
        heat.wait()
    assert shm_orphans.sweep(db.parent)[0].startswith(f"moved {db}")


def test_a_file_no_run_uses_is_removed(tmp_path: Path) -> None:
    work, db = _run(tmp_path, "a", _dead_owner())
    work.clear_run()  # a teardown cut short between the wipe and the record
    assert shm_orphans.sweep(db.parent) == [f"removed {db}: no run of {work.root} uses it"]
    assert list(db.parent.iterdir()) == [] and not work.moved_db.exists()


@pytest.mark.parametrize("note", ["none", "another heat-dir"])
def test_an_unnamed_file_is_removed_only_once_it_is_old(tmp_path: Path, note: str) -> None:
    work, db = _run(tmp_path, "a", _dead_owner(), note=False)
    if note != "none":  # a stray note naming a heat-dir of another token is not believed
        shm_orphans.note_path(db).write_text(str(tmp_path / "elsewhere"))
    assert shm_orphans.sweep(db.parent) == [] and db.exists()
    _age(db, shm_orphans.GRACE + 5)
    assert shm_orphans.sweep(db.parent) == [
        f"removed {db}: no heat-dir recorded for it and no process uses it"]
    assert list(db.parent.iterdir()) == [] and not work.moved_db.exists()


def test_the_callers_own_heat_dir_links_and_other_names_are_skipped(tmp_path: Path) -> None:
    work, db = _run(tmp_path, "a", _dead_owner())
    other = db.with_name("tripleo-flow-heat-pod-0123456789.sqlite")
    other.write_bytes(b"x")
    link = db.with_name("tripleo-flow-heat-abcdefabcd.sqlite")
    link.symlink_to(db)
    _age(other, 600)
    assert shm_orphans.sweep(db.parent, skip=work.token) == []
    assert db.exists() and other.exists() and link.is_symlink()


def test_a_container_heat_without_owner_is_left_alone(tmp_path: Path) -> None:
    work, db = _run(tmp_path, "a", None)
    record = work.read_run() or {}
    work.write_run({**record, "heat_type": "container"})
    assert shm_orphans.sweep(db.parent) == [] and db.exists()
