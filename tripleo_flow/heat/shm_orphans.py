"""Heat and Ironic data left on ``/dev/shm`` by runs whose owner and watcher both died.

An owned launch keeps secrets on the tmpfs while it runs: a native Heat's SQLite
file (``tripleo-flow-heat-<token>.sqlite``), the private MariaDB data and RabbitMQ
files of heat type ``processes`` (the directory ``tripleo-flow-heat-<token>-services``),
the local Ironic's SQLite file with the nodes' BMC credentials
(``tripleo-flow-ironic-<token>.sqlite``, :mod:`tripleo_flow.ironic.launcher`).  Each
relies on its watcher (:mod:`.db_move`, :mod:`tripleo_flow.ironic.db_drop`) to move it
home or remove it when the owner dies.  When the watcher is killed too (a killed
session, ``kill -9`` of the whole group), it stayed in memory until the next launch of
that very directory, which may never come.

So every launch writes, beside it, a note naming its launcher dir (``<name>.heat-dir``,
0600, removed with it), and every launch first runs :func:`sweep` over the tmpfs for
its kinds (:data:`HEAT_KINDS`; Ironic's own): an entry of this user that no process
holds open or names and no process of its launcher dir (``--config-file`` its conf)
uses is

* settled as its watcher would have done (Heat's SQLite file moved into its heat-dir,
  ``heat-db.sqlite``; the MariaDB data moved to ``heat-mariadb`` and the rest removed;
  Ironic's database removed: a killed owner's is never kept) when the note names a
  launcher dir whose run record still describes it and whose owner, processes and
  watcher are all gone (a launch without owner: only a native heat-all, whose process
  is seen from here): the check and the move hold that dir's lock, so a launch or kill
  at work there is never raced (the entry is left alone);
* removed when its launcher dir is known but no run of it uses it any more (a
  teardown cut short), or when no note names one (older launches) and it has not
  changed for :data:`GRACE` seconds.

A live run (its owner alive, its processes running, the file held open) is never
touched, nor another user's entry, nor a link.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.heat import db_move, process
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.workspace import owner

LOG = logging.getLogger(__name__)
#: Seconds an entry nobody names must stay unchanged before it is removed.
GRACE = 60.0


@dataclass(frozen=True)
class Kind:
    """One kind of entry a launch leaves on the tmpfs, and how its watcher settles it."""

    #: The entry's name; group 1 is the token of its launcher dir.
    name: re.Pattern[str]
    #: The launcher dir class (its conf file, lock and run record).
    workdir: type[HeatDir]
    #: Where a run record names the entry it uses.
    recorded: Callable[[dict[str, Any]], object]
    #: What the watcher would have done (under the dir's lock); what was done.
    settle: Callable[[Path, HeatDir], str]
    #: Whether a run without an owner may be settled (its only process seen from here).
    unowned: Callable[[dict[str, Any]], bool] = lambda record: False
    #: A directory (removed whole) rather than a SQLite file and its journals.
    directory: bool = False
    #: What its launcher dir is called in messages.
    label: str = "heat-dir"


def _move_db(db: Path, work: HeatDir) -> str:
    db_move.move(db, work.moved_db)
    return f"moved {db}, left by a killed run, to {work.moved_db}"


def _move_services(services: Path, work: HeatDir) -> str:
    return f"{db_move.settle_services(services, work)}, left by a killed run"


#: Heat's SQLite file (native) and the private servers' directory (``processes``).
HEAT_KINDS = (
    Kind(re.compile(r"^tripleo-flow-heat-([0-9a-f]{10})\.sqlite$"), HeatDir, db_move.db_path,
         _move_db, unowned=lambda record: record.get("heat_type") == "native"),
    Kind(re.compile(r"^tripleo-flow-heat-([0-9a-f]{10})-services$"), HeatDir,
         db_move.services_root, _move_services, directory=True),
)


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


def _own_file(path: Path, directory: bool = False) -> os.stat_result | None:
    """``path``'s status when it is a regular file (or, with ``directory``, a
    directory), not a link, of this user."""
    try:
        info = path.lstat()
    except OSError:
        return None
    right = stat.S_ISDIR(info.st_mode) if directory else stat.S_ISREG(info.st_mode)
    return info if right and info.st_uid == os.geteuid() else None


def _noted_dir(db: Path, token: str, kind: Kind) -> HeatDir | None:
    """The launcher dir ``db``'s note names, when it is one of this user's, exists and
    its token is the one in ``db``'s name (a stray note is not believed)."""
    note = note_path(db)
    if _own_file(note) is None:
        return None
    try:
        work = kind.workdir(note.read_text(errors="replace").strip())
    except (OSError, ValueError):
        return None
    return work if work.token == token and work.root.is_dir() else None


def _live_tokens(kind: Kind) -> set[str]:
    """The tokens of the launcher dirs a process runs from (its conf file)."""
    conf = kind.workdir("/").conf_file
    tail = f"{conf.parent.name}/{conf.name}"
    tokens = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            for arg in process.cmdline(int(entry.name)):
                if arg.endswith(tail):
                    tokens.add(kind.workdir(Path(arg).parent).token)
    return tokens


def _in_use(path: Path, kind: Kind) -> bool:
    """Whether a process holds ``path``'s files open or names the directory."""
    if kind.directory:
        return bool(process.find_naming(str(path)))
    return bool(db_move.holders({f"{path}{suffix}"
                                 for suffix in (*db_move.SUFFIXES, *db_move.SCRATCH)}))


def _remove(path: Path, kind: Kind) -> None:
    """Remove ``path`` (its journals, or the whole directory) and its note."""
    suffixes: tuple[str, ...] = (*db_move.SUFFIXES, *db_move.SCRATCH)
    if kind.directory:
        shutil.rmtree(path, ignore_errors=True)
        suffixes = ()
    for suffix in (*suffixes, db_move.NOTE_SUFFIX):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()


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


def _home(db: Path, work: HeatDir, kind: Kind) -> str | None:
    """Settle ``db`` (move it into ``work``, or remove it) when nothing of its run lives."""
    if _lives(work, _record(work)):
        # Looked at without the lock first: the lock of a heat-dir whose run lives is
        # never taken, so its own launch or kill is never refused because of a sweep.
        return None
    try:
        with work.locked():
            record = _record(work)
            if kind.recorded(record) != str(db):
                _remove(db, kind)
                return f"removed {db}: no run of {work.root} uses it"
            alive = owner.liveness(record.get("owner"))
            if _lives(work, record):
                return None
            if alive != owner.GONE and not kind.unowned(record):
                return None  # no owner to go by, and a process not seen from here for sure
            return kind.settle(db, work)
    except exceptions.Conflict:  # a launch or kill is at work there
        return None


def _one(db: Path, token: str, grace: float, kind: Kind) -> str | None:
    info = _own_file(db, kind.directory)
    if info is None:
        return None
    if token in _live_tokens(kind) or _in_use(db, kind):
        return None
    work = _noted_dir(db, token, kind)
    if work is not None:
        return _home(db, work, kind)
    if time.time() - info.st_mtime < grace:
        return None
    _remove(db, kind)
    return f"removed {db}: no {kind.label} recorded for it and no process uses it"


def sweep(base: Path, skip: str | None = None, grace: float = GRACE,
          kinds: tuple[Kind, ...] = HEAT_KINDS) -> list[str]:
    """Settle or remove the orphaned entries of ``kinds`` in ``base`` (see the module
    docstring), except those of token ``skip`` (the caller's own launcher dir, which
    its launch cleans up itself); what was done, one line each."""
    try:
        candidates = sorted(base.iterdir())
    except OSError:
        return []
    done = []
    for path in candidates:
        found = next(((k, m) for k in kinds if (m := k.name.match(path.name))), None)
        if found is None or found[1].group(1) == skip:
            continue
        try:
            said = _one(path, found[1].group(1), grace, found[0])
        except OSError as exc:
            LOG.warning("Could not clean up %s: %s", path, exc)
            continue
        if said:
            done.append(said)
    return done
