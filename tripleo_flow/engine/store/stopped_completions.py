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
engine of a stopped execution no longer runs, so the task's ``publish`` is not
evaluated (Mistral publishes into the task execution only: the workflow's output is
not changed by it either).
"""

from __future__ import annotations

import dataclasses
from typing import Any

#: The task states a stopped execution's completed asynchronous task reads.
SUCCESS, ERROR, RUNNING = "SUCCESS", "ERROR", "RUNNING"


def view(record: Any, actions: list[Any]) -> Any:
    """Task record ``record`` (RUNNING when the execution was stopped) as its action
    executions ``actions`` (of that task, any state) leave it; None when it has none
    (it was not waiting for a client: the caller shows it as it shows others)."""
    latest: dict[Any, Any] = {}
    for action in actions:  # the last attempt of each item
        if action.item not in latest or action.attempt >= latest[action.item].attempt:
            latest[action.item] = action
    if not latest:
        return None
    found = [latest[item] for item in sorted(latest, key=lambda i: -1 if i is None else i)]
    if any(a.state == RUNNING for a in found):
        return record  # a client may still complete it (Mistral's task stays RUNNING)
    if any(a.state not in (SUCCESS, ERROR) for a in found):
        return None  # cancelled (a cancel came after the stop)
    failed = [a for a in found if a.state == ERROR]
    result = found[0].output if None in latest else [a.output for a in found]
    return dataclasses.replace(
        record, state=ERROR if failed else SUCCESS, result=result,
        error=str(failed[0].output) if failed else None,
        state_info=str(failed[0].output) if failed else None, waiting=[], progress=None,
        finished_at=max(a.updated_at or 0.0 for a in found) or record.finished_at)


__all__ = ["view"]
