"""The engine's action contract, as Mistral's ``mistral_lib`` Action: a plain class a
workbook task runs, built with its context (whatever the layer above gives: the engine
only passes it on), whose :meth:`Action.execute` does the one thing it does and returns
its result, and which defines ``revert(result, **inputs)`` only where its change can be
undone.  It is no TaskFlow atom: the engine's own atom
(:mod:`tripleo_flow.engine.compile.action_atom`) evaluates the task's inputs, calls
:meth:`Action.execute`, keeps the result and, when the workflow fails, calls ``revert``.
TripleO's actions (:mod:`tripleo_flow.actions.base`) implement it.

The engine tells the context which execution and task the action runs in
(:class:`ExecutionInfo`) and how the run goes (:func:`with_run`) when the context
takes it: a dataclass with those fields (TripleO's ``ActionContext``); any other
context is passed on as given.

An input naming a file or directory on the server is declared with a path type in
``execute``'s signature (``templates: InputPath``): a plain string at run time, the
type is metadata: :mod:`tripleo_flow.engine.lang.paths` finds every such input a
workflow reaches, so a workflow started over HTTP can only give them values the
server allows (:mod:`tripleo_flow.client.paths`), while the CLI and Python callers keep
passing any local path.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, cast


@dataclasses.dataclass(frozen=True)
class ExecutionInfo:
    """Which workflow execution and task execution an action runs in (what
    ``std.mistral_http`` sends as Mistral's execution headers)."""

    workflow_name: str
    execution_id: str
    task_name: str
    task_id: str


def with_run(context: Any, **fields: Any) -> Any:
    """``context`` with ``fields`` set when it takes them all (a dataclass with those
    fields), else as given: how the engine tells a context of the run an action runs
    in: ``execution`` (:class:`ExecutionInfo`), ``undo_journal`` (where the running
    task keeps its undo record), ``stop_check`` (raises once the run should stop),
    ``api_user`` (an HTTP API user started it)."""
    if isinstance(context, type) or not dataclasses.is_dataclass(context):
        return context
    if not set(fields) <= {field.name for field in dataclasses.fields(context)}:
        return context
    return dataclasses.replace(cast(Any, context), **fields)


class Rerun(enum.Enum):
    """What running an action a second time with the same inputs does.

    A job resumed from its logbook (a conductor killed, or its claim lost) runs
    the interrupted task again from its start: every action declares which of
    these holds (``tests/unit/actions/test_action_rerun.py`` proves it).
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


class Action:
    """Base class of the actions a workbook task runs (the engine's contract)."""

    #: Entry point name (``plan.create``); filled by the registry when loaded.
    action_name: ClassVar[str] = ""
    #: True when the result is secret (passwords): the executions database keeps it
    #: masked (:mod:`tripleo_flow.engine.store.redaction`), the running workflow can still
    #: publish it.  Such an action only reads, so running it again is harmless.
    secret_result: ClassVar[bool] = False
    #: True when the action runs code taken from the plan on the machine it runs on
    #: (a playbook of the plan's config-download, whose tasks may run locally).  An
    #: execution started over the HTTP API refuses such an action unless the server
    #: allows it (``[api] allow_plan_code``): :mod:`tripleo_flow.engine.compile.atoms`.
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
    #: (:mod:`tripleo_flow.engine.compile.async_actions`).
    asynchronous: ClassVar[bool] = False

    def __init__(self, context: Any) -> None:
        self.context = context

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        """Do what the action does with its inputs (the parameters a subclass declares)
        and return its result."""
        raise NotImplementedError(f"{type(self).__name__} does not define execute()")

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
        """True when the action undoes something: it defines ``revert``."""
        return callable(getattr(cls, "revert", None))

    def completed(self, output: Any) -> Any:
        """The result of an :attr:`asynchronous` action whose client completed it with
        ``output`` (an ad-hoc action reshapes it with its ``output``)."""
        return output


def reverter(action: Action) -> Callable[..., None] | None:
    """``action``'s ``revert`` (bound), or None when the action undoes nothing."""
    revert = getattr(action, "revert", None)
    return revert if callable(revert) else None


def _hints(func: Callable[..., Any]) -> dict[str, str]:
    annotations = getattr(func, "__annotations__", {})
    return {k: (v if isinstance(v, str) else getattr(v, "__name__", str(v)))
            for k, v in annotations.items() if k != "return"}


INPUT_PATH, OUTPUT_PATH, WORK_DIR = "input-path", "output-path", "work-dir"
#: Not a path but checked with them: an input that, true, makes the action hand the
#: plan's secrets to its caller (an export with the passwords).
SECRETS_OUT = "secrets-out"

#: A file or directory the action reads (a template tree, a tarball, a playbook).
InputPath = Annotated[str, INPUT_PATH]
#: A file the action writes (an export).
OutputPath = Annotated[str, OUTPUT_PATH]
#: A directory the action reads and writes (a deployment's working directory).
WorkDir = Annotated[str, WORK_DIR]

#: Whether what the action writes for its caller holds the plan's secrets: over the
#: HTTP API always false (nothing secret is handed to an API user).
SecretsOut = Annotated[bool, SECRETS_OUT]

#: The kind of each path type, by its name as it appears in an action's signature.
KINDS = {"InputPath": INPUT_PATH, "OutputPath": OUTPUT_PATH, "WorkDir": WORK_DIR,
         "SecretsOut": SECRETS_OUT}


def path_kind(annotation: Any) -> str | None:
    """The path kind of an input's annotation (the type, or its text under ``from
    __future__ import annotations``: ``"InputPath | None"`` too), None if not a path."""
    if isinstance(annotation, str):
        for part in annotation.replace("Optional[", "").replace("]", "").split("|"):
            if part.strip() in KINDS:
                return KINDS[part.strip()]
        return None
    for kind in getattr(annotation, "__metadata__", ()):
        if kind in KINDS.values():
            return str(kind)
    return None


def path_inputs(execute: Any) -> dict[str, str]:
    """``{input name: path kind}`` of an action's ``execute`` method."""
    annotations = inspect.get_annotations(execute)
    found = {name: path_kind(value) for name, value in annotations.items() if name != "return"}
    return {name: kind for name, kind in found.items() if kind}
