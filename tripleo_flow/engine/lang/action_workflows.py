"""An action run as an execution: the one-task workflow the engine makes for it.

Mistral runs an action by itself (``POST /v2/action_executions``: a name, an input)
and records an *action execution*: its state, input and output (``{"result": ...}``).
Here every run is a workflow execution, so that an action run alone is recorded,
listed, resumed, cancelled, masked and dispatched as every other: the engine makes a
workflow of one task that runs the action with the inputs of its ``execute``
(:func:`for_action`), named ``action:NAME`` (no workbook can define such a name: a
colon is no part of a workbook's or workflow's name), whose output is the action's
result as Mistral words it, ``{"result": ...}``.  The catalog makes it when the name
is looked up (:meth:`~tripleo_flow.engine.lang.workbook_loader.Catalog.lookup`).

A named workflow that only runs one action is declared as data, an
:class:`ActionWorkflow` (its name, the action, the inputs it takes, what it
publishes), and made the same way; the layer above lists its own and the catalog
shows them in their workbooks as if read from a file (their problems, if any, found by
the same validator).  Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tripleo_flow.engine.lang.action import Action, Rerun

if TYPE_CHECKING:
    from tripleo_flow.engine.lang.workbook_model import WorkflowSpec

#: The name of an action's execution: ``action:`` and the action's name.
PREFIX = "action:"
#: What an action execution publishes and outputs: its result, as Mistral's output.
RESULT = "result"
#: Where the made workflows say they come from (their ``path``).
MADE_PATH = "<action executions>"


def execution_name(action: str) -> str:
    """The workflow name an execution of ``action`` is recorded with."""
    return PREFIX + action


def action_of(name: str) -> str | None:
    """The action an ``action:NAME`` workflow name runs, None for another name."""
    return name[len(PREFIX):] if name.startswith(PREFIX) and len(name) > len(PREFIX) else None


@dataclass(frozen=True)
class ActionWorkflow:
    """A named workflow of one task running ``action``.

    :param name: its full name (``workbook.workflow``)
    :param inputs: ``(name, default)`` of each input it takes (a name alone: required);
        each passed to the action's input of that name
    :param publish: what its task publishes (``{key: expression over task().result}``),
        each key also an output; default ``{"result": <% task().result %>}``
    :param task: its task's name (default: the workflow's short name)
    :param safe_rerun: False when a resumed execution must not run the action again
        (an action of :attr:`~tripleo_flow.engine.lang.action.Rerun.ONCE`)
    """

    name: str
    action: str
    inputs: tuple[str | tuple[str, Any], ...]
    publish: Mapping[str, str] = field(default_factory=lambda: {
        RESULT: "<% task().result %>"})
    task: str = ""
    description: str = ""
    safe_rerun: bool = True

    @property
    def workbook(self) -> str:
        return self.name.rsplit(".", 1)[0]

    @property
    def short_name(self) -> str:
        return self.name.rsplit(".", 1)[1]

    def document(self) -> dict[str, Any]:
        """The workflow as a workbook would write it."""
        names = [i if isinstance(i, str) else i[0] for i in self.inputs]
        task: dict[str, Any] = {"action": self.action,
                                "input": {n: f"<% $.{n} %>" for n in names},
                                "publish": dict(self.publish)}
        if not self.safe_rerun:
            task["safe-rerun"] = False
        return {"description": self.description,
                "input": [i if isinstance(i, str) else {i[0]: i[1]} for i in self.inputs],
                "output": {key: f"<% $.{key} %>" for key in self.publish},
                "tasks": {self.task or self.short_name: task}}


#: The workflows made from declarations, by the declaration's id (kept with it): a
#: catalog is read again whenever a workbook file changes, the declarations never do.
_MADE: dict[int, tuple[ActionWorkflow, WorkflowSpec]] = {}


def spec(workflow: ActionWorkflow) -> WorkflowSpec:
    """The workflow ``workflow`` declares (a frozen value every catalog shares)."""
    from tripleo_flow.engine.lang import workbook_model

    known = _MADE.get(id(workflow))
    if known is not None and known[0] is workflow:
        return known[1]
    made = _with_action(workbook_model.parse_workflow(
        workflow.short_name, workflow.document(), workflow.workbook, MADE_PATH),
        workflow.action)
    if len(_MADE) < 1024:  # declarations are few; a caller making them anew keeps none
        _MADE[id(workflow)] = (workflow, made)
    return made


def for_action(name: str, action: type[Action]) -> WorkflowSpec:
    """The workflow an execution of action ``name`` runs: one task, ``name``, taking
    every input of the action's ``execute`` (its defaults kept), its output
    ``{"result": the action's result}``."""
    from tripleo_flow.engine.lang import workbook_model

    inputs = tuple(i_name if required else (i_name, default)
                   for i_name, _type, required, default in action.inputs())
    made = ActionWorkflow(execution_name(name), name, inputs, task=name,
                          description=action.description(),
                          safe_rerun=action.rerun is not Rerun.ONCE)
    return _with_action(workbook_model.parse_workflow(made.name, made.document(), "",
                                                      MADE_PATH), name)


def _with_action(workflow: WorkflowSpec, action: str) -> WorkflowSpec:
    from dataclasses import replace

    return replace(workflow, runs_action=action)
