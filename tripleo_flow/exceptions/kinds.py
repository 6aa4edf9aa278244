"""The kinds of error: each maps once to an exit code and an HTTP status.

An error may carry :class:`Hint` values, the next steps it suggests, which each
interface words its own way: ``str(error)`` is the CLI's (and a Python caller's)
message, naming ``tripleo-flow`` commands; the HTTP API answers
:meth:`TripleoFlowError.render` ``(API)``, naming its own requests, with the hints
also as data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: The interfaces a message is worded for.
CLI = "cli"
API = "api"


@dataclass(frozen=True)
class Hint:
    """One next step: the CLI command that does it, and the HTTP API request that does
    it (None when only someone on the server can: launching Heat, installing).

    Worded as ``"{lead}: tripleo-flow {command}"`` (CLI) or ``"{lead}: {request}"``
    (HTTP API), after ``sep``.
    """

    lead: str
    command: str
    request: str | None = None
    sep: str = " "
    #: Words after the step ("(or set [ironic] endpoint).").
    tail: str = ""

    def words(self, interface: str = CLI) -> str:
        lead = f"{self.lead}: " if self.lead else ""
        if interface == API and self.request:
            step = f"{lead}{self.request}"
        elif interface == API:
            where = f"{self.lead} on the server" if self.lead else "on the server"
            step = f"{where}: tripleo-flow {self.command}"
        else:
            step = f"{lead}tripleo-flow {self.command}"
        return f"{self.sep}{step}{self.tail}"

    def as_json(self) -> dict[str, Any]:
        return {"command": f"tripleo-flow {self.command}", "request": self.request}


class TripleoFlowError(Exception):
    """Base of every error tripleo-flow raises on purpose.

    :param hints: the next steps the message suggests (keyword only), appended to the
        first argument in each interface's words
    """

    kind = "error"
    #: what a client may branch on (the HTTP API's ``reason``), None for most errors
    reason_code: str | None = None

    def __init__(self, *args: Any, hints: Sequence[Hint] = ()) -> None:
        self.hints = tuple(hints)
        self.text = str(args[0]) if args else ""
        if self.hints:
            args = (self.text + "".join(h.words(CLI) for h in self.hints), *args[1:])
        super().__init__(*args)

    def details(self) -> dict[str, Any]:
        """What a client needs to word the error itself (with :attr:`reason_code`)."""
        return {}

    def render(self, interface: str = CLI) -> str:
        """The message in the words of ``interface`` (:data:`CLI` or :data:`API`)."""
        if not self.hints:
            return str(self)
        return self.text + "".join(h.words(interface) for h in self.hints)


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
