"""Move a killed deploy's Heat SQLite database off the tmpfs, into its heat-launcher dir.

An owned launch keeps Heat's SQLite file in ``/dev/shm`` (fast commits), with every
password of the stack in it.  When the owner dies (``kill -9`` of a deploy), the file
would stay there, in memory, until the next launch of the same heat-dir.  So such a
launch also starts a :mod:`.tether` watcher (``--on-close``) that runs this module once
the owner is gone::

    python -P -m tripleo_flow.heat.db_move --heat-dir ROOT --db PATH --started-at STAMP

It waits until no Heat process of the heat-dir runs and no process holds the
database's files open (heat-all is killed by its own tether), then, holding the
heat-dir's lock and only while ``run.json`` still describes the launch it watches,
copies the files (the database and its journal) to ``heat-db.sqlite`` in the
heat-launcher directory (mode 0600) and removes them from the tmpfs.  The next launch
(a resumed deploy) finds the database there when the recorded path is gone.  It
imports only the process and heat-dir helpers: it starts in a fraction of a second.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

from tripleo_flow import exceptions
from tripleo_flow.heat import process
from tripleo_flow.heat.workdir import HeatDir

#: The files of one SQLite database: its own, its rollback journal, its write-ahead log.
SUFFIXES = ("", "-journal", "-wal")
#: Files SQLite rebuilds (never moved, only removed).
SCRATCH = ("-shm",)
FILE_MODE = 0o600


def holders(paths: set[str]) -> list[int]:
    """Processes (other than this one) with one of ``paths`` open."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fds = os.listdir(entry / "fd")
        except OSError:  # gone, or not ours to look at
            continue
        for fd in fds:
            try:
                if os.readlink(entry / "fd" / fd) in paths:
                    found.append(int(entry.name))
                    break
            except OSError:
                continue
    return found


def move(source: Path, target: Path) -> list[str]:
    """Copy ``source``'s files to ``target``'s names (fsynced, 0600), then remove
    them: the database file first, so that a move cut short leaves either the
    source whole or the copy whole.  Returns the names moved."""
    for suffix in (*SUFFIXES, *SCRATCH):  # a stale journal must not meet a new file
        with contextlib.suppress(FileNotFoundError):
            Path(f"{target}{suffix}").unlink()
    moved = []
    for suffix in SUFFIXES:
        src = Path(f"{source}{suffix}")
        if not src.exists():
            continue
        partial = target.with_name(f".{target.name}{suffix}.partial")
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "wb") as out, src.open("rb") as data:
            while chunk := data.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, f"{target}{suffix}")
        moved.append(src.name)
    for suffix in (*SUFFIXES, *SCRATCH):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{source}{suffix}").unlink()
    return moved


def _still_ours(work: HeatDir, db: Path, started_at: str) -> bool:
    """Whether ``run.json`` still describes the launch this watcher was started for."""
    try:
        record = work.read_run()
    except exceptions.HeatError:
        return False
    database = (record or {}).get("database")
    return (record is not None and record.get("started_at") == started_at
            and isinstance(database, dict) and database.get("path") == str(db))


def run(root: Path, db: Path, started_at: str, timeout: float) -> str:
    """Move ``db`` of the launch ``started_at`` of heat-launcher dir ``root`` once
    nothing holds it; what was done (for the watcher's log)."""
    work = HeatDir(root)
    watched = {f"{db}{suffix}" for suffix in (*SUFFIXES, *SCRATCH)}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not db.exists():
            return f"{db} is gone: nothing to move"
        if not process.find(str(work.conf_file)) and not holders(watched):
            try:
                with work.locked():
                    if not _still_ours(work, db, started_at):
                        return f"{work.run_file} names another launch: {db} left alone"
                    moved = move(db, work.moved_db)
                    return f"moved {', '.join(moved)} to {work.moved_db}"
            except exceptions.HeatRunning:
                pass  # a launch or kill is at work: look again
        time.sleep(0.1)
    return f"{db} still held open after {timeout:.0f} s: left where it is"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tripleo_flow.heat.db_move")
    parser.add_argument("--heat-dir", required=True, type=Path)
    parser.add_argument("--db", required=True, type=Path)
    parser.add_argument("--started-at", required=True)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    said = run(args.heat_dir, args.db, args.started_at, args.timeout)
    sys.stdout.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {said}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
