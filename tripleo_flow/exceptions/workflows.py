"""Errors raised while a workbook runs: by its tasks, engine commands and expressions."""

from __future__ import annotations

from typing import Any

from tripleo_flow.exceptions.kinds import InvalidInput, TripleoFlowError


class TaskFailed(TripleoFlowError):
    """A workbook task failed; its own action (if it ran) is already undone."""


class FailCommand(TaskFailed):
    """A ``fail`` transition ended the workflow."""


class JoinFailed(TaskFailed):
    """A join can no longer fire: a task it waits for failed (the workflow's error
    takes that task's kind)."""


class BreakRetry(TaskFailed):
    """``retry: break-on`` matched: stop retrying."""


class RetriesExhausted(TaskFailed):
    """A task whose retry ``count`` is an expression failed its last attempt."""


class ChildPaused(TripleoFlowError):
    """A ``workflow:`` task's child execution paused (its own ``pause`` command, or a
    pause asked of it): the task stays RUNNING and its execution pauses too, as
    Mistral's parent does; resuming the parent resumes the child."""

    def __init__(self, task: str, execution_id: str) -> None:
        super().__init__(f"task {task!r}: its sub-workflow execution {execution_id!r} "
                         "paused; resume the parent execution (or this one) to go on.")
        self.task = task
        self.execution_id = execution_id


class ChildCancelled(ChildPaused):
    """A ``workflow:`` task's child execution was cancelled: the task reads CANCELLED
    with the child's message and fires no transition; the parent's other branches run
    to their ends, then the parent ends CANCELLED (``Cancelled tasks: TASK``), as
    Mistral's.  Neither ``on-error`` nor ``retry`` handles it (a :class:`ChildPaused`
    as far as they are concerned)."""

    def __init__(self, task: str, execution_id: str, state_info: str | None = None) -> None:
        TripleoFlowError.__init__(
            self, f"task {task!r}: its sub-workflow execution {execution_id!r} was "
            "cancelled" + (f" ({state_info})" if state_info else "") + ".")
        self.task = task
        self.execution_id = execution_id
        self.state_info = state_info


class ActionFailed(TripleoFlowError):
    """Raised by ``std.fail`` and by a failed ``std.http`` request.

    :param data: the action's error data (keyword only): what ``task().result`` reads
        after the error, as Mistral's ``Result(error=...)``; None: the message
    """

    def __init__(self, *args: Any, data: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.data = data


class ExpressionError(InvalidInput):
    """An expression could not be parsed or evaluated."""

    def __init__(self, expression: str, reason: str) -> None:
        super().__init__(f"Cannot evaluate {expression.strip()!r}: {reason}")
        self.expression = expression
        self.reason = reason
