"""Asynchronous action executions: the record of an action a client completes.

In Mistral an asynchronous action (``std.async_noop``, ``std.mistral_http``, an
ad-hoc action based on one) only starts the work: its action execution stays
RUNNING, and so does its task, until a client completes it through the API
with ``state`` SUCCESS (its ``output`` is the action's result) or ERROR (its
``output`` is the error, and ``on-error`` runs).  Here each such action execution
is one row of the table ``tripleo_flow_async_actions`` in the executions
database, beside the execution's flow detail:

* its id is derived from the execution, the task execution (its atom name,
  ``poll`` or ``poll[2]``), the attempt and the item, so a task execution run
  again after ``kill -9`` (or a pause) finds the action it had started and waits
  for it instead of starting it again;
* a completion is one conditional ``UPDATE`` (``WHERE state = 'RUNNING'`` and the
  deadline not passed): two clients completing the same action, or a client and
  the task's ``timeout``, cannot both win, and whoever loses is told so
  (:class:`~tripleo_flow.exceptions.Conflict`);
* the output is masked by the executions database's redactor before it is written,
  as every other record of an execution (:mod:`.redaction`); what the task
  then publishes is what the database kept;
* the task's ``timeout`` is a deadline kept in the row, so it holds across a
  restart: a completion after it is refused and the task fails as timed out; the
  action executions of one task (one attempt) share it, counted from the first's
  start, as Mistral's ``TimeoutPolicy`` counts from the task's.

Waiting costs no worker thread: :mod:`.state_machine` parks a task execution
whose action waits (:class:`Waiting`) and runs it again when one of its rows
changed or a deadline passed; it is woken at once by a completion made in its
own process (:func:`wakeup`), and polls the table for one made by another.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.store import side_tables
from tripleo_flow.engine.store.redaction import Redactor

RUNNING, SUCCESS, ERROR, CANCELLED = "RUNNING", "SUCCESS", "ERROR", "CANCELLED"
#: The states a client may complete an action execution with.
COMPLETIONS = (SUCCESS, ERROR)
#: How often a waiting execution looks for completions made by another process (s).
POLL_INTERVAL = 0.5
#: The error of an action execution a client completed with ERROR and no output.
UNKNOWN_ERROR = "Unknown error"

_NAMESPACE = uuid.UUID("0c4c8a2e-5d1b-4a3e-8f7a-2b9d6e1f4c37")
_METADATA = sa.MetaData()
TABLE = sa.Table(
    "tripleo_flow_async_actions", _METADATA,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("execution_id", sa.String(36), nullable=False, index=True),
    #: The task execution's atom name (``poll``, ``poll[2]``).
    sa.Column("task", sa.String(255), nullable=False),
    #: The task execution's id (its atom detail's uuid, ``task().id``).
    sa.Column("task_id", sa.String(36), nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("item", sa.Integer, nullable=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("output", sa.Text().with_variant(mysql.LONGTEXT(), "mysql"), nullable=True),
    sa.Column("deadline", sa.Double, nullable=True),
    #: The task's timeout (s) the deadline came from, which a timed-out one names (its
    #: deadline counts from the task execution's start, a wait-before included).
    sa.Column("timeout", sa.Double, nullable=True),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("updated_at", sa.Double, nullable=False),
)


class Waiting(BaseException):
    """Raised by a task execution whose asynchronous action(s) wait for a client
    (a BaseException: no ``except Exception`` of a task mistakes it for an error).

    :param ids: the action executions still RUNNING
    :param deadline: the earliest of their deadlines (None: none has one)
    """

    def __init__(self, ids: Sequence[str], deadline: float | None) -> None:
        super().__init__(f"waiting for action execution(s) {', '.join(ids)}")
        self.ids = tuple(ids)
        self.deadline = deadline


@dataclass(frozen=True)
class ActionExecution:
    """One asynchronous action execution as stored (its output masked)."""

    id: str
    execution_id: str
    task: str
    task_id: str
    attempt: int
    item: int | None
    state: str
    output: Any = None
    deadline: float | None = None
    created_at: float | None = None
    updated_at: float | None = None


def action_execution_id(execution_id: str, task: str, attempt: int, item: int | None) -> str:
    """The id of the action execution of task execution ``task`` of ``execution_id`` for
    ``attempt`` and ``item``: the same again when that task execution runs again."""
    return str(uuid.uuid5(_NAMESPACE, f"{execution_id}/{task}/{attempt}/{item}"))


def create_table(engine: sa.engine.Engine) -> None:
    """Create the table when the database has none (the executions backend calls this
    with its own tables)."""
    side_tables.create_missing(TABLE, engine)
    side_tables.add_missing_columns(TABLE, engine)


# -- waking a waiting execution in this process ------------------------------------

_WAKEUPS: dict[str, set[threading.Event]] = {}
_WAKEUPS_LOCK = threading.Lock()


def register(execution_id: str, event: threading.Event) -> None:
    """Set ``event`` whenever an action execution of ``execution_id`` is completed in
    this process (until :func:`unregister`)."""
    with _WAKEUPS_LOCK:
        _WAKEUPS.setdefault(execution_id, set()).add(event)


def unregister(execution_id: str, event: threading.Event) -> None:
    with _WAKEUPS_LOCK:
        events = _WAKEUPS.get(execution_id)
        if events is not None:
            events.discard(event)
            if not events:
                del _WAKEUPS[execution_id]


def wakeup(execution_id: str) -> None:
    """Wake what waits for the action executions of ``execution_id`` in this process."""
    with _WAKEUPS_LOCK:
        events = list(_WAKEUPS.get(execution_id, ()))
    for event in events:
        event.set()


class AsyncActions:
    """The asynchronous action executions of the executions database."""

    def __init__(self, engine: sa.engine.Engine, redactor: Redactor | None = None) -> None:
        self._engine = engine
        self._redactor = redactor or Redactor()

    def get(self, ident: str) -> ActionExecution | None:
        with self._engine.connect() as conn:
            row = conn.execute(sa.select(TABLE).where(TABLE.c.id == ident)).first()
        return None if row is None else _record(row)

    def of_task(self, execution_id: str, task: str) -> list[ActionExecution]:
        """The action executions of task execution ``task``, oldest first."""
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(TABLE).where(
                (TABLE.c.execution_id == execution_id) & (TABLE.c.task == task))
                .order_by(TABLE.c.attempt, TABLE.c.item, TABLE.c.created_at))
            return [_record(row) for row in rows]

    def of_execution(self, execution_id: str, state: str | None = None
                     ) -> list[ActionExecution]:
        """The action executions of ``execution_id`` (in ``state`` only, when given)."""
        where = TABLE.c.execution_id == execution_id
        if state is not None:
            where = where & (TABLE.c.state == state)
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(TABLE).where(where).order_by(TABLE.c.created_at))
            return [_record(row) for row in rows]

    def states(self, ids: Iterable[str]) -> dict[str, tuple[str, float | None]]:
        """``{id: (state, deadline)}`` of the given action executions."""
        wanted = list(ids)
        if not wanted:
            return {}
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(TABLE.c.id, TABLE.c.state, TABLE.c.deadline)
                                .where(TABLE.c.id.in_(wanted)))
            return {row[0]: (row[1], row[2]) for row in rows}

    def start(self, execution_id: str, task: str, task_id: str, attempt: int,
              item: int | None, timeout: float | None, deadline: float | None = None
              ) -> ActionExecution:
        """Record a RUNNING action execution (once: a second call finds the first),
        completed by a client within ``timeout`` seconds (None: any time), or by
        ``deadline`` (:func:`~tripleo_flow.common.clock.time`) when given: its task's,
        which its first item's action execution set (Mistral's timeout counts from the
        task's start)."""
        ident = action_execution_id(execution_id, task, attempt, item)
        now = clock.time()
        if deadline is None and timeout is not None:
            deadline = now + timeout
        try:
            with self._engine.begin() as conn:
                conn.execute(sa.insert(TABLE).values(
                    id=ident, execution_id=execution_id, task=task, task_id=task_id,
                    attempt=attempt, item=item, state=RUNNING, output=None,
                    deadline=deadline, timeout=timeout, created_at=now,
                    updated_at=now))
        except sa.exc.IntegrityError:
            pass  # recorded already (a run again after a crash)
        found = self.get(ident)
        assert found is not None
        return found

    def complete(self, ident: str, state: str, output: Any) -> ActionExecution:
        """Complete RUNNING action execution ``ident`` with ``state`` (SUCCESS: its
        result is ``output``; ERROR: ``output`` is its error).

        :raises NotFound: there is no such action execution
        :raises Conflict: it is not RUNNING (completed already, cancelled) or its task's
            timeout has passed (it is then recorded as timed out)
        """
        if state not in COMPLETIONS:
            raise exceptions.InvalidInput(
                f"An action execution is completed with state {' or '.join(COMPLETIONS)}, "
                f"not {str(state)[:40]!r}.")
        if state == ERROR and output in (None, ""):
            output = UNKNOWN_ERROR  # as Mistral words an error given without one
        text = json.dumps(self._redactor.value(output), sort_keys=True)
        now = clock.time()
        with self._engine.begin() as conn:
            done = conn.execute(sa.update(TABLE).where(
                (TABLE.c.id == ident) & (TABLE.c.state == RUNNING)
                & ((TABLE.c.deadline.is_(None)) | (TABLE.c.deadline > now)))
                .values(state=state, output=text, updated_at=now)).rowcount
        found = self.get(ident)
        if found is None:
            raise exceptions.NotFound(f"Action execution {ident!r} does not exist.")
        if not done:
            if found.state == RUNNING:  # its deadline passed: the task has timed out
                self.time_out(ident)
                found = self.get(ident) or found
            raise exceptions.Conflict(
                f"Task execution {found.task!r} of execution {found.execution_id!r} is not "
                f"waiting for action execution {ident!r}: it is {found.state}"
                + (f" ({found.output})" if found.state in (ERROR, CANCELLED) else "") + ".")
        wakeup(found.execution_id)
        return found

    def time_out(self, ident: str) -> bool:
        """Record RUNNING action execution ``ident`` as failed by its task's timeout,
        once its deadline has passed; True when this call did."""
        now = clock.time()
        with self._engine.begin() as conn:
            row = conn.execute(sa.select(TABLE).where(TABLE.c.id == ident)).first()
            if row is None or row.deadline is None or row.deadline > now:
                return False
            # Its task's timeout: from the first action execution given that deadline.
            began = conn.execute(sa.select(sa.func.min(TABLE.c.created_at)).where(
                (TABLE.c.execution_id == row.execution_id) & (TABLE.c.task == row.task)
                & (TABLE.c.attempt == row.attempt) & (TABLE.c.deadline == row.deadline))
            ).scalar()
            message = timed_out(row.task, row.timeout if row.timeout is not None
                                else row.deadline - (began or row.created_at))
            return bool(conn.execute(sa.update(TABLE).where(
                (TABLE.c.id == ident) & (TABLE.c.state == RUNNING)).values(
                    state=ERROR, updated_at=row.deadline,  # when it timed out
                    output=json.dumps(message))).rowcount)

    def cancel(self, ids: Iterable[str], reason: str) -> None:
        """Record the RUNNING ones of ``ids`` as CANCELLED (their task no longer waits)."""
        wanted = list(ids)
        if not wanted:
            return
        with self._engine.begin() as conn:
            conn.execute(sa.update(TABLE).where(
                TABLE.c.id.in_(wanted) & (TABLE.c.state == RUNNING)).values(
                    state=CANCELLED, output=json.dumps(reason), updated_at=clock.time()))

    def cancel_execution(self, execution_id: str, reason: str) -> None:
        """Cancel every RUNNING action execution of ``execution_id`` (it ended)."""
        self.cancel([a.id for a in self.of_execution(execution_id, RUNNING)], reason)


def timed_out(task: str, seconds: float) -> str:
    """The error of a task whose action was not completed within its ``timeout``."""
    return (f"task {task.partition('[')[0]!r} timed out after {seconds:g} s: its "
            "asynchronous action was not completed in time")


def _record(row: Any) -> ActionExecution:
    output = json.loads(row.output) if row.output is not None else None
    return ActionExecution(row.id, row.execution_id, row.task, row.task_id, row.attempt,
                           row.item, row.state, output, row.deadline, row.created_at,
                           row.updated_at)


__all__ = ["TABLE", "ActionExecution", "AsyncActions", "Waiting", "action_execution_id",
           "create_table", "register", "unregister", "wakeup"]
