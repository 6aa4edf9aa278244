"""The undo journal of running workflow tasks, in the executions database.

A resumed execution runs the task a crash interrupted again, with the same
inputs.  An action whose undo record is computed from the state it changes
(``parameters.update`` records the values it replaces) would, on that second
run, find its change made already and record the new values as the old ones: a
later failure's revert could no longer restore the plan.  So an action keeps its
undo record through :meth:`ActionContext.undo_record
<tripleo_flow.actions.base.ActionContext.undo_record>` before it changes
anything: the first run stores the record here, a re-run of the same task gets
that record back instead of making a new one.

Entries are keyed by execution, task, attempt (a retry starts over from a
reverted state, so it records anew), item of a ``with-items`` task and part of the
record; the task's inputs are not part of the key (a resumed task gets the same
ones, and some are secret).  They are removed when the execution ends.  A record
the executions database would have to mask (it holds a secret) is not stored:
that action's re-run computes its record again, as without a journal.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import Callable, Iterator
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from tripleo_flow.common import clock
from tripleo_flow.engine.store import side_tables
from tripleo_flow.engine.store.redaction import Redactor

T = TypeVar("T")

_METADATA = sa.MetaData()
TABLE = sa.Table(
    "tripleo_flow_undo_journal", _METADATA,
    sa.Column("execution_id", sa.String(36), primary_key=True),
    sa.Column("task", sa.String(255), primary_key=True),
    #: ``attempt/item/part`` within the task
    sa.Column("entry", sa.String(255), primary_key=True),
    sa.Column("record", sa.Text().with_variant(mysql.LONGTEXT(), "mysql"), nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
)

#: The task whose action runs in this thread: ``(task, attempt/item)``.
_RUNNING: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "tripleo_flow_undo_task", default=None)


def create_table(engine: sa.engine.Engine) -> None:
    """Create the journal's table when the database has none (the executions backend
    calls this with its own tables: :class:`~.execution_backend.ExecutionBackend`)."""
    side_tables.create_missing(TABLE, engine)


class ExecutionUndoJournal:
    """The journal of one execution (:class:`~tripleo_flow.actions.base.UndoJournal`)."""

    def __init__(self, engine: sa.engine.Engine, execution_id: str,
                 redactor: Redactor | None = None) -> None:
        self._engine = engine
        self.execution_id = execution_id
        self._redactor = redactor or Redactor()

    @staticmethod
    @contextlib.contextmanager
    def running(task: str, attempt: int, item: int | None) -> Iterator[None]:
        """Mark the action run in this thread as attempt ``attempt`` of ``task`` (item
        ``item`` of a with-items task): :meth:`recall` keys its entries with it."""
        token = _RUNNING.set((task, f"{attempt}/{'-' if item is None else item}"))
        try:
            yield
        finally:
            _RUNNING.reset(token)

    def recall(self, make: Callable[[], T], part: str = "") -> T:
        running = _RUNNING.get()
        if running is None:  # not run by a task of this execution (a revert, a direct call)
            return make()
        task, run = running
        entry = f"{run}/{part}"
        key = (TABLE.c.execution_id == self.execution_id) & (TABLE.c.task == task) & (
            TABLE.c.entry == entry)
        with self._engine.connect() as conn:
            kept = conn.execute(sa.select(TABLE.c.record).where(key)).scalar()
        if kept is not None:
            value: T = json.loads(kept)
            return value
        value = make()
        if self._redactor.value(value) != value:
            return value  # a secret: never stored; a re-run makes its record again
        text = json.dumps(value, sort_keys=True)
        with self._engine.begin() as conn:
            conn.execute(sa.insert(TABLE).values(
                execution_id=self.execution_id, task=task, entry=entry, record=text,
                created_at=clock.time()))
        return json.loads(text)  # what a re-run gets: the same JSON

    def forget(self) -> None:
        """Remove the execution's entries (it ended: nothing will run its tasks again)."""
        with self._engine.begin() as conn:
            conn.execute(sa.delete(TABLE).where(TABLE.c.execution_id == self.execution_id))

    def entries(self) -> list[tuple[str, str]]:
        """``(task, entry)`` of what is kept (tests, diagnostics)."""
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(TABLE.c.task, TABLE.c.entry).where(
                TABLE.c.execution_id == self.execution_id).order_by(TABLE.c.created_at))
            return [(row[0], row[1]) for row in rows]


__all__ = ["TABLE", "ExecutionUndoJournal", "create_table"]
