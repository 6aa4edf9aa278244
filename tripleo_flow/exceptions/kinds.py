"""The kinds of error: each maps once to an exit code and an HTTP status.

An error may carry :class:`Hint` values, the next steps it suggests, which each
interface words its own way (:mod:`.operations`: a hint names an operation, the
interfaces register how they spell it): ``str(error)`` is the CLI's message, naming
``tripleo-flow`` commands (a Python caller's too once it registered the CLI's
words: ``tripleo_flow.cli.hint_words.install()``); the HTTP API answers
:meth:`TripleoFlowError.render` ``(API)``, naming its own requests, with the hints
also as data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tripleo_flow.exceptions import operations
from tripleo_flow.exceptions.operations import API, CLI


@dataclass(frozen=True)
class Hint:
    """One next step: the operation that does it (one of
    :data:`~tripleo_flow.exceptions.operations.OPERATIONS`) and its arguments,
    which each interface spells its own way (the CLI as a ``tripleo-flow``
    command, the HTTP API as a request, or "on the server: ..." when only the
    server can do it).

    Worded as ``"{lead}: tripleo-flow {command}"`` (CLI) or ``"{lead}: {request}"``
    (HTTP API), after ``sep``.  ``command`` and ``request`` are set only on a hint
    read back from a record an older version wrote, its words kept as they were.
    """

    lead: str
    op: str = ""
    args: Mapping[str, object] = field(default_factory=dict, hash=False)
    sep: str = " "
    #: Words after the step ("(or set [ironic] endpoint).").
    tail: str = ""
    command: str | None = field(default=None, kw_only=True)
    request: str | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.command is not None:
            return
        wanted = operations.OPERATIONS.get(self.op)
        if wanted is None or set(wanted.args) != set(self.args):
            raise ValueError(f"no operation {self.op!r} of arguments {sorted(self.args)}")
        object.__setattr__(self, "args", {k: str(v) for k, v in self.args.items()})

    def _command(self) -> str | None:
        """The CLI's words (None: only the HTTP API does it)."""
        if self.command is not None:
            return f"tripleo-flow {self.command}"
        if operations.OPERATIONS[self.op].api_only:
            return None
        spelled = operations.spell(CLI, self.op, self.args)
        return f"tripleo-flow {spelled}" if spelled else operations.neutral(self.op, self.args)

    def _request(self) -> str | None:
        if self.command is not None:
            return self.request
        return operations.spell(API, self.op, self.args)

    def words(self, interface: str = CLI) -> str:
        lead = f"{self.lead}: " if self.lead else ""
        request = self._request() if interface == API else None
        command = self._command()
        if request:
            step = f"{lead}{request}"
        elif interface == API:
            where = f"{self.lead} on the server" if self.lead else "on the server"
            step = f"{where}: {command or operations.neutral(self.op, self.args)}"
        elif command is None:  # the CLI's user is told the request
            step = f"{lead}{self._request() or operations.neutral(self.op, self.args)}"
        else:
            step = f"{lead}{command}"
        return f"{self.sep}{step}{self.tail}"

    def as_json(self) -> dict[str, Any]:
        return {"command": self._command(), "request": self._request()}

    def as_record(self) -> dict[str, Any]:
        """What a record keeps of it (:meth:`from_record` reads it back, and what
        older versions kept: the words themselves)."""
        return {"lead": self.lead, "op": self.op, "args": dict(self.args), "sep": self.sep,
                "tail": self.tail}

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Hint:
        data = dict(data)
        if "command" in data and "op" not in data:  # kept by an older version: its words
            return cls(str(data.get("lead", "")), sep=str(data.get("sep", " ")),
                       tail=str(data.get("tail", "")), command=str(data["command"]),
                       request=data.get("request"))
        return cls(str(data["lead"]), str(data["op"]), dict(data.get("args") or {}),
                   str(data.get("sep", " ")), str(data.get("tail", "")))


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
