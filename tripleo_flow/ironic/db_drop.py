"""Remove a killed owner's Ironic database from the tmpfs.

An owned launch (a test session, a benchmark: ``owned_by``) keeps Ironic's SQLite
file in ``/dev/shm`` while it runs, with the nodes' BMC credentials in it.  The
launcher never keeps the database of a run whose owner was killed (the next launch
drops it; the node state that lasts is ``ironic.sqlite``, saved in the
ironic-launcher directory by the last clean kill), so once the owner is gone nothing
of that file is worth keeping.  Such a launch therefore starts a
:mod:`tripleo_flow.heat.tether` watcher (``--on-close``) that runs this module once
the owner is gone::

    python -P -m tripleo_flow.ironic.db_drop --ironic-dir ROOT --db PATH --started-at STAMP

It waits until no Ironic of the directory runs and no process holds the database's
files open (Ironic is killed by its own tether), then, holding the directory's lock
and only while ``run.json`` still describes the launch it watches, removes the files
(:func:`tripleo_flow.heat.db_move.when_released`).  The next launch then finds the
killed run's leftovers as before, with no database left to drop.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tripleo_flow.heat import db_move, process
from tripleo_flow.heat.db_sqlite import SqliteDatabase
from tripleo_flow.ironic.workdir import IronicDir

#: The files of one SQLite database (what is removed).
SUFFIXES = (*db_move.SUFFIXES, *db_move.SCRATCH)


def run(root: Path, db: Path, started_at: str, timeout: float) -> str:
    """Remove ``db`` of the launch ``started_at`` of ironic-launcher dir ``root`` once
    nothing holds it; what was done (for the watcher's log)."""
    work = IronicDir(root)
    watched = {f"{db}{suffix}" for suffix in SUFFIXES}

    def act() -> str:
        gone = [Path(name).name for name in sorted(watched) if Path(name).exists()]
        SqliteDatabase(db).wipe()
        return f"removed {', '.join(gone)}"

    return db_move.when_released(
        work, db, started_at,
        lambda: bool(process.find(str(work.conf_file)) or db_move.holders(watched)),
        lambda record: record.get("database"), act, timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tripleo_flow.ironic.db_drop")
    parser.add_argument("--ironic-dir", required=True, type=Path)
    parser.add_argument("--db", required=True, type=Path)
    parser.add_argument("--started-at", required=True)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    said = run(args.ironic_dir, args.db, args.started_at, args.timeout)
    sys.stdout.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {said}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
