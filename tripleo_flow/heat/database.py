"""The database port of a launched Heat: create, dump, restore, wipe.

Two adapters implement :class:`HeatDatabase`: :mod:`.db_sqlite` (a file on a
fast directory) and :mod:`.db_mariadb` (a database and user of their own on a
MariaDB server).  A dump is written beside its target and renamed into place
only once it has been checked, so a failed dump raises and never leaves an
empty or partial ``heat-db-dump.sql`` behind.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Protocol

from tripleo_flow import exceptions

#: How each kind of dump starts (mariadb-dump may put its sandbox comment first).
_DUMP_STARTS = {"sqlite": (b"BEGIN TRANSACTION;", b"PRAGMA foreign_keys=OFF;"),
                "mariadb": (b"-- MariaDB dump", b"-- MySQL dump", b"/*M!999999")}


class HeatDatabase(Protocol):
    """One Heat database (the launcher owns it from create to wipe)."""

    kind: str

    @property
    def url(self) -> str:
        """The SQLAlchemy URL heat.conf uses."""

    def exists(self) -> bool:
        """Whether the database is there (a run is on, or crashed)."""

    def create(self) -> None:
        """Create the empty database (replacing what is there)."""

    def wipe(self) -> None:
        """Remove the database (and its user); safe when it is already gone."""

    def dump(self, path: Path) -> None:
        """Write a checked, restorable SQL dump to ``path`` (0600)."""

    def restore(self, path: Path) -> None:
        """Load the dump at ``path`` into the (just created) database."""

    def copy_of(self, template: Path) -> bool:
        """Make this just created database a copy of ``template`` (an empty schema kept
        by :meth:`keep_copy`); False, the database left empty, when it cannot."""

    def keep_copy(self, template: Path) -> None:
        """Keep this database (an empty schema) at ``template``; nothing on failure."""

    def keep_ids_unique(self) -> None:
        """Make sure no row id is ever handed out twice (run after db_sync)."""

    def engine_ids(self) -> set[str]:
        """Ids of the rows heat-engine writes to ``service`` once it listens."""

    def schema_revisions(self) -> set[str]:
        """The alembic revisions the schema is at (empty: none, or unreadable)."""

    def record(self) -> dict[str, Any]:
        """What the run record needs to find this database again."""

    def read(self, *queries: tuple[str, tuple[Any, ...]]) -> list[list[tuple[Any, ...]]]:
        """The rows of each ``(query, args)`` (``?`` placeholders), all read in one
        read-only transaction (one snapshot of the database).

        :raises HeatError: the database cannot be read
        """


#: ``revision = '...'`` and ``down_revision = ...`` (None, a name or a tuple of names)
#: in an alembic migration file, with or without a type annotation.
_REVISION_LINE = re.compile(r"^(down_revision|revision)\s*(?::[^=\n]*)?=\s*(.+)$",
                            re.MULTILINE)
_NAME = re.compile(r"""['"](\w+)['"]""")


def schema_heads(venv: Path) -> set[str]:
    """The head revisions of the schema ``heat-manage db_sync`` of the Heat virtualenv
    ``venv`` makes (read from its alembic migration files); empty when none are found."""
    revisions: set[str] = set()
    below: set[str] = set()
    for migration in venv.glob("lib/python3*/site-packages/heat/db/migrations/versions/*.py"):
        for key, value in _REVISION_LINE.findall(migration.read_text(errors="replace")):
            (revisions if key == "revision" else below).update(_NAME.findall(value))
    return revisions - below


def tmp_path(path: Path) -> Path:
    """Where a dump is written before it is checked and renamed to ``path``."""
    return path.with_name(f".{path.name}.partial")


def dump_kind(path: Path) -> str | None:
    """``sqlite`` or ``mariadb``: which database wrote the dump at ``path`` (from its
    first bytes); None when neither is recognised."""
    with open(path, "rb") as dump:
        head = dump.read(256).lstrip()
    for kind, starts in _DUMP_STARTS.items():
        if head.startswith(starts):
            return kind
    return None


def check_dump_kind(path: Path, kind: str) -> None:
    """Refuse, before anything is loaded, a dump another kind of database wrote.

    :raises DumpKindMismatch: naming both kinds and what to do.
    """
    found = dump_kind(path)
    if found is not None and found != kind:
        raise exceptions.DumpKindMismatch(str(path), found, kind)
