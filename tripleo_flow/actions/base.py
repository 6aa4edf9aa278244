"""The base of every action: a narrow TaskFlow task with a description.

An action is registered under the stevedore namespace ``tripleo_flow.actions``
as ``<area>.<verb>``.  Its inputs are the parameters of :meth:`execute` (typed;
TaskFlow derives ``requires`` from them); its one-line description is the first
line of the class docstring.  Every action that changes something implements
:meth:`revert` to undo exactly what :meth:`execute` did, using the persisted
result, and is safe to run twice.

Actions reach the outside world only through the :class:`ActionContext` they
are built with; they never call another action.
"""

from __future__ import annotations

import base64
import enum
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from taskflow import task

from tripleo_flow.config import LIMITS_OPTS
from tripleo_flow.core.progress import Progress, Reporter
from tripleo_flow.core.signatures import CachedSignatures

if TYPE_CHECKING:
    from oslo_config import cfg

    from tripleo_flow.plans.lock import PlanLocks
    from tripleo_flow.plans.store import PlanStore


T = TypeVar("T")


class UndoJournal(Protocol):
    """Where the running task keeps its undo record before it changes anything.

    A resumed execution runs the task a crash interrupted again with the same
    inputs; if the first run had already made its change, the second would compute
    its undo record from the changed state (the "previous" values would be the new
    ones) and a later revert could not restore the original.  The workflow runner's
    journal (:mod:`tripleo_flow.flows.undo_journal`) keeps the first run's record,
    keyed by execution, task, attempt, item and inputs, and hands it to the re-run.
    """

    def recall(self, make: Callable[[], T], part: str = "") -> T:
        """The record (or the named ``part`` of it) kept for the running task, or
        ``make()`` kept now."""
        ...


@dataclass(frozen=True)
class ExecutionInfo:
    """Which workflow execution and task execution an action runs in (what
    ``std.mistral_http`` sends as Mistral's execution headers)."""

    workflow_name: str
    execution_id: str
    task_name: str
    task_id: str


@dataclass(frozen=True)
class ActionContext:
    """What actions may use: the plan store, plan locks and the configuration; where
    they report progress, and how they learn that the operation should stop."""

    store: PlanStore
    locks: PlanLocks
    conf: cfg.ConfigOpts | None = None
    #: Told what the running action has done so far (a plan's check and upload, a
    #: stack's resources and events, a node's state, a validation): the one channel
    #: every interface's progress comes through.
    reporter: Reporter | None = None
    #: Raises :class:`~tripleo_flow.exceptions.Interrupted` once a signal asked the
    #: operation to stop; long waits call it (:meth:`check_stop`) between looks.
    stop_check: Callable[[], None] | None = None
    #: Keeps the running task's undo record for a re-run (:class:`UndoJournal`); None
    #: outside a workflow (an action called directly computes its record each time).
    undo_journal: UndoJournal | None = None
    #: The workflow execution and task the action runs in (None outside a workflow).
    execution: ExecutionInfo | None = None

    def report(self, progress: Progress) -> None:
        """Tell the reporter, if any, how far the running action is."""
        if self.reporter is not None:
            self.reporter(progress)

    def undo_record(self, make: Callable[[], T], part: str = "") -> T:
        """The undo record of the running task: ``make()`` (computed from the state
        before the change), kept before the action changes anything; a re-run of the
        same task gets the first run's record instead of computing it again.

        :param part: names a later part of the record, learnt during the change (the
            stored version a deletion left)
        """
        return self.once(make, part)

    def once(self, make: Callable[[], T], part: str = "") -> T:
        """What ``make()`` gave on the running task's first run (a time, an id, an undo
        record): a re-run of the task (a resumed execution) gets the same value back.
        Outside a workflow, ``make()``."""
        if self.undo_journal is None:
            return make()
        return self.undo_journal.recall(make, part)

    def check_stop(self) -> None:
        """Raise :class:`~tripleo_flow.exceptions.Interrupted` when asked to stop."""
        if self.stop_check is not None:
            self.stop_check()

    def limit(self, name: str) -> int:
        """The ``[limits]`` option ``name``: configured, or its default without a configuration."""
        if self.conf is not None:
            return int(getattr(self.conf.limits, name))
        return int(next(opt.default for opt in LIMITS_OPTS if opt.name == name))

    def seconds(self, name: str) -> float:
        """The ``[limits]`` time option ``name`` (seconds), as :meth:`limit`."""
        if self.conf is not None:
            return float(getattr(self.conf.limits, name))
        return float(next(opt.default for opt in LIMITS_OPTS if opt.name == name))


class Rerun(enum.Enum):
    """What running an action a second time with the same inputs does.

    A job resumed from its logbook (a conductor killed, or its claim lost) runs
    the interrupted task again from its start: every action declares which of
    these holds (``tests/unit/workflows/test_action_rerun.py`` proves it).
    """

    #: It changes nothing; a second run returns what the first did.
    READS = "reads"
    #: A second run leaves the state the first left: each side effect happens once.
    CONVERGES = "converges"
    #: A second run fails with an error that says what is wrong and changes nothing:
    #: what the first run did stands (the plan is deleted, the file is written...).
    REFUSES = "refuses"
    #: A second run would do it again with new values (a password rotation): every
    #: workflow task running it is marked ``safe-rerun: false``, so a resumed
    #: execution stops there with an error saying to check and run it again.
    ONCE = "once"
    #: It repeats what the workflow asks of a service (an HTTP request, a playbook):
    #: safe when that is; a workflow task that is not marks itself ``safe-rerun: false``.
    CALLER = "caller"


class Action(CachedSignatures, task.Task):  # type: ignore[misc]
    """Base class of tripleo-flow actions."""

    #: Entry point name (``plan.create``); filled by the registry when loaded.
    action_name: ClassVar[str] = ""
    #: Name of the value the action provides when it is used in a flow.
    default_provides: ClassVar[str | None] = None
    #: True when the result is secret (passwords): the executions database keeps it
    #: masked (:mod:`tripleo_flow.flows.redaction`), the running workflow can still
    #: publish it.  Such an action only reads, so running it again is harmless.
    secret_result: ClassVar[bool] = False
    #: True when the action runs code taken from the plan on the machine it runs on
    #: (a playbook of the plan's config-download, whose tasks may run locally).  An
    #: execution started over the HTTP API refuses such an action unless the server
    #: allows it (``[api] allow_plan_code``): :mod:`tripleo_flow.flows.atoms`.
    runs_plan_code: ClassVar[bool] = False
    #: True when the action connects from the machine it runs on to a host its inputs
    #: name, by a protocol other than HTTP (``std.ssh``, ``std.email``).  An execution
    #: started over the HTTP API refuses it unless the server allows it (``[api]
    #: allow_outbound_actions``).
    connects_out: ClassVar[bool] = False
    #: What a second run with the same inputs does (:class:`Rerun`); every
    #: registered action declares it.
    rerun: ClassVar[Rerun | None] = None
    #: True when the action only starts its work (Mistral's asynchronous actions,
    #: ``is_sync() == False``): its task then waits, RUNNING, until a client completes
    #: the action execution through the API with its result or its error
    #: (:mod:`tripleo_flow.flows.async_actions`).
    asynchronous: ClassVar[bool] = False

    def __init__(self, context: ActionContext, name: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("provides", self.default_provides)
        super().__init__(name=name or self.action_name or type(self).__name__, **kwargs)
        self.context = context

    @classmethod
    def description(cls) -> str:
        """The one-line description: the first line of the class docstring."""
        doc = inspect.getdoc(cls) or ""
        return doc.splitlines()[0] if doc else ""

    @classmethod
    def inputs(cls) -> list[tuple[str, str, bool, Any]]:
        """``(name, type, required, default)`` for each input of :meth:`execute`."""
        sig = inspect.signature(cls.execute)
        hints = _hints(cls.execute)
        result = []
        for pname, param in sig.parameters.items():
            if pname == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            required = param.default is param.empty
            result.append((pname, hints.get(pname, "any"), required,
                           None if required else param.default))
        return result

    @classmethod
    def has_revert(cls) -> bool:
        """True when the action undoes something: a class below Action defines revert."""
        return any("revert" in vars(c) for c in cls.__mro__
                   if c is not Action and isinstance(c, type) and issubclass(c, Action))

    def run(self, **inputs: Any) -> Any:
        """Execute the action outside a flow (for a direct action call)."""
        return self.execute(**inputs)

    def completed(self, output: Any) -> Any:
        """The result of an :attr:`asynchronous` action whose client completed it with
        ``output`` (an ad-hoc action reshapes it with its ``output``)."""
        return output


def _hints(func: Callable[..., Any]) -> dict[str, str]:
    annotations = getattr(func, "__annotations__", {})
    return {k: (v if isinstance(v, str) else getattr(v, "__name__", str(v)))
            for k, v in annotations.items() if k != "return"}


def encode_blobs(blobs: dict[str, bytes]) -> dict[str, str]:
    """Bytes values as base64 text, so an action result persists as JSON."""
    return {name: base64.b64encode(data).decode("ascii") for name, data in blobs.items()}


def decode_blobs(blobs: dict[str, str]) -> dict[str, bytes]:
    """The inverse of :func:`encode_blobs`."""
    return {name: base64.b64decode(text) for name, text in blobs.items()}
