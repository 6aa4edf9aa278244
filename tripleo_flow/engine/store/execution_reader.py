"""A read-only reader of the executions database on a SQLite file.

``tripleo-flow execution list`` and ``execution show`` only read: building
TaskFlow's persistence backend for that (SQLAlchemy, alembic, TaskFlow's models,
the tables' checks and creation) cost most of a second of CPU before the first
row.  :class:`ExecutionReader` reads the same rows the backend writes
(:mod:`.execution_backend`: ``flowdetails`` of the logbook ``tripleo-flow``, and
the ``tripleo_flow_cancels`` and ``tripleo_flow_pause_requests`` side tables) with
the standard library's ``sqlite3`` over a read-only connection, and makes the same
records of them (:mod:`.execution_records`, :mod:`.cancel_views`,
:mod:`.pause_views`), so a listing reads as the store's does.

It writes nothing: it never creates the file, its tables or a missing column.
:func:`open_file` gives no reader for a database that does not exist yet or
lacks a table or column the reader needs (made by an older release): the store
opens it then, creating or upgrading what is missing, as before.  A database
that another process writes meanwhile is read as of one moment: with SQLite's
WAL journal (the backend's) a reader never waits for a writer, and each read
runs in one transaction (a page and the row of its marker agree).  Any other
database (``[workflows] connection`` to MariaDB) is read by the store alone.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.engine.store import cancel_views
from tripleo_flow.engine.store.execution_pages import (
    ACTION_RUN,
    check_request,
    marker_not_found,
    within,
)
from tripleo_flow.engine.store.execution_records import BOOK_UUID, Execution, to_execution
from tripleo_flow.engine.store.states import CANCELLED

#: The columns the reader reads, by table.  A database lacking one is left to the
#: store, which creates or upgrades its tables (:func:`open_file`).
SCHEMA = {
    "flowdetails": ("uuid", "name", "state", "meta", "created_at", "parent_uuid"),
    "tripleo_flow_cancels": ("execution_id", "state_info", "cancelled_at", "state",
                             "output"),
    "tripleo_flow_pause_requests": ("execution_id", "requested_at"),
}

#: How long a read waits for a lock (s): as the backend's ``busy_timeout``.
BUSY_TIMEOUT = 30.0

#: Ids asked per ``IN (...)`` (under SQLite's limit of bound parameters).
_CHUNK = 500


@dataclass(frozen=True)
class FlowRow:
    """A flow detail as stored: what :func:`~.execution_records.to_execution` reads."""

    uuid: str
    name: str
    state: str | None
    meta: dict[str, Any]


def _flow(row: Sequence[Any]) -> FlowRow:
    """A ``(uuid, name, state, meta)`` row; its meta decoded as TaskFlow's JSON type
    decodes it (NULL reads as ``{}``, as TaskFlow's models make it)."""
    uuid, name, state, meta = row
    return FlowRow(uuid, name, state, (json.loads(meta) if meta is not None else None) or {})


def _escaped(text: str) -> str:
    """``text`` as a literal part of a ``LIKE ... ESCAPE '/'`` pattern."""
    return text.replace("/", "//").replace("%", "/%").replace("_", "/_")


def _connect(path: Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite file ``path`` (never creates it)."""
    return sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True,
                           timeout=BUSY_TIMEOUT, isolation_level=None)


def open_url(url: str | None, default: Path) -> ExecutionReader | None:
    """A reader of the executions database at ``url`` (``[workflows] connection``; the
    SQLite file ``default`` when empty) when it is a SQLite file :func:`open_file`
    reads; None for any other database (MariaDB, memory, a URL with options)."""
    if not url:
        return open_file(default)
    prefix = "sqlite:///"
    path = url[len(prefix):]
    if url.startswith(prefix) and "?" not in url and path not in ("", ":memory:"):
        return open_file(Path(path))
    return None


def open_file(path: Path) -> ExecutionReader | None:
    """A reader of the executions database in the SQLite file ``path``; None when
    the file does not exist, is no database this reader can read, or lacks a table
    or column it reads (the store then opens it, as before)."""
    if not path.is_file():
        return None
    try:
        with contextlib.closing(_connect(path)) as db:
            for table, columns in SCHEMA.items():
                have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                if not have.issuperset(columns):
                    return None
    except sqlite3.Error:
        return None
    return ExecutionReader(path)


class ExecutionReader:
    """The reads of :class:`~.executions.ExecutionStore` that listing and showing
    executions make (:meth:`page`, :meth:`get`, and what :mod:`.pause_views` asks),
    on a SQLite file, read-only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: The cancels (:meth:`_Cancels.of`), as the store's ``cancels``.
        self.cancels = _Cancels(self)
        #: The pause requests (:meth:`_PauseRequests.pending`), as the store's.
        self.pause_requests = _PauseRequests(self)

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection in one read transaction (one moment of the database).

        :raises BackendUnavailable: the database cannot be read
        """
        try:
            with contextlib.closing(_connect(self.path)) as db:
                db.execute("BEGIN")
                yield db
        except sqlite3.Error as exc:
            raise exceptions.BackendUnavailable(
                f"The executions database failed: {exc}") from exc

    def flow_detail(self, execution_id: str, lazy: bool = True) -> FlowRow:
        """The stored flow detail of ``execution_id`` (its atoms are never read).

        :raises ExecutionNotFound: no execution has that id
        """
        with self.read() as db:
            row = db.execute("SELECT uuid, name, state, meta FROM flowdetails WHERE uuid = ?",
                             (execution_id,)).fetchone()
        if row is None:
            raise exceptions.ExecutionNotFound(execution_id)
        return _flow(row)

    def raw(self, execution_id: str) -> Execution:
        """An execution's record as its engine wrote it (a cancel not applied)."""
        return to_execution(self.flow_detail(execution_id))

    def get(self, execution_id: str) -> Execution:
        """An execution's record (CANCELLED once it was cancelled)."""
        return cancel_views.shown(self.cancels, [self.raw(execution_id)])[0]

    def page(self, limit: int, marker: str | None = None, workflow: str | None = None,
             descending: bool = False, max_bytes: int = 0) -> tuple[list[Execution], bool]:
        """Up to ``limit`` executions after the one whose id is ``marker``, oldest
        first (newest first with ``descending``), and whether more follow; with
        ``max_bytes``, fewer when their records are larger: the page
        :func:`~.execution_pages.flow_page` reads, in the same order (sizes first).

        :raises InvalidInput: ``limit`` below 1, or ``marker`` is no execution id
        :raises NotFound: no execution has the id ``marker``
        """
        check_request(limit, marker)
        where, args = ["parent_uuid = ?"], [BOOK_UUID]
        if workflow:
            # a short name is no part of an action run's name (action:heat.launch)
            where.append("(name = ? OR (name LIKE ? ESCAPE '/' AND name NOT LIKE ? ESCAPE '/'))")
            args += [workflow, "%" + _escaped("." + workflow), _escaped(ACTION_RUN) + "%"]
        order, beyond = ("DESC", "<") if descending else ("ASC", ">")
        with self.read() as db:
            if marker is not None:
                after = db.execute("SELECT created_at, uuid FROM flowdetails "
                                   "WHERE parent_uuid = ? AND uuid = ?",
                                   (BOOK_UUID, marker)).fetchone()
                if after is None:
                    raise marker_not_found(marker)
                where.append(f"(created_at {beyond} ? OR "
                             f"(created_at = ? AND uuid {beyond} ?))")
                args += [after[0], after[0], after[1]]
            chosen = f"FROM flowdetails WHERE {' AND '.join(where)} " \
                f"ORDER BY created_at {order}, uuid {order} LIMIT ?"
            if max_bytes:
                sizes = db.execute(f"SELECT uuid, COALESCE(LENGTH(meta), 0) {chosen}",
                                   (*args, limit + 1)).fetchall()
                ids = within(sizes, limit, max_bytes)
                more = len(sizes) > len(ids)
                marks = ", ".join("?" * len(ids))
                found = {row[0]: row for row in db.execute(
                    f"SELECT uuid, name, state, meta FROM flowdetails WHERE uuid IN ({marks})",
                    ids).fetchall()} if ids else {}
                rows = [found[i] for i in ids if i in found]
            else:
                rows = db.execute(f"SELECT uuid, name, state, meta {chosen}",
                                  (*args, limit + 1)).fetchall()
                more = len(rows) > limit
                rows = rows[:limit]
        records = [to_execution(_flow(row)) for row in rows]
        return cancel_views.shown(self.cancels, records), more

    def close(self) -> None:
        """Nothing to close: each read opens and closes its own connection."""


class _Cancels:
    """The reads of :class:`~.cancels.Cancels` a reader makes."""

    def __init__(self, reader: ExecutionReader) -> None:
        self._reader = reader

    def of(self, execution_ids: Sequence[str]) -> dict[str, cancel_views.Cancel]:
        """The cancels of those of ``execution_ids`` that were cancelled."""
        if not execution_ids:
            return {}
        found = {}
        ids = list(dict.fromkeys(execution_ids))
        with self._reader.read() as db:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start:start + _CHUNK]
                for ident, info, at, state, output in db.execute(
                        "SELECT execution_id, state_info, cancelled_at, state, output "
                        "FROM tripleo_flow_cancels WHERE execution_id IN "
                        f"({', '.join('?' * len(chunk))})", chunk):
                    found[ident] = cancel_views.Cancel(
                        info, at, state or CANCELLED,
                        None if output is None else json.loads(output))
        return found


class _PauseRequests:
    """The read of :class:`~.pause_requests.PauseRequests` a reader makes."""

    def __init__(self, reader: ExecutionReader) -> None:
        self._reader = reader

    def pending(self) -> list[str]:
        """The executions a pause is asked of."""
        with self._reader.read() as db:
            return [row[0] for row in db.execute(
                "SELECT execution_id FROM tripleo_flow_pause_requests "
                "ORDER BY requested_at")]


__all__ = ["SCHEMA", "ExecutionReader", "FlowRow", "open_file", "open_url"]
