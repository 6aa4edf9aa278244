"""Persisted executions: TaskFlow's SQLAlchemy persistence, tuned for SQLite.

Every execution is one TaskFlow flow detail in the logbook ``tripleo-flow``;
its ``meta`` holds the workflow name, inputs, output, error and timestamps.
Stock TaskFlow opens a new connection and rebuilds its table objects for every
state change, writes four times per task (RUNNING, progress 0, SUCCESS,
progress 1) with a SELECT before each UPDATE, and SQLite then syncs each
commit to disk: 10-20 tasks/s.  :class:`ExecutionBackend` keeps one
connection object with its tables, pools the database connection, runs SQLite
in WAL mode with ``synchronous=NORMAL`` (a commit survives a process kill;
only a power loss may lose the last ones), and :class:`BatchingConnection`
writes once per task: the RUNNING and progress updates wait for the next
durable write (a result, a failure, a revert), which carries them in the same
transaction.  Losing a deferred RUNNING mark in a crash is harmless: the task
is then PENDING, and a resumed execution runs it again either way.  MariaDB
URLs work unchanged.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from taskflow import exceptions as tf_exc
from taskflow import states
from taskflow.persistence import models
from taskflow.persistence.backends import impl_sqlalchemy
from taskflow.types import failure

from tripleo_flow import exceptions
from tripleo_flow.core import secrets
from tripleo_flow.flows import atoms
from tripleo_flow.flows.redaction import SECRET_RESULT, Redactor

# alembic (imported by TaskFlow's persistence) logs its plugin set-up at INFO.
logging.getLogger("alembic").setLevel(logging.WARNING)

BOOK_NAME = "tripleo-flow"
#: ``meta["origin"]`` of an execution an HTTP API user started: kept for its whole
#: life, so whoever resumes it (any process, any interface) applies the same rules.
ORIGIN_API = "api"
BOOK_UUID = str(uuid.uuid5(uuid.NAMESPACE_URL, "tripleo-flow:executions"))


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


#: Atom states whose save may wait for the next durable write.
_DEFERRABLE_STATES = {states.RUNNING}


class BatchingConnection(impl_sqlalchemy.Connection):  # type: ignore[misc]
    """A TaskFlow connection that writes each atom once per durable state change.

    It remembers what it wrote for each atom, so it needs no SELECT before an
    UPDATE, and defers saves that only mark an atom RUNNING or change its
    metadata (progress).  Reads flush first, so they always see every save.
    Only one process runs a given execution, so the remembered rows are exact.
    """

    def __init__(self, backend: Any, upgrade_lock: Any) -> None:
        super().__init__(backend, upgrade_lock)
        self._known: dict[str, Any] = {}
        self._known_flows: dict[str, Any] = {}
        self._pending: dict[str, Any] = {}
        self._write_lock = threading.RLock()
        self._redactor: Redactor = backend.redactor
        table = self._tables.atomdetails
        self._update_stmt = (sa.update(table)
                             .where(table.c.uuid == sa.bindparam("b_uuid")))

    def _row(self, ad: Any) -> dict[str, Any]:
        values = self._redactor.atom_row(ad.to_dict())
        values.pop("uuid", None)
        return {"b_uuid": ad.uuid, **values}

    # TaskFlow's own writes (first save of an atom, a whole flow detail) go
    # through these: every row is redacted (:mod:`tripleo_flow.flows.redaction`).

    def _insert_flow_details(self, conn: Any, fd: Any, parent_uuid: str) -> None:
        value = self._redactor.flow_row(fd.to_dict())
        value["parent_uuid"] = parent_uuid
        conn.execute(sa.insert(self._tables.flowdetails).values(**value))
        for ad in fd:
            self._insert_atom_details(conn, ad, fd.uuid)

    def _insert_atom_details(self, conn: Any, ad: Any, parent_uuid: str) -> None:
        value = self._redactor.atom_row(ad.to_dict())
        value["parent_uuid"] = parent_uuid
        value["atom_type"] = models.atom_detail_type(ad)
        conn.execute(sa.insert(self._tables.atomdetails).values(**value))

    def _update_atom_details(self, conn: Any, ad: Any, e_ad: Any) -> None:
        e_ad.merge(ad)
        table = self._tables.atomdetails
        conn.execute(sa.update(table).where(table.c.uuid == e_ad.uuid)
                     .values(self._redactor.atom_row(e_ad.to_dict())))

    def _update_flow_details(self, conn: Any, fd: Any, e_fd: Any) -> None:
        e_fd.merge(fd)
        table = self._tables.flowdetails
        conn.execute(sa.update(table).where(table.c.uuid == e_fd.uuid)
                     .values(self._redactor.flow_row(e_fd.to_dict())))
        for ad in fd:
            e_ad = e_fd.find(ad.uuid)
            if e_ad is None:
                e_fd.add(ad)
                self._insert_atom_details(conn, ad, fd.uuid)
            else:
                self._update_atom_details(conn, ad, e_ad)

    def _write(self, details: list[Any]) -> None:
        rows = [self._row(ad) for ad in details]
        try:
            with self._engine.begin() as conn:
                conn.execute(self._update_stmt, rows)
        except sa.exc.SQLAlchemyError as exc:
            raise tf_exc.StorageFailure(f"Failed saving atom details: {exc}") from exc

    def flush(self) -> None:
        """Write every deferred save now."""
        with self._write_lock:
            if self._pending:
                pending = list(self._pending.values())
                self._pending.clear()
                self._write(pending)

    def update_atom_details(self, atom_detail: Any) -> Any:
        with self._write_lock:
            known = self._known.get(atom_detail.uuid)
            if known is None:
                self.flush()
                merged = super().update_atom_details(atom_detail)
                self._known[atom_detail.uuid] = merged
                return merged.copy()
            before = (known.state, known.results, known.failure, known.intention,
                      known.revert_results, known.revert_failure)
            known.merge(atom_detail)
            after = (known.state, known.results, known.failure, known.intention,
                     known.revert_results, known.revert_failure)
            only_meta = all(a is b for a, b in zip(before, after, strict=True))
            if known.state in _DEFERRABLE_STATES or only_meta:
                self._pending[known.uuid] = known
            else:
                self._pending.pop(known.uuid, None)
                pending = [*self._pending.values(), known]
                self._pending.clear()
                self._write(pending)
            return known.copy()

    def update_flow_details(self, flow_detail: Any) -> Any:
        """Save a flow detail, writing only the atoms that changed since last written.

        TaskFlow saves the whole flow detail, every atom included, at each
        flow state change; rewriting unchanged atoms would cost O(tasks).
        """
        with self._write_lock:
            self.flush()
            known_flow = self._known_flows.get(flow_detail.uuid)
            if known_flow is None or any(ad.uuid not in self._known for ad in flow_detail):
                merged = super().update_flow_details(flow_detail)
                self._known_flows[merged.uuid] = merged.copy(retain_contents=False)
                for ad in merged:
                    self._known[ad.uuid] = ad.copy()
                return merged
            known_flow.merge(flow_detail)
            changed = []
            for ad in flow_detail:
                known = self._known[ad.uuid]
                if known.to_dict() != ad.to_dict():
                    known.merge(ad)
                    changed.append(known)
            flows = self._tables.flowdetails
            values = self._redactor.flow_row(known_flow.to_dict())
            values.pop("uuid", None)
            try:
                with self._engine.begin() as conn:
                    conn.execute(sa.update(flows).where(flows.c.uuid == known_flow.uuid)
                                 .values(values))
                    if changed:
                        conn.execute(self._update_stmt, [self._row(ad) for ad in changed])
            except sa.exc.SQLAlchemyError as exc:
                raise tf_exc.StorageFailure(f"Failed saving flow details: {exc}") from exc
            return flow_detail

    def save_logbook(self, book: Any) -> Any:
        self.flush()
        return super().save_logbook(book)

    def get_logbook(self, book_uuid: str, lazy: bool = False) -> Any:
        self.flush()
        return super().get_logbook(book_uuid, lazy=lazy)

    def get_flows_for_book(self, book_uuid: str, lazy: bool = False) -> Any:
        self.flush()
        return super().get_flows_for_book(book_uuid, lazy=lazy)

    def get_flow_details(self, fd_uuid: str, lazy: bool = False) -> Any:
        self.flush()
        return super().get_flow_details(fd_uuid, lazy=lazy)

    def get_atom_details(self, ad_uuid: str) -> Any:
        self.flush()
        return super().get_atom_details(ad_uuid)

    def get_atoms_for_flow(self, fd_uuid: str) -> Any:
        self.flush()
        return super().get_atoms_for_flow(fd_uuid)

    def close(self) -> None:
        """Nothing: TaskFlow closes after every call, but this connection is reused."""


class ExecutionBackend(impl_sqlalchemy.SQLAlchemyBackend):  # type: ignore[misc]
    """SQLAlchemy persistence with one cached connection object and fast SQLite."""

    def __init__(self, url: str) -> None:
        engine_args: dict[str, Any] = {"pool_pre_ping": not url.startswith("sqlite")}
        if url.startswith("sqlite"):
            engine_args["connect_args"] = {"check_same_thread": False, "timeout": 30}
            if url.rstrip("/") in ("sqlite:", "sqlite:///:memory:"):  # one shared memory DB
                engine_args["poolclass"] = sa.pool.StaticPool
        else:
            engine_args["pool_recycle"] = 3600
        engine = sa.create_engine(url, **engine_args)
        if url.startswith("sqlite"):
            sa.event.listen(engine, "connect", _sqlite_pragmas)
        super().__init__({"connection": url}, engine=engine)
        self._own_engine = engine
        #: Masks secrets in every row written (and remembers the ones it saw).
        self.redactor = Redactor()
        self._connection: Any = None
        self._lock = threading.Lock()

    def get_connection(self) -> Any:
        with self._lock:
            if self._connection is None:
                conn = BatchingConnection(self, upgrade_lock=self._upgrade_lock)
                try:
                    conn.validate(max_retries=0)
                    conn.upgrade()
                except (tf_exc.StorageFailure, sa.exc.SQLAlchemyError) as exc:
                    raise exceptions.BackendUnavailable(
                        f"Cannot open the executions database {_safe_url(self.engine.url)}: "
                        f"{exc}. Check [workflows] connection.") from exc
                self._connection = conn
            return self._connection

    def flush(self) -> None:
        """Write every deferred save (the end of a run calls this)."""
        with self._lock:
            if self._connection is not None:
                self._connection.flush()

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._connection = None
            self._own_engine.dispose()


def _safe_url(url: Any) -> str:
    return str(url.render_as_string(hide_password=True)) if hasattr(url, "render_as_string") \
        else str(url)


@dataclass(frozen=True)
class TaskRecord:
    """One task of an execution as stored."""

    name: str
    state: str
    result: Any = None
    error: str | None = None
    published: dict[str, Any] = field(default_factory=dict)
    started_at: float | None = None
    finished_at: float | None = None
    #: While it runs, the last progress its action reported: ``{"stage", "done",
    #: "total", "status"}`` (stage ``check``/``upload`` for plans, ``stack`` for
    #: deployments); None once it has ended.
    progress: dict[str, Any] | None = None


@dataclass(frozen=True)
class Execution:
    """An execution as stored: what ran, with what, and how it ended."""

    id: str
    workflow: str
    state: str
    input: dict[str, Any]
    output: Any = None
    error: str | None = None
    failed_task: str | None = None
    created_at: float | None = None
    updated_at: float | None = None
    finished_at: float | None = None
    target: str | None = None


def _state(fd: Any) -> str:
    meta = fd.meta or {}
    state = fd.state or states.PENDING
    if state in (states.RUNNING, states.PENDING) and meta.get("pid"):
        if meta.get("host") == socket.gethostname() and not _alive(int(meta["pid"])):
            return "INTERRUPTED" if state == states.RUNNING else state
    return str(state)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def to_execution(fd: Any) -> Execution:
    meta = fd.meta or {}
    return Execution(
        id=fd.uuid, workflow=str(meta.get("workflow", fd.name)), state=_state(fd),
        input=_masked(dict(meta.get("input") or {})), output=_masked(meta.get("output")),
        error=meta.get("error"), failed_task=meta.get("failed_task"),
        created_at=meta.get("created_at"), updated_at=meta.get("updated_at"),
        finished_at=meta.get("finished_at"), target=meta.get("target"))


def task_records(fd: Any) -> list[TaskRecord]:
    """The workbook tasks of a flow detail (internal atoms left out), in run order."""
    records = []
    for ad in fd:
        if _internal(ad.name) or not isinstance(ad, models.TaskDetail):
            continue
        result, error = ad.results, None
        state = ad.state or states.PENDING
        published: dict[str, Any] = {}
        started = finished = None
        if ad.failure is not None:
            error = _failure_text(ad.failure)
        if isinstance(result, dict) and "state" in result:
            published = dict(result.get("published") or {})
            started, finished = result.get("started_at"), result.get("finished_at")
            if state == states.SUCCESS and result["state"] != atoms.SUCCESS:
                state = result["state"]
            error = error or result.get("error")
            published = _masked(published)
            result = _masked(result.get("result"), everything=bool(result.get(SECRET_RESULT)))
        reported = (ad.meta or {}).get("progress_details") or {}
        progress = (dict(reported["details"])
                    if reported.get("details") and state == states.RUNNING else None)
        records.append(TaskRecord(ad.name, str(state), result, error, published, started,
                                  finished, progress))
    records.sort(key=lambda r: (r.started_at is None, r.started_at or 0.0))
    return records


def _masked(value: Any, everything: bool = False) -> Any:
    """What a reader may see of a stored value (rows written before redaction too)."""
    return secrets.redact(value, everything=everything)[0]


def _internal(name: str) -> bool:
    """Atoms of the compiled flow that are not workbook tasks."""
    return name in ("__end__", "_TaskFlow_INJECTOR") or "#retry" in name \
        or name.endswith("__enter__")


def _failure_text(fail: Any) -> str:
    if isinstance(fail, failure.Failure):
        return str(fail.exception_str or fail)
    return str(fail)


class ExecutionStore:
    """Creating, listing and updating execution records."""

    def __init__(self, backend: ExecutionBackend) -> None:
        self.backend = backend
        self._book: Any = None

    @contextlib.contextmanager
    def _conn(self) -> Iterator[Any]:
        try:
            yield self.backend.get_connection()
        except tf_exc.StorageFailure as exc:
            raise exceptions.BackendUnavailable(
                f"The executions database failed: {exc}") from exc

    def book(self) -> Any:
        if self._book is None:
            with self._conn() as conn:
                try:
                    self._book = conn.get_logbook(BOOK_UUID, lazy=True)
                except tf_exc.NotFound:
                    book = models.LogBook(BOOK_NAME, uuid=BOOK_UUID)
                    conn.save_logbook(book)
                    self._book = conn.get_logbook(BOOK_UUID, lazy=True)
        return self._book

    def create(self, workflow: str, inputs: dict[str, Any], target: str | None,
               origin: str | None = None) -> Any:
        """A new PENDING flow detail for a run of ``workflow``.

        :param origin: who started it (:data:`ORIGIN_API`; None: the CLI or a Python caller)
        """
        now = time.time()
        fd = models.FlowDetail(workflow, uuid=str(uuid.uuid4()))
        fd.state = states.PENDING
        fd.meta = {"workflow": workflow, "input": inputs, "target": target, "origin": origin,
                   "created_at": now, "updated_at": now}
        book = models.LogBook(BOOK_NAME, uuid=self.book().uuid)
        book.add(fd)
        with self._conn() as conn:
            conn.save_logbook(book)
        return fd

    def flow_detail(self, execution_id: str, lazy: bool = False) -> Any:
        with self._conn() as conn:
            try:
                return conn.get_flow_details(execution_id, lazy=lazy)
            except (tf_exc.NotFound, ValueError):
                raise exceptions.ExecutionNotFound(execution_id) from None

    def update_meta(self, fd: Any, **values: Any) -> None:
        """Save ``values`` into the execution's meta (not touching its tasks)."""
        fd.meta = {**(fd.meta or {}), **values, "updated_at": time.time()}
        with self._conn() as conn:
            conn.update_flow_details(fd.copy(retain_contents=False))

    def get(self, execution_id: str) -> Execution:
        return to_execution(self.flow_detail(execution_id, lazy=True))

    def tasks(self, execution_id: str) -> list[TaskRecord]:
        return task_records(self.flow_detail(execution_id))

    def list(self) -> list[Execution]:
        with self._conn() as conn:
            details = list(conn.get_flows_for_book(self.book().uuid, lazy=True))
        result = [to_execution(fd) for fd in details]
        result.sort(key=lambda e: e.created_at or 0.0)
        return result
