"""A SQLite executions database's tables: made once per process, then repeated.

Opening an executions database creates or checks its tables: TaskFlow's tables, then
the engine's own (:mod:`.side_tables`: each a ``create_all`` with its checks, some
reading their columns).  On SQLite that costs about 5 ms on a new file and 4 ms on one
made before, paid by every process that opens one, and by a process that opens many
(a test run: thousands) for each of them.

So the statements SQLite keeps for the tables a process made on a new, empty file
(``sqlite_master``) are kept for the rest of the process.  A later database of this
process that is empty gets the same statements, in one transaction; one that holds
exactly those statements already is up to date and is left as it is.  Any other (made
by an older release, to be brought up to date; not SQLite) takes the full way,
:meth:`~.execution_backend.ExecutionBackend.get_connection`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

#: The statements of the tables this process made on an empty file, in the order
#: SQLite recorded them (tables before their indexes); None until then.
_KEPT: tuple[str, ...] | None = None
_LOCK = threading.Lock()

#: What :func:`prepare` found.
READY = "ready"  # the database holds the kept tables (found, or made now)
EMPTY = "empty"  # an empty database: the full way makes them, then :func:`keep`
OTHER = "other"  # anything else (another schema, another database kind)

_STATEMENTS = ("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
               "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid")


@contextlib.contextmanager
def _raw(engine: sa.engine.Engine) -> Iterator[Any]:
    """A DBAPI connection of ``engine``'s pool, given back afterwards."""
    raw = engine.raw_connection()
    try:
        yield raw
    finally:
        raw.close()


def _statements(cursor: Any) -> tuple[str, ...]:
    return tuple(row[0] for row in cursor.execute(_STATEMENTS).fetchall())


def prepare(engine: sa.engine.Engine) -> str:
    """:data:`READY` when ``engine``'s SQLite database now holds the tables this process
    made before (an empty one is given them here), else :data:`EMPTY` or
    :data:`OTHER`: the caller then makes or upgrades them its full way."""
    if engine.dialect.name != "sqlite":
        return OTHER
    try:
        return _prepare(engine, _KEPT)
    except (sa.exc.SQLAlchemyError, engine.dialect.loaded_dbapi.Error):
        return OTHER  # the full way then says what is wrong with it, in its words


def _prepare(engine: sa.engine.Engine, kept: tuple[str, ...] | None) -> str:
    with _raw(engine) as raw:
        cursor = raw.cursor()
        try:
            found = _statements(cursor)
            if found and found == kept:
                return READY
            if found or kept is None:
                return EMPTY if not found else OTHER
            # Another process may be making them at the same time: the write lock
            # first, then a second look.
            cursor.execute("BEGIN IMMEDIATE")
            try:
                if _statements(cursor):
                    raw.rollback()
                    return OTHER
                for statement in kept:
                    cursor.execute(statement)
                raw.commit()
            except BaseException:
                raw.rollback()
                raise
            return READY
        finally:
            cursor.close()


def keep(engine: sa.engine.Engine) -> None:
    """Keep the statements of the tables just made on ``engine``'s database (empty
    before: :data:`EMPTY`) for the databases this process opens next."""
    global _KEPT
    with _LOCK:
        if _KEPT is not None:
            return
        try:
            with _raw(engine) as raw:
                cursor = raw.cursor()
                try:
                    _KEPT = _statements(cursor)
                finally:
                    cursor.close()
        except (sa.exc.SQLAlchemyError, engine.dialect.loaded_dbapi.Error):
            pass  # nothing kept: the next new file is made the full way too


def forget() -> None:
    """Keep nothing (the next empty database is made the full way)."""
    global _KEPT
    with _LOCK:
        _KEPT = None


__all__ = ["EMPTY", "OTHER", "READY", "forget", "keep", "prepare"]
