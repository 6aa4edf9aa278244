"""Heat SQLite files left on ``/dev/shm`` by runs whose owner and watcher both died.

An owned native launch keeps Heat's database (every password of the stack) in
``/dev/shm/tripleo-flow-heat-<token>.sqlite`` and relies on its :mod:`.db_move`
watcher to move it home when the owner dies.  When the watcher is killed too (a
killed session, ``kill -9`` of the whole group), the file stayed in memory until
the next launch of that very heat-dir, which may never come.

So every launch writes, beside the file, a note naming its heat-launcher dir
(``<file>.heat-dir``, 0600, removed with the database), and every launch first runs
:func:`sweep` over the tmpfs: a file of this user that no process holds open and
no Heat process of its heat-dir uses is

* moved into its heat-dir (``heat-db.sqlite``, as the watcher would have done) when
  the note names a heat-dir whose run record still describes it and whose owner,
  Heat and watcher are all gone (a launch without owner: only a native heat-all,
  whose process is seen from here): the check and the move hold that heat-dir's
  lock, so a launch or kill at work there is never raced (the file is left alone);
* removed when its heat-dir is known but no run of it uses the file any more (a
  teardown cut short), or when no note names a heat-dir (older launches) and the
  file has not changed for :data:`GRACE` seconds.

A live Heat (its owner alive, or heat-all/heat-manage running on its heat.conf, or
the file held open) is never touched, nor another user's file, nor a link.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.heat import db_move, process
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.workspace import owner

LOG = logging.getLogger(__name__)
#: The name of a launch's SQLite file on the tmpfs (the token of its heat-dir).
_NAME = re.compile(r"^tripleo-flow-heat-([0-9a-f]{10})\.sqlite$")
#: Seconds a file nobody names must stay unchanged before it is removed.
GRACE = 60.0


def note_path(db: Path) -> Path:
    """The note beside ``db`` naming its heat-launcher dir."""
    return Path(f"{db}{db_move.NOTE_SUFFIX}")


def write_note(db: Path, work: HeatDir) -> None:
    """Record (0600, atomically) that ``db`` belongs to heat-launcher dir ``work``."""
    note = note_path(db)
    tmp = note.with_name(f".{note.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(str(work.root))
    os.replace(tmp, note)


def _own_file(path: Path) -> os.stat_result | None:
    """``path``'s status when it is a regular file (not a link) of this user."""
    try:
        info = path.lstat()
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() else None


def _noted_dir(db: Path, token: str) -> HeatDir | None:
    """The heat-dir ``db``'s note names, when it is one of this user's, exists and
    its token is the one in ``db``'s name (a stray note is not believed)."""
    note = note_path(db)
    if _own_file(note) is None:
        return None
    try:
        work = HeatDir(note.read_text(errors="replace").strip())
    except (OSError, ValueError):
        return None
    return work if work.token == token and work.root.is_dir() else None


def _live_tokens() -> set[str]:
    """The tokens of the heat-dirs a process runs Heat from (its ``heat.conf``)."""
    tokens = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            for arg in process.cmdline(int(entry.name)):
                if arg.endswith(f"{HeatDir.dir_name}/heat.conf"):
                    tokens.add(HeatDir(Path(arg).parent).token)
    return tokens


def _remove(db: Path) -> None:
    for suffix in (*db_move.SUFFIXES, *db_move.SCRATCH, db_move.NOTE_SUFFIX):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{db}{suffix}").unlink()


def _watched(record: dict[str, Any]) -> bool:
    """Whether the record's database watcher still runs (it moves the file itself)."""
    watcher = record.get("db_watcher")
    return isinstance(watcher, dict) and process.is_running(
        watcher.get("pid"), str(watcher.get("label") or "\0"))


def _record(work: HeatDir) -> dict[str, Any]:
    try:
        return work.read_run() or {}
    except exceptions.HeatError:
        return {}


def _lives(work: HeatDir, record: dict[str, Any]) -> bool:
    """Whether the owner, a Heat or the database watcher of ``work``'s run lives."""
    return (owner.liveness(record.get("owner")) == owner.RUNNING
            or bool(process.find(str(work.conf_file))) or _watched(record))


def _home(db: Path, work: HeatDir) -> str | None:
    """Move ``db`` into ``work`` (or remove it) when nothing of its run lives."""
    if _lives(work, _record(work)):
        # Looked at without the lock first: the lock of a heat-dir whose run lives is
        # never taken, so its own launch or kill is never refused because of a sweep.
        return None
    try:
        with work.locked():
            record = _record(work)
            database = record.get("database")
            if not isinstance(database, dict) or database.get("path") != str(db):
                _remove(db)
                return f"removed {db}: no run of {work.root} uses it"
            alive = owner.liveness(record.get("owner"))
            if _lives(work, record):
                return None
            if alive != owner.GONE and record.get("heat_type") != "native":
                return None  # no owner to go by, and a Heat not seen from here for sure
            db_move.move(db, work.moved_db)
            return f"moved {db}, left by a killed run, to {work.moved_db}"
    except exceptions.Conflict:  # a launch or kill is at work there
        return None


def _one(db: Path, token: str, grace: float) -> str | None:
    info = _own_file(db)
    if info is None:
        return None
    names = {f"{db}{suffix}" for suffix in (*db_move.SUFFIXES, *db_move.SCRATCH)}
    if token in _live_tokens() or db_move.holders(names):
        return None
    work = _noted_dir(db, token)
    if work is not None:
        return _home(db, work)
    if time.time() - info.st_mtime < grace:
        return None
    _remove(db)
    return f"removed {db}: no heat-dir recorded for it and no process uses it"


def sweep(base: Path, skip: str | None = None, grace: float = GRACE) -> list[str]:
    """Move home or remove the orphaned Heat SQLite files in ``base`` (see the module
    docstring), except the one of token ``skip`` (the caller's own heat-dir, which its
    launch cleans up itself); what was done, one line each."""
    try:
        candidates = sorted(base.iterdir())
    except OSError:
        return []
    done = []
    for path in candidates:
        match = _NAME.match(path.name)
        if not match or match.group(1) == skip:
            continue
        try:
            said = _one(path, match.group(1), grace)
        except OSError as exc:
            LOG.warning("Could not clean up %s: %s", path, exc)
            continue
        if said:
            done.append(said)
    return done
