"""What listeners of a running execution hear: a :class:`ProgressEvent` each time a task
changes state (from the engine's atom notifier: :func:`listen`) or its action reports
progress."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from taskflow import states
from taskflow.types import failure, notifier

from tripleo_flow.common import clock
from tripleo_flow.engine.compile import atoms, execution_scope, task_progress


@dataclass(frozen=True)
class ProgressEvent:
    """A task of an execution changed state."""

    execution_id: str
    workflow: str
    task: str
    event: str  # started, succeeded, skipped, failed, reverting, reverted, retrying, progress
    timestamp: float
    result: Any = None
    error: str | None = None
    #: For ``progress``: what the task's action reported (stage, done, total, status).
    progress: dict[str, Any] | None = None
    #: For ``progress`` in the process that runs the task: the action's own typed
    #: report (the layer above's type: TripleO's stack progress has its events too).
    report: task_progress.Progress | None = None


Listener = Callable[[ProgressEvent], None]

#: The TaskFlow atom states a listener hears of, by the event it gets.
EVENTS = {states.RUNNING: "started", states.SUCCESS: "succeeded", states.FAILURE: "failed",
           states.REVERTING: "reverting", states.REVERTED: "reverted",
           states.RETRYING: "retrying"}


def listen(engine: Any, execution_id: str, workflow: str,
            listeners: tuple[Listener, ...]) -> None:
    """Forward the engine's atom state changes (its ``atom_notifier``) to listeners."""

    def on_state(event_type: str, details: Mapping[str, Any]) -> None:
        name = details.get("task_name")
        event = EVENTS.get(event_type)
        if event is None or not name or execution_scope.internal(name):
            return
        result, error = details.get("result"), None
        if isinstance(result, failure.Failure):
            error, result = str(result.exception_str), None
        elif isinstance(result, Mapping) and "state" in result:
            if result["state"] == atoms.SKIPPED:
                event = "skipped"
            elif result["state"] == atoms.ERROR:
                event, error = "failed", result.get("error")
            result = result.get("result")
        progress = ProgressEvent(execution_id, workflow, name, event, clock.time(),
                                 result, error)
        for listener in listeners:
            listener(progress)

    engine.atom_notifier.register(notifier.Notifier.ANY, on_state)


__all__ = ["EVENTS", "Listener", "ProgressEvent", "listen"]
