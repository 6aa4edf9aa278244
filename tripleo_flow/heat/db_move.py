"""Move a killed deploy's Heat database off the tmpfs, into its heat-launcher dir.

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
(a resumed deploy) finds the database there when the recorded path is gone.

Heat type ``processes`` keeps the data directory of its private MariaDB (with the
same passwords) and its broker's files on the tmpfs; its watcher runs with
``--services`` instead of ``--db`` and reads that directory from ``run.json`` (a
process naming it would count as one of its servers).  Once no server and no Heat of
the heat-dir runs, the MariaDB data moves to ``heat-mariadb`` in the heat-launcher
directory (0700 directories, 0600 files), where the resumed deploy starts MariaDB on
it for its dump, and the rest (the broker's files and cookie, the init file with the
admin password) is removed.  :func:`when_released` is the waiting and checking part,
for other launchers' watchers (Ironic's: :mod:`tripleo_flow.ironic.db_drop`).

It imports only the process and heat-dir helpers: it starts in a fraction of a second.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.heat import process
from tripleo_flow.heat.workdir import HeatDir

#: The files of one SQLite database: its own, its rollback journal, its write-ahead log.
SUFFIXES = ("", "-journal", "-wal")
#: Files SQLite rebuilds (never moved, only removed).
SCRATCH = ("-shm",)
#: The note beside a database on the tmpfs naming its heat-launcher dir (:mod:`.shm_orphans`).
NOTE_SUFFIX = ".heat-dir"
FILE_MODE = 0o600
DIR_MODE = 0o700


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
    for suffix in (*SUFFIXES, *SCRATCH, NOTE_SUFFIX):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{source}{suffix}").unlink()
    return moved


def copy_tree(source: Path, target: Path) -> None:
    """Copy directory ``source`` to the new directory ``target``: directories 0700,
    regular files 0600 (fsynced); sockets, links and the like are left out."""
    target.mkdir(mode=DIR_MODE)
    for entry in os.scandir(source):
        dest = target / entry.name
        if entry.is_dir(follow_symlinks=False):
            copy_tree(Path(entry.path), dest)
        elif entry.is_file(follow_symlinks=False):
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            with os.fdopen(fd, "wb") as out, open(entry.path, "rb") as data:
                while chunk := data.read(1 << 20):
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())


def move_tree(source: Path, target: Path) -> None:
    """Copy directory ``source`` to ``target`` (0700/0600) through a partial copy renamed
    into place, then remove ``source``: a move cut short leaves the source whole or the
    copy whole."""
    partial = target.with_name(f".{target.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    copy_tree(source, partial)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(partial, target)
    shutil.rmtree(source)


def when_released(work: HeatDir, path: Path, started_at: str, busy: Callable[[], bool],
                  names: Callable[[dict[str, Any]], object], act: Callable[[], str],
                  timeout: float) -> str:
    """Run ``act`` once ``path`` exists, ``busy()`` is false and, under the directory's
    lock, ``run.json`` still describes launch ``started_at`` on ``path`` (``names`` of
    the record): what was done, for the watcher's log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not path.exists():
            return f"{path} is gone: nothing to move"
        if not busy():
            try:
                with work.locked():
                    try:
                        record = work.read_run()
                    except exceptions.HeatError:
                        record = None
                    if (record is None or record.get("started_at") != started_at
                            or names(record) != str(path)):
                        return f"{work.run_file} names another launch: {path} left alone"
                    return act()
            except exceptions.Conflict:
                pass  # a launch or kill is at work: look again
        time.sleep(0.1)
    return f"{path} still held open after {timeout:.0f} s: left where it is"


def db_path(record: dict[str, Any]) -> object:
    database = record.get("database")
    return database.get("path") if isinstance(database, dict) else None


def services_root(record: dict[str, Any]) -> object:
    services = record.get("services")
    return services.get("root") if isinstance(services, dict) else None


def run(root: Path, db: Path, started_at: str, timeout: float) -> str:
    """Move ``db`` of the launch ``started_at`` of heat-launcher dir ``root`` once
    nothing holds it; what was done (for the watcher's log)."""
    work = HeatDir(root)
    watched = {f"{db}{suffix}" for suffix in (*SUFFIXES, *SCRATCH)}

    def act() -> str:
        moved = move(db, work.moved_db)
        return f"moved {', '.join(moved)} to {work.moved_db}"

    return when_released(
        work, db, started_at,
        lambda: bool(process.find(str(work.conf_file)) or holders(watched)),
        db_path, act, timeout)


def settle_services(services: Path, work: HeatDir) -> str:
    """Move the MariaDB data of ``services`` into ``work`` and remove the rest (with the
    note naming the heat-dir beside it); what was done."""
    data = services / "mariadb"
    said = "nothing of MariaDB to move"
    if data.is_dir():
        move_tree(data, work.moved_mariadb)
        said = f"moved {data} to {work.moved_mariadb}"
    shutil.rmtree(services)
    with contextlib.suppress(FileNotFoundError):
        Path(f"{services}{NOTE_SUFFIX}").unlink()
    return f"{said}; removed {services}"


def run_services(root: Path, services: Path, started_at: str, timeout: float) -> str:
    """Move the MariaDB data of the private servers (heat type ``processes``) in
    ``services`` into heat-launcher dir ``root`` once none of them runs, and remove the
    rest (the broker's files, the init file with the admin password)."""
    work = HeatDir(root)
    return when_released(
        work, services, started_at,
        lambda: bool(process.find(str(work.conf_file)) or process.find_naming(str(services))),
        services_root, lambda: settle_services(services, work), timeout)


def _services_of(root: Path, started_at: str, timeout: float) -> str:
    """:func:`run_services` on the directory ``run.json`` names (not on the command line:
    a process naming it counts as one of the servers)."""
    work = HeatDir(root)
    try:
        record = work.read_run() or {}
    except exceptions.HeatError as exc:
        return f"{exc}: nothing moved"
    services = services_root(record)
    if record.get("started_at") != started_at or not isinstance(services, str):
        return f"{work.run_file} names another launch: nothing moved"
    return run_services(root, Path(services), started_at, timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tripleo_flow.heat.db_move")
    parser.add_argument("--heat-dir", required=True, type=Path)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--db", type=Path, help="a SQLite file of heat-all")
    where.add_argument("--services", action="store_true",
                       help="the private servers' directory run.json names (processes)")
    parser.add_argument("--started-at", required=True)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    if args.db is not None:
        said = run(args.heat_dir, args.db, args.started_at, args.timeout)
    else:
        said = _services_of(args.heat_dir, args.started_at, args.timeout)
    sys.stdout.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {said}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
