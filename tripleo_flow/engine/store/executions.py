"""Persisted executions as users see them: records, tasks and their results.

Every execution is one TaskFlow flow detail in the logbook ``tripleo-flow``;
its ``meta`` holds the workflow name, inputs, output, error and timestamps.
The database itself (TaskFlow's SQLAlchemy persistence tuned for SQLite, or
MariaDB) is :mod:`.execution_backend`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import socket
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from taskflow import exceptions as tf_exc
from taskflow import states
from taskflow.persistence import models
from taskflow.types import failure

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import execution_scope
from tripleo_flow.engine.compile.async_actions import RUNNING as ACTION_RUNNING
from tripleo_flow.engine.compile.async_actions import AsyncActions
from tripleo_flow.engine.store import error_records
from tripleo_flow.engine.store.cancels import Cancels
from tripleo_flow.engine.store.cancels import shown as cancels_shown
from tripleo_flow.engine.store.cancels import shown_tasks as cancels_shown_tasks
from tripleo_flow.engine.store.execution_backend import ExecutionBackend
from tripleo_flow.engine.store.execution_pages import flow_page
from tripleo_flow.engine.store.execution_records import (
    BOOK_NAME,
    BOOK_UUID,
    Execution,
    to_execution,
)
from tripleo_flow.engine.store.execution_records import PAUSED as PAUSED
from tripleo_flow.engine.store.execution_records import masked as _masked
from tripleo_flow.engine.store.pause_requests import PauseRequests
from tripleo_flow.engine.store.redaction import SECRET_RESULT
from tripleo_flow.engine.store.states import CANCELLED_INFO, FAILED_AT, STARTED_AT
from tripleo_flow.engine.store.states import ERROR as TASK_ERROR
from tripleo_flow.engine.store.states import SKIPPED as TASK_SKIPPED
from tripleo_flow.engine.store.states import SUCCESS as TASK_SUCCESS

#: Outcome key of a ``workflow:`` task run apart: the ids of its child executions.
CHILDREN = "executions"
#: ``meta["origin"]`` of an execution an HTTP API user started: kept for its whole
#: life, so whoever resumes it (any process, any interface) applies the same rules.
ORIGIN_API = "api"


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
    #: A ``workflow:`` task's child executions (one per item and attempt), in the
    #: order they started: each names this task as its ``parent_task``.
    executions: list[str] = field(default_factory=list)
    #: The task execution's id (``task().id``; Mistral's task execution id).
    id: str | None = None
    #: While it waits for a client to complete its asynchronous action(s): each
    #: RUNNING action execution, ``{"id", "item", "attempt", "deadline"}``
    #: (``execution complete`` / ``POST .../tasks/{task}/complete`` completes one).
    waiting: list[dict[str, Any]] = field(default_factory=list)
    #: Why it is in its state where its error does not say (Mistral's task
    #: ``state_info``): a cancelled task's message (:func:`~.cancels.shown_tasks`).
    state_info: str | None = None
    #: :attr:`error` in the HTTP API's words (its next steps as API requests), when it
    #: has next steps; the HTTP API shows this one as ``error``.
    error_api: str | None = None
    #: Its undo ran as its execution failed (its atom REVERTED): a failed task reads
    #: ERROR and a completed one SUCCESS, as Mistral's; this says that what it did was
    #: undone (REVERT_FAILURE: its undo failed).
    reverted: bool = False


def command_message(fd: Any, ended: bool) -> str | None:
    """The ``msg`` of the last top-level ``succeed`` (``ended``) or ``pause`` command
    of the execution of ``fd``, from its persisted task outcomes."""
    said = []
    for ad in fd:
        results = ad.results
        if "/" in ad.name or not isinstance(results, Mapping) or \
                results.get("state_info") is None:
            continue
        if (results.get(execution_scope.ENDED) == "") is ended:
            said.append((results.get("finished_at") or 0.0, str(results["state_info"])))
    return max(said)[1] if said else None


#: The internal atom of a ``workflow:`` task run inline that evaluates its input.
ENTER = "/__enter__"


def task_records(fd: Any) -> list[TaskRecord]:
    """The workbook tasks of a flow detail (internal atoms left out), in run order."""
    records = []
    # A ``workflow:`` task run inline whose input failed to evaluate: its entry atom
    # failed, the task never started; it reads ERROR with that error, as Mistral's.
    entered = {ad.name[:-len(ENTER)]: ad for ad in fd
               if ad.name.endswith(ENTER) and ad.failure is not None}
    for ad in fd:
        if _internal(ad.name) or not isinstance(ad, models.TaskDetail):
            continue
        result, error = ad.results, None
        state = ad.state or states.PENDING
        published: dict[str, Any] = {}
        started = finished = None
        children: list[str] = []
        info = None
        result_record = result if isinstance(result, Mapping) else None
        if ad.failure is not None:
            error = _failure_text(ad.failure)
        outcome = result.get("state") if isinstance(result, dict) else None
        if isinstance(result, dict) and "state" in result:
            published = dict(result.get("published") or {})
            started, finished = result.get("started_at"), result.get("finished_at")
            children = list(result.get(CHILDREN) or [])
            info = result.get(CANCELLED_INFO)
            if state == states.SUCCESS and result["state"] != TASK_SUCCESS or (
                    state == states.REVERTED and result["state"] == TASK_SKIPPED):
                state = result["state"]  # a skipped task did nothing to undo
            if result["state"] == TASK_SKIPPED:
                started = None  # its atom ran only to decide that: the task never started
            error = error or result.get("error")
            published = _masked(published)
            result = _masked(result.get("result"), everything=bool(result.get(SECRET_RESULT)))
        reverted = state in (states.REVERTED, states.REVERT_FAILURE)
        if ad.name in entered and state in (states.PENDING, states.REVERTED) and error is None:
            enter = entered[ad.name]
            error, state = _failure_text(enter.failure), states.FAILURE
            reverted = enter.state in (states.REVERTED, states.REVERT_FAILURE)
        if error is not None and state in (states.REVERTED, states.FAILURE):
            state = TASK_ERROR  # a failed task: Mistral's ERROR (its undo: ``reverted``)
        elif state == states.REVERTED and outcome == TASK_SUCCESS:
            state = TASK_SUCCESS  # it completed, then was undone: Mistral's SUCCESS
        error_api = _api_words(error, result_record, ad.meta)
        if started is None and state in (states.RUNNING, TASK_ERROR):
            started = (ad.meta or {}).get(STARTED_AT)  # it runs now, or it raised
        if finished is None and state == TASK_ERROR:
            finished = (ad.meta or {}).get(FAILED_AT)
        reported = (ad.meta or {}).get("progress_details") or {}
        progress = (dict(reported["details"])
                    if reported.get("details") and state == states.RUNNING else None)
        records.append(TaskRecord(ad.name, str(state), result, error, published, started,
                                  finished, progress, children, ad.uuid, state_info=info,
                                  error_api=error_api, reverted=reverted))
    records.sort(key=lambda r: (r.started_at is None, r.started_at or 0.0))
    return records


_internal = execution_scope.internal


def _api_words(error: str | None, *records: Any) -> str | None:
    """The task's ``error`` in the HTTP API's words (its next steps as requests), from
    the error kept as data with its outcome or its atom (None when it has no next
    steps, or the text no longer is that error's)."""
    if not error:
        return None
    for holder in records:
        if not isinstance(holder, Mapping):
            continue
        kept = error_records.rebuild(holder.get(error_records.ERROR_RECORD))
        if kept is not None and kept.hints and str(kept) == error:
            return kept.render(exceptions.API)
    return None


def _failure_text(fail: Any) -> str:
    if isinstance(fail, failure.Failure):
        return str(fail.exception_str or fail)
    return str(fail)


#: A page of executions, and whether more follow.
ExecutionPage = tuple[list[Execution], bool]


class ExecutionStore:
    """Creating, listing and updating execution records."""

    def __init__(self, backend: ExecutionBackend) -> None:
        self.backend = backend
        self._book: Any = None
        #: The asynchronous action executions, beside the executions.
        self.async_actions = AsyncActions(backend.engine, backend.redactor)
        #: Pauses asked of executions other processes run.
        self.pause_requests = PauseRequests(backend.engine)
        #: Cancelled executions (:mod:`.cancels`): they read CANCELLED.
        self.cancels = Cancels(backend.engine)

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
               origin: str | None = None, env: dict[str, Any] | None = None,
               local: bool = False, execution_id: str | None = None,
               parent: Mapping[str, Any] | None = None, evaluate_env: bool = True) -> Any:
        """A new PENDING flow detail for a run of ``workflow``.

        :param origin: who started it (:data:`ORIGIN_API`; None: the CLI or a Python caller)
        :param env: the execution's environment (``env()``), kept for a resume
        :param evaluate_env: False: the expressions in its values stay text (Mistral's
            ``evaluate_env`` start parameter), kept for a resume
        :param local: this process runs it (or starts the worker that does), not a
            jobboard's conductor: it is recorded as its owner from the start, so a
            ``kill -9`` before its first task leaves it INTERRUPTED, not PENDING for good
        :param execution_id: its id (a sub-workflow's, derived from its parent's)
        :param parent: a sub-workflow's link to its parent (``parent_id``,
            ``parent_task``, ``attempt``, ``item``), kept in its meta
        """
        now = clock.time()
        fd = models.FlowDetail(workflow, uuid=execution_id or str(uuid.uuid4()))
        fd.state = states.PENDING
        fd.meta = {"workflow": workflow, "input": inputs, "target": target, "origin": origin,
                   "env": dict(env or {}), "created_at": now, "updated_at": now,
                   **dict(parent or {})}
        if not evaluate_env:
            fd.meta["evaluate_env"] = False
        if local:
            fd.meta.update(pid=os.getpid(), host=socket.gethostname(), local=True)
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
        fd.meta = {**(fd.meta or {}), **values, "updated_at": clock.time()}
        with self._conn() as conn:
            conn.update_flow_details(fd.copy(retain_contents=False))

    def update_atom_meta(self, ad: Any, **values: Any) -> None:
        """Save ``values`` into the meta of atom detail ``ad`` (read from this store) of
        an execution no engine runs any more (:mod:`.stopped_completions`), now (the
        connection defers the writes of a RUNNING atom)."""
        ad.meta = {**(ad.meta or {}), **values}
        with self._conn() as conn:
            conn.update_atom_details(ad)
        self.backend.flush()

    def save_flow(self, fd: Any) -> None:
        """Save the flow detail ``fd`` with its atoms (a reverted child execution)."""
        fd.meta = {**(fd.meta or {}), "updated_at": clock.time()}
        with self._conn() as conn:
            conn.update_flow_details(fd)

    def get(self, execution_id: str) -> Execution:
        """An execution's record (CANCELLED once it was cancelled)."""
        return cancels_shown(self.cancels, [self.raw(execution_id)])[0]

    def raw(self, execution_id: str) -> Execution:
        """An execution's record as its engine wrote it (a cancel not applied)."""
        return to_execution(self.flow_detail(execution_id, lazy=True))

    def tasks(self, execution_id: str) -> list[TaskRecord]:
        """The tasks of an execution; one that waits for a client lists the RUNNING
        action executions it waits for."""
        fd = self.flow_detail(execution_id)
        records = cancels_shown_tasks(self, fd, task_records(fd))
        waiting: dict[str, list[dict[str, Any]]] = {}
        since: dict[str, float] = {}
        for action in self.async_actions.of_execution(execution_id, ACTION_RUNNING):
            waiting.setdefault(action.task, []).append({
                "id": action.id, "item": action.item, "attempt": action.attempt,
                "deadline": action.deadline})
            since[action.task] = min(since.get(action.task, math.inf), action.created_at or 0.0)
        if not waiting:
            return records
        return [dataclasses.replace(r, waiting=waiting[r.name],
                                    started_at=r.started_at or since[r.name])
                if r.name in waiting and r.state == states.RUNNING else r for r in records]

    def children(self, parent_id: str) -> list[Any]:
        """The flow details (lazy) of the sub-workflow executions ``parent_id`` started."""
        with self._conn() as conn:
            details = list(conn.get_flows_for_book(self.book().uuid, lazy=True))
        return [fd for fd in details if (fd.meta or {}).get("parent_id") == parent_id]

    def list(self) -> list[Execution]:
        with self._conn() as conn:
            details = list(conn.get_flows_for_book(self.book().uuid, lazy=True))
        result = cancels_shown(self.cancels, [to_execution(fd) for fd in details])
        result.sort(key=lambda e: e.created_at or 0.0)
        return result

    def page(self, limit: int, marker: str | None = None, workflow: str | None = None,
             descending: bool = False, max_bytes: int = 0) -> ExecutionPage:
        """Up to ``limit`` executions after the one whose id is ``marker``, oldest
        first (newest first with ``descending``), and whether more follow; with
        ``max_bytes``, fewer when their records are larger
        (:func:`~tripleo_flow.engine.store.execution_pages.flow_page`)."""
        with self._conn() as conn:
            details, more = flow_page(conn, self.book().uuid, limit, marker, workflow,
                                      descending, max_bytes)
        return cancels_shown(self.cancels, [to_execution(fd) for fd in details]), more
