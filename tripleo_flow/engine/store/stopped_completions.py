"""Completions of asynchronous actions that arrive after their execution was stopped
with SUCCESS or ERROR, as Mistral records them.

Mistral's ``stop_workflow`` (``execution-update -s SUCCESS|ERROR``) ends the workflow
execution at once but leaves its running task executions and their action executions
RUNNING.  A client may still complete such an action execution
(``action_handler.on_action_complete``): the action execution takes the completion's
state and output (``Action.complete``), then its task execution completes with that
state, its result the output, its ``state_info`` the error
(``RegularTask.on_action_complete``), and ``continue_workflow`` starts nothing in the
completed workflow, whose state and output stay what the stop gave them.

Here a stop leaves the waiting action executions RUNNING (a cancel still cancels
them), and :func:`view` shows the task execution a reader sees: RUNNING while one of
its action executions waits, then SUCCESS or ERROR with the completion's output.  The
engine of a stopped execution no longer runs: the completion itself evaluates the
task's ``publish`` (``publish-on-error`` after an error) as Mistral's
``data_flow.publish_variables`` (:mod:`~tripleo_flow.engine.compile.stopped_publish`)
and keeps it in the task's atom metadata (:data:`KEPT`, masked as every record): it
is the task's ``published``; an expression that fails makes the task ERROR with the
error as its ``state_info`` (Mistral's ``force_fail_task``).  Neither changes the
workflow's state or output.

A ``with-items`` task with ``concurrency`` had items not yet started when it was
stopped: as Mistral's ``WithItemsTask.on_action_complete`` (which looks at no workflow
state), each completion starts the next items
(:mod:`~tripleo_flow.engine.compile.stopped_items`, over what the task kept as it
first waited: :data:`WAIT_ITEMS`); the task completes once every item was completed.
A task whose ``timeout`` passes after the stop completes ERROR with the timeout's
error then, as Mistral's ``TimeoutPolicy`` completes it (:func:`timed_out`): it
publishes on error, and a completion of its other items changes nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tripleo_flow.engine.store.execution_records import masked

#: The task states a stopped execution's completed asynchronous task reads.
SUCCESS, ERROR, RUNNING = "SUCCESS", "ERROR", "RUNNING"
#: Atom metadata key of what a completion after the stop published
#: (``{"published": {...}}``), or the error its ``publish`` raised (``{"error": ...}``).
KEPT = "stopped_publish"
#: Atom metadata key of the inbound context a task kept as its asynchronous action
#: first waited (:meth:`~tripleo_flow.engine.compile.execution_scope.Scope.keep_wait_context`).
WAIT_CONTEXT = "wait_ctx"
#: Atom metadata key of what a ``with-items`` task whose ``concurrency`` left items
#: unstarted kept as it first waited: ``{"count": N, "inputs": [...], "width": W,
#: "timeout": T, "action": NAME}`` (:mod:`~tripleo_flow.engine.compile.stopped_items`).
WAIT_ITEMS = "wait_items"
#: Atom metadata key of the name of the action a task waited for (an ad-hoc action's
#: ``output`` reshapes a completion's: :data:`KEPT` holds the ``result`` then).
WAIT_ACTION = "wait_action"


def latest(actions: list[Any]) -> list[Any]:
    """The last attempt of each item of ``actions``, in item order."""
    found: dict[Any, Any] = {}
    for action in actions:
        if action.item not in found or action.attempt >= found[action.item].attempt:
            found[action.item] = action
    return [found[item] for item in sorted(found, key=lambda i: -1 if i is None else i)]


def timed_out(action: Any) -> bool:
    """Whether action execution ``action`` failed by its task's ``timeout`` (a client's
    completion is recorded before the deadline, a timeout at or after it)."""
    return (action.state == ERROR and action.deadline is not None
            and (action.updated_at or 0.0) >= action.deadline)


def count(meta: Any) -> int | None:
    """How many items the task whose atom metadata is ``meta`` runs, when its
    ``concurrency`` left some unstarted as it first waited (:data:`WAIT_ITEMS`)."""
    kept = meta.get(WAIT_ITEMS) if isinstance(meta, dict) else None
    return int(kept["count"]) if isinstance(kept, dict) and "count" in kept else None


def completed(actions: list[Any], total: int | None = None
              ) -> tuple[str, Any, str | None] | None:
    """``(state, result, error)`` of the task whose action executions are ``actions``
    (of that task, any state) once a client completed all (the last attempt of each
    item, ``total`` items when given; ``with-items``: the result lists the items'
    outputs, as Mistral's), or once one timed out (ERROR with its error, at once, as
    Mistral's ``TimeoutPolicy``); None while one waits or is not started yet, when one
    was cancelled, or there is none."""
    found = latest(actions)
    late = next((a for a in found if timed_out(a)), None)
    if late is None and (not found or any(a.state not in (SUCCESS, ERROR) for a in found)
                         or (total is not None and len(found) < total)):
        return None
    failed = [late] if late is not None else [a for a in found if a.state == ERROR]
    result = found[0].output if found[0].item is None else [a.output for a in found]
    return (ERROR if failed else SUCCESS, result,
            str(failed[0].output) if failed else None)


def view(record: Any, actions: list[Any], meta: Any = None) -> Any:
    """Task record ``record`` (RUNNING when the execution was stopped) as its action
    executions ``actions`` (of that task, any state) leave it, with what its completion
    published (its atom's ``meta``: :data:`KEPT`); None when it has none (it was not
    waiting for a client: the caller shows it as it shows others).  Completed, it
    reads RUNNING until its publish was evaluated (as Mistral's task completes and
    publishes in one transaction), unless it kept no context to evaluate it over (it
    waited before contexts were kept: it completes publishing nothing, or fails when
    it had something to publish, once settled)."""
    found = latest(actions)
    if not found:
        return None
    meta = meta if isinstance(meta, dict) else {}
    done = completed(found, count(meta))
    if done is None:
        if any(a.state == RUNNING for a in found) or all(
                a.state in (SUCCESS, ERROR) for a in found):
            return record  # a client may still complete it (Mistral's task stays RUNNING)
        return None  # cancelled (a cancel came after the stop)
    state, result, error = done
    kept = meta.get(KEPT)
    if kept is None and WAIT_CONTEXT in meta:
        return record  # its publish is being evaluated (:mod:`...compile.stopped_publish`)
    kept = kept if isinstance(kept, dict) else {}
    if "result" in kept:  # reshaped by its ad-hoc action's ``output``
        result = masked(kept["result"])
    if kept.get("error") is not None:  # its publish failed: Mistral's force_fail_task
        state, error = ERROR, str(kept["error"])
    return dataclasses.replace(
        record, state=state, result=result, error=error, state_info=error,
        published=masked(dict(kept.get("published") or {})), waiting=[], progress=None,
        finished_at=max(a.updated_at or 0.0 for a in found) or record.finished_at)


__all__ = ["KEPT", "WAIT_ACTION", "WAIT_CONTEXT", "WAIT_ITEMS", "completed", "count", "latest",
           "timed_out", "view"]
