"""Other executions as workflow expressions read them: Mistral's ``executions()`` and
``tasks(id)`` (:mod:`tripleo_flow.engine.lang.expressions`).

Mistral lists every execution and task execution of the caller's project.  Ours has
one project: an expression sees what ``GET /v1/executions`` shows whoever started its
execution, the same records with the same secrets masked, read from the executions
database.  How many it may return is ``[limits] expression_max_items`` (a narrower
filter lists more distant history), and each execution read counts against the
expression's ``[limits] expression_timeout``.  The running execution's own tasks are read from
its engine instead (:meth:`~tripleo_flow.engine.compile.execution_scope.Scope.tasks`),
as they are not all in the database yet.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import time_budget
from tripleo_flow.engine.store import pause_views
from tripleo_flow.engine.store.execution_records import Execution
from tripleo_flow.engine.store.states import SKIPPED

#: A workflow's spec as written, by its full name (``{}`` once it is no longer known).
SpecOf = Callable[[str], Mapping[str, Any]]


def when(value: Any) -> str | None:
    """A stored time (seconds since the epoch) as Mistral writes it: UTC, ``YYYY-MM-DD
    HH:MM:SS``."""
    if value is None:
        return None
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(float(value)))


def moment(value: Any, what: str) -> float:
    """A ``from_time``/``to_time`` argument (a date or date and time, UTC, as Mistral
    compares them; or seconds since the epoch) as seconds since the epoch.

    :raises InvalidInput: anything else
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            parsed = datetime.datetime.fromisoformat(value.strip())
        except ValueError:
            pass
        else:
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=datetime.UTC)
            return parsed.timestamp()
    raise exceptions.InvalidInput(
        f"executions(): {what} must be a date or a date and time (UTC, for example "
        f"'2016-12-01 15:01:00') or seconds since the epoch, not {str(value)[:60]!r}")


class ExecutionQueries:
    """``executions()`` and ``tasks(id)`` over the executions database of ``store`` (an
    :class:`~.executions.ExecutionStore`), returning at most ``max_items``."""

    def __init__(self, store: Any, max_items: int, spec_of: SpecOf | None = None) -> None:
        self.store = store
        self.max_items = max_items
        self.spec_of = spec_of or (lambda _name: {})

    def executions(self, id: str | None = None, root_execution_id: str | None = None,
                   state: str | None = None, from_time: Any = None,
                   to_time: Any = None) -> list[dict[str, Any]]:
        """Mistral's ``executions()``: the executions that match every filter given
        (``created_at >= from_time``, ``< to_time``), oldest first."""
        start = None if from_time is None else moment(from_time, "from_time")
        end = None if to_time is None else moment(to_time, "to_time")
        if id is not None:
            try:
                records = [self.store.get(str(id))]
            except exceptions.ExecutionNotFound:
                records = []
        else:
            records = self.store.list()
        records = pause_views.shown(self.store, records)
        parents = {r.id: r.parent_id for r in records} if id is None else {}
        parent_tasks: dict[str, list[Any]] = {}  # read once per parent, not per child
        found = []
        for record in records:
            time_budget.check()
            created = record.created_at or 0.0
            if (state is not None and record.state != state
                    or start is not None and created < start
                    or end is not None and created >= end):
                continue
            root = self._root(record, parents)
            if root_execution_id is not None and root != root_execution_id:
                continue
            found.append(self._model(record, root, self._parent_task_id(record,
                                                                        parent_tasks)))
            self._check(len(found), "executions()")
        return found

    def tasks(self, execution_id: str | None, recursive: bool = False,
              state: str | None = None, flat: bool = False,
              skip: str | None = None) -> list[dict[str, Any]]:
        """Mistral's ``tasks()`` of another execution (``execution_id``; with
        ``recursive``, those of its sub-workflows too) or, with None, of every
        execution but ``skip`` (the running one, read from its engine); ``flat``: a
        ``workflow:`` task only when none of its sub-workflow executions ended in its
        own state."""
        if execution_id is None:
            idents = [r.id for r in self.store.list() if r.id != skip]
            recursive = True  # every execution's, once: inline sub-workflows' too
            children = False  # each child execution is listed on its own
        else:
            idents, children = [str(execution_id)], recursive
        found: list[dict[str, Any]] = []
        for ident in idents:
            for model in self._tasks_of(ident, recursive, children, flat):
                if state is None or model["state"] == state:
                    found.append(model)
                    self._check(len(found), "tasks()")
        return found

    def _tasks_of(self, ident: str, recursive: bool, children: bool,
                  flat: bool) -> Iterator[dict[str, Any]]:
        time_budget.check()
        try:
            records = self.store.tasks(ident)
        except exceptions.ExecutionNotFound:
            return
        states = {r.name: r.state for r in records}
        for record in records:
            if record.state in (SKIPPED, "PENDING", "IGNORE") or (
                    "/" in record.name and not recursive):
                continue
            inner = [state for name, state in states.items()
                     if name.rpartition("/")[0] == record.name]
            kind = "WORKFLOW" if record.executions or inner else "ACTION"
            if not (flat and kind == "WORKFLOW" and self._same_state(record, inner)):
                yield self._task_model(ident, record, kind)
            if children:
                for child in record.executions:
                    yield from self._tasks_of(child, True, True, flat)

    @staticmethod
    def _task_model(ident: str, record: Any, kind: str) -> dict[str, Any]:
        """Mistral's user model of a task execution (its ``spec`` is not kept: ``{}``)."""
        return {"id": record.id, "name": record.name.rsplit("/", 1)[-1], "spec": {},
                "state": record.state, "state_info": record.error or record.state_info,
                "result": record.result, "published": dict(record.published),
                "type": kind, "workflow_execution_id": ident,
                "created_at": when(record.started_at), "updated_at": when(record.finished_at)}

    def _same_state(self, record: Any, inner: list[str]) -> bool:
        """Whether a sub-workflow execution of ``workflow:`` task ``record`` ended in
        the task's state.  One run inline (its tasks' states ``inner``) ended ERROR
        when its task failed with a task of its own, else SUCCESS (its task may fail
        after it, in its ``publish``)."""
        if not record.executions:
            child = "ERROR" if record.state == "ERROR" and "ERROR" in inner else "SUCCESS"
            return child == record.state
        for child in record.executions:
            try:
                if self.store.get(child).state == record.state:
                    return True
            except exceptions.ExecutionNotFound:
                continue
        return False

    def _root(self, record: Execution, parents: Mapping[str, str | None]) -> str | None:
        """Mistral's ``root_execution_id``: the top execution above a sub-workflow's
        (None for a top execution)."""
        root, seen = None, {record.id}
        parent = record.parent_id
        while parent is not None and parent not in seen:
            seen.add(parent)
            root = parent
            if parent in parents:
                parent = parents[parent]
                continue
            try:
                parent = self.store.get(parent).parent_id
            except exceptions.ExecutionNotFound:
                break
        return root

    def _parent_task_id(self, record: Execution, read: dict[str, list[Any]]) -> str | None:
        """Mistral's ``task_execution_id``: the id of the parent's task execution that
        started this sub-workflow execution (the parents' tasks kept in ``read``)."""
        parent = record.parent_id
        if parent is None:
            return None
        if parent not in read:
            try:
                read[parent] = self.store.tasks(parent)
            except exceptions.ExecutionNotFound:
                read[parent] = []
        return next((t.id for t in read[parent] if record.id in t.executions), None)

    def _model(self, record: Execution, root: str | None,
               task_execution_id: str | None) -> dict[str, Any]:
        return {"id": record.id, "name": record.workflow, "workflow_name": record.workflow,
                "spec": dict(self.spec_of(record.workflow) or {}), "state": record.state,
                "state_info": record.state_info or record.error,
                "input": dict(record.input), "output": record.output,
                "params": {"env": dict(record.env)} if record.env else {},
                "created_at": when(record.created_at), "updated_at": when(record.updated_at),
                "root_execution_id": root, "task_execution_id": task_execution_id,
                "description": record.description or ""}

    def _check(self, count: int, what: str) -> None:
        if count > self.max_items:
            raise exceptions.InvalidInput(
                f"{what} matched more than {self.max_items} records ([limits] "
                "expression_max_items); narrow it with its filters (an execution id, a "
                "state, a time range).")


__all__ = ["ExecutionQueries", "moment", "when"]
