"""The kinds of error: each maps once to an exit code and an HTTP status."""

from __future__ import annotations


class TripleoFlowError(Exception):
    """Base of every error tripleo-flow raises on purpose."""

    kind = "error"


def _shown(name: str, limit: int = 60) -> str:
    """``name`` quoted for a message, shortened when it is long."""
    return repr(name) if len(name) <= limit else f"{name[:limit]!r}... ({len(name)} characters)"


class InvalidInput(TripleoFlowError):
    kind = "invalid-input"


class NotFound(TripleoFlowError):
    kind = "not-found"


class Conflict(TripleoFlowError):
    kind = "conflict"


class BackendUnavailable(TripleoFlowError):
    kind = "backend-unavailable"


class WorkflowFailed(TripleoFlowError):
    kind = "workflow-failed"

    def __init__(self, workflow: str, task: str | None, cause: str, reverted: bool) -> None:
        where = f" at task {task!r}" if task else ""
        after = "its completed tasks were reverted" if reverted else "nothing was reverted"
        super().__init__(f"Workflow {workflow!r} failed{where}: {cause} ({after}).")
        self.workflow = workflow
        self.task = task
        self.cause = cause
        self.reverted = reverted
