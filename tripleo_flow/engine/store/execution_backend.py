"""The executions database: TaskFlow's SQLAlchemy persistence, tuned for SQLite.

This is the TaskFlow backend adapter; :mod:`.executions` reads executions from
it.  TaskFlow's own persistence contract suite runs against it
(``tests/unit/engine/store/test_persistence_contract.py``, MariaDB too).

Every execution is one TaskFlow flow detail in the logbook ``tripleo-flow``;
its ``meta`` holds the workflow name, inputs, output, error and timestamps.
Stock TaskFlow opens a new connection and rebuilds its table objects for every
state change, writes four times per task (RUNNING, progress 0, SUCCESS,
progress 1) with a SELECT before each UPDATE, and SQLite then syncs each
commit to disk: 10-20 tasks/s.  :class:`ExecutionBackend` keeps one
connection object with its tables, pools the database connection (on a SQLite
file its own writes keep one connection between them), runs SQLite
in WAL mode with ``synchronous=NORMAL`` (a commit survives a process kill;
only a power loss may lose the last ones), and :class:`~.batching_connection.BatchingConnection`
writes once per task: the RUNNING and progress updates wait for the next
durable write (a result, a failure, a revert), which carries them in the same
transaction (a deferred save that changed only the meta, the progress after
a result, updates only that column).  Losing a deferred RUNNING mark in a
crash is harmless: the task is then PENDING, and a resumed execution runs it
again either way.  The engine's first save of a flow holds all its atoms: they
are inserted with one statement.  On a SQLite file a task's UPDATEs run and
commit straight on the kept connection's DBAPI connection.  A new execution is
added to the logbook without reading the others (TaskFlow's save read every
execution and all their atoms first).  On SQLite the tables a process made on a
new file are made again from their statements on its next new files, and a file
holding exactly them is not checked again (:mod:`.sqlite_schema`).  MariaDB URLs
work unchanged.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from taskflow import exceptions as tf_exc

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import async_actions
from tripleo_flow.engine.store import cancels, pause_requests, sqlite_schema, undo_journal
from tripleo_flow.engine.store.batching_connection import BatchingConnection
from tripleo_flow.engine.store.redaction import Redactor
from tripleo_flow.engine.store.taskflow_persistence import impl_sqlalchemy

# alembic (TaskFlow's persistence imports it to migrate MariaDB: taskflow_persistence)
# logs its plugin set-up at INFO.
logging.getLogger("alembic").setLevel(logging.WARNING)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


#: Tries at creating or upgrading the tables before giving up.
_UPGRADE_ATTEMPTS = 4

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
                found = sqlite_schema.prepare(self._own_engine)
                for attempt in range(0 if found == sqlite_schema.READY else _UPGRADE_ATTEMPTS):
                    try:
                        conn.validate(max_retries=0)
                        with self._schema_lock():
                            conn.upgrade()
                            undo_journal.create_table(self._own_engine)
                            async_actions.create_table(self._own_engine)
                            pause_requests.create_table(self._own_engine)
                            cancels.create_table(self._own_engine)
                            _fractional_creation_times(self._own_engine)
                        break
                    except (tf_exc.StorageFailure, sa.exc.SQLAlchemyError) as exc:
                        # Processes starting together on a new database (conductors, an
                        # API server) race to create its tables: the loser sees them
                        # appear and finds nothing left to do on the next attempt.
                        if attempt + 1 == _UPGRADE_ATTEMPTS:
                            raise exceptions.BackendUnavailable(
                                f"Cannot open the executions database "
                                f"{_safe_url(self.engine.url)}: {exc}. Check [workflows] "
                                "connection.") from exc
                        clock.sleep(0.5 * (attempt + 1))
                if found == sqlite_schema.EMPTY:
                    sqlite_schema.keep(self._own_engine)
                self._connection = conn
            return self._connection

    @contextlib.contextmanager
    def _schema_lock(self) -> Iterator[None]:
        """On MariaDB, one process at a time creates or upgrades the tables (a named
        lock of the server: processes starting together on a new database would
        otherwise run the same migrations at once)."""
        if self._own_engine.dialect.name != "mysql":
            yield
            return
        with self._own_engine.connect() as locker:
            locker.execute(sa.text("SELECT GET_LOCK('tripleo_flow_schema', 120)"))
            try:
                yield
            finally:
                locker.execute(sa.text("SELECT RELEASE_LOCK('tripleo_flow_schema')"))

    def flush(self) -> None:
        """Write every deferred save (the end of a run calls this)."""
        with self._lock:
            if self._connection is not None:
                self._connection.flush()

    def forget(self, flow_uuid: str) -> None:
        """Write what is deferred and stop remembering execution ``flow_uuid`` (its
        run has ended): :meth:`BatchingConnection.forget`."""
        with self._lock:
            if self._connection is not None:
                self._connection.forget(flow_uuid)

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._connection is not None:
                self._connection.release()
            self._connection = None
            self._own_engine.dispose()


def _safe_url(url: Any) -> str:
    return str(url.render_as_string(hide_password=True)) if hasattr(url, "render_as_string") \
        else str(url)


__all__ = ["ExecutionBackend"]


def _fractional_creation_times(engine: Any) -> None:
    """On MySQL/MariaDB, keep the microseconds of when an execution was created.

    TaskFlow's ``flowdetails.created_at`` is a plain ``DATETIME`` there: whole seconds,
    so executions started within one second were listed in the order of their random
    ids (SQLite keeps the fraction). Widened once to ``DATETIME(6)``; rows written
    before keep their whole seconds.
    """
    if engine.dialect.name != "mysql":
        return
    with engine.begin() as db:
        digits = db.execute(sa.text(
            "SELECT DATETIME_PRECISION FROM information_schema.COLUMNS WHERE "
            "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'flowdetails' AND "
            "COLUMN_NAME = 'created_at'")).scalar()
        if digits is not None and int(digits) < 6:
            db.execute(sa.text("ALTER TABLE flowdetails MODIFY created_at DATETIME(6) NULL"))
