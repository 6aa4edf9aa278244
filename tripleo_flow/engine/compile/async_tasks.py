"""A task whose action is asynchronous: start it, then wait for its client.

:class:`~.action_atom.ActionAtom` hands a task whose action declares
``asynchronous`` (``std.async_noop``, an ad-hoc action based on one) to
:func:`run`.  Each run of the task (a task execution, again when it is run
again) looks at its action executions (:mod:`.async_actions`) for the current
attempt: one never started is started (the action's ``execute`` starts the
work, then a RUNNING row is written: a crash between the two starts it again,
at least once as any action); a RUNNING one whose deadline (the task's
``timeout``) passed is recorded as timed out; a completed one gives its result
(the action's :meth:`~tripleo_flow.actions.base.Action.completed` of the
client's output) or its error.  ``with-items`` starts one action execution per
item, at most ``concurrency`` of them RUNNING at once, as Mistral does; as
Mistral's ``WithItemsTask``, an item completed with ERROR stops nothing: the other
items go on (the next ones start as places free up) and the task fails once every
item was completed.  Its ``timeout`` is one deadline for the task (Mistral's
``TimeoutPolicy``), set as its first item starts: once passed, the task fails at
once and starts no more items.

While any is RUNNING the run raises :class:`~.async_actions.Waiting`: the state
machine (:mod:`.state_machine`) parks the task execution and runs it again once
a row changed, holding no thread meanwhile.  A compiled graph (a reverse
workflow, an action named by an expression) cannot park a task: there the run
waits in its own thread, woken by a completion in this process, polling for one
from another, and bounded by the task's ``timeout``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tripleo_flow.common import clock
from tripleo_flow.engine.compile import (
    async_actions,
    execution_scope,
    item_results,
    stopped_items,
)
from tripleo_flow.engine.compile.async_actions import (
    ERROR,
    RUNNING,
    SUCCESS,
    ActionExecution,
    Waiting,
)
from tripleo_flow.engine.store import stopped_completions, undo_journal
from tripleo_flow.exceptions import ActionFailed, Conflict, TaskFailed

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.action_atom import ActionAtom


def run(atom: ActionAtom, all_inputs: list[dict[str, Any]], items: bool,
        timeout: float | None, width: int, ctx: Mapping[str, Any]) -> tuple[Any, Any]:
    """The result(s) of the asynchronous action of ``atom`` run with ``all_inputs`` (one
    mapping, or one per item with ``items``), and those inputs; raises
    :class:`Waiting` while a client has not completed them (in the state machine).
    As it first waits, the task's inbound context ``ctx`` is persisted: a completion
    after the execution was stopped publishes over it (:mod:`.stopped_publish`); so are
    the items ``concurrency`` (``width``) left unstarted: a completion after the stop
    starts them (:mod:`.stopped_items`)."""
    kept = atom._first_start is not None  # run again: kept when it first waited
    while True:
        try:
            results = _step(atom, all_inputs, items, timeout, width)
        except Waiting as waiting:
            if not kept:
                atom.runtime.scope.keep_wait_context(
                    atom.name, ctx, atom._action_label(),
                    stopped_items.keep(atom, all_inputs, width, timeout) if items else None)
                kept = True
            if atom.links.machine:
                raise
            _block(atom, waiting)
            continue
        if items:
            return results, all_inputs
        return results[0], all_inputs[0]


def started_before(atom: ActionAtom) -> float | None:
    """When the task execution of ``atom`` first started an asynchronous action (None:
    it never did): a run of it again goes on waiting, without ``wait-before`` or the
    ``safe-rerun`` refusal of a task a crash interrupted."""
    store = atom.runtime.async_actions
    if store is None:
        return None
    found = store.of_task(atom.runtime.scope.execution_id, atom.name)
    return min((a.created_at or 0.0 for a in found), default=None)


def _step(atom: ActionAtom, all_inputs: list[dict[str, Any]], items: bool,
          timeout: float | None, width: int) -> list[Any]:
    """One look at the task's action executions: time out the late ones, start the
    next items, and give the results once every item was completed."""
    store = atom.runtime.async_actions
    if store is None:
        raise TaskFailed(f"task {atom.spec.name!r}: an asynchronous action needs the "
                         "executions database to wait for its completion")
    action = atom._get_action()
    attempt = atom._attempt_no
    keys: list[int | None] = list(range(len(all_inputs))) if items else [None]
    rows = {row.item: row for row in store.of_task(atom.runtime.scope.execution_id, atom.name)
            if row.attempt == attempt}
    # Mistral's TimeoutPolicy: one deadline for the task, from its first action.
    deadline = min((row.deadline for row in rows.values() if row.deadline is not None),
                   default=atom._task_deadline)  # none started: from the task's start
    expired = deadline is not None and deadline <= clock.time()
    free = (width or len(keys)) - sum(1 for row in rows.values() if row.state == RUNNING)
    results: list[Any] = [None] * len(keys)
    done: list[int] = []
    outputs: dict[int, Any] = {}  # of the completed items: their results or errors
    waiting: list[ActionExecution] = []
    unstarted = False
    error: str | None = None
    late: str | None = None  # the task's timeout's error
    data: Any = None  # the output a client completed it in ERROR with
    for index, key in enumerate(keys):
        row = rows.get(key)
        if row is not None and row.state == RUNNING and row.deadline is not None \
                and row.deadline <= clock.time():
            store.time_out(row.id)
            row = store.get(row.id) or row
        if row is None:
            if free <= 0 or expired:
                unstarted = True
                continue  # it starts once another item's action is completed
            row = _start(atom, all_inputs[index], attempt, key, timeout, deadline)
            deadline = row.deadline if deadline is None else deadline
        if row.state == RUNNING:
            if key not in rows:
                free -= 1
            waiting.append(row)
        elif row.state == SUCCESS:
            results[index] = outputs[index] = action.completed(row.output)
            done.append(index)
        elif stopped_completions.timed_out(row):
            outputs[index] = row.output
            if late is None:
                late, data = _error_text(row.output), row.output
        else:  # Mistral's with-items task goes on with its other items
            outputs[index] = row.output
            if error is None:
                error, data = _error_text(row.output), row.output
    if expired and unstarted and late is None:
        late = data = async_actions.timed_out(atom.name, timeout or 0.0)
    if late is not None or (error is not None and not waiting):
        # Every item was completed (one failed), or the task timed out.
        store.cancel([row.id for row in waiting], "its task timed out")
        for index in sorted(done, reverse=True):
            atom._undo(all_inputs[index], results[index])
        error = late or error
        if items:
            raise item_results.with_result(
                TaskFailed(f"task {atom.spec.name!r}, one of {len(keys)} items failed: "
                           f"{error}"), [outputs[index] for index in sorted(outputs)])
        raise ActionFailed(error, data=data)
    if waiting:
        deadlines = [row.deadline for row in waiting if row.deadline is not None]
        raise Waiting([row.id for row in waiting], min(deadlines) if deadlines else None)
    return results


def _start(atom: ActionAtom, inputs: Mapping[str, Any], attempt: int, item: int | None,
           timeout: float | None, deadline: float | None) -> ActionExecution:
    """Start the work (the action's ``execute``), then record its RUNNING execution,
    due by the task's ``deadline`` (None: ``timeout`` from now, its first item); an
    action that cannot start is recorded failed, as an item whose action failed."""
    action = atom._get_action()
    scope = atom.runtime.scope
    error: str | None = None
    try:
        with undo_journal.ExecutionUndoJournal.running(atom.name, attempt, item), \
                execution_scope.acting_in(scope.env):
            action.execute(**inputs)
    except Exception as exc:
        error = str(exc) or type(exc).__name__
        if item is None:
            raise ActionFailed(error) from exc  # the task's own error
    store = atom.runtime.async_actions
    row = store.start(scope.execution_id, atom.name, scope.atom_id(atom.name), attempt,
                      item, timeout, deadline=deadline)
    if error is not None and row.state == RUNNING:
        try:
            return store.complete(row.id, ERROR, error)
        except Conflict:  # its task's deadline passed meanwhile: timed out
            return store.get(row.id) or row
    return row


def _error_text(output: Any) -> str:
    """The error a client gave (or a timeout's, a cancellation's) as the task's error."""
    if isinstance(output, str):
        return output
    return json.dumps(output, sort_keys=True)


def _block(atom: ActionAtom, waiting: Waiting) -> None:
    """Wait in this thread until one of ``waiting``'s action executions is no longer
    RUNNING or its deadline passed (a compiled graph's task); a stop request (Ctrl-C)
    stops the wait."""
    store = atom.runtime.async_actions
    execution_id = atom.runtime.scope.execution_id
    event = threading.Event()
    async_actions.register(execution_id, event)
    try:
        while True:
            if atom.runtime.stop_check is not None:
                atom.runtime.stop_check(atom.spec.name)
            states = store.states(waiting.ids)
            if any(state != RUNNING for state, _deadline in states.values()):
                return
            pause = async_actions.POLL_INTERVAL
            if waiting.deadline is not None:
                left = waiting.deadline - clock.time()
                if left <= 0:
                    return
                pause = min(pause, left + 0.01)
            clock.wait(event, pause)
            event.clear()
    finally:
        async_actions.unregister(execution_id, event)
