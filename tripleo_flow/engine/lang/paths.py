"""Which inputs of a workflow end up as server paths in its actions.

An action marks an input that names a server file or directory with a path type
(:mod:`tripleo_flow.engine.lang.action`).  :func:`path_inputs` follows every task of a
workflow, and of the workflows it calls, and returns the workflow inputs that
reach such an action input, with their kind.  It refuses (``PathNotAllowed``)
a workflow where a path input of an action gets anything else than a workflow
input passed straight through (``<% $.templates %>``): a literal, a computed
expression, a with-items variable, a published value, a default of a called
workflow.  A caller that must control every server path (the HTTP API) then only
has to check the values of the returned inputs.  Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.engine.lang import expressions
from tripleo_flow.engine.lang.action import Action
from tripleo_flow.engine.lang.action import path_inputs as action_path_inputs
from tripleo_flow.engine.lang.workbook_loader import Catalog
from tripleo_flow.engine.lang.workbook_model import TaskSpec, WorkflowSpec

#: ``<% $.name %>`` or ``{{ _.name }}``: a workflow input passed through unchanged.
_PASS_THROUGH = re.compile(r"^\s*(?:<%\s*\$\.([A-Za-z_]\w*)\s*%>"
                           r"|\{\{\s*_\.([A-Za-z_]\w*)\s*\}\})\s*$")


def _reference(value: Any) -> str | None:
    match = _PASS_THROUGH.match(value) if isinstance(value, str) else None
    return (match.group(1) or match.group(2)) if match else None


def _shadowed(workflow: WorkflowSpec) -> set[str]:
    """Context names a task can overwrite (published) in ``workflow``."""
    names: set[str] = set()
    for task in workflow.tasks.values():
        names |= set(task.publish) | set(task.publish_on_error)
    return names


class _Tracer:
    def __init__(self, catalog: Catalog, actions: Callable[[str], type[Action]]) -> None:
        self.catalog = catalog
        self.actions = actions
        self.problems: list[str] = []
        self.done: dict[str, dict[str, str]] = {}

    def workflow(self, workflow: WorkflowSpec, stack: tuple[str, ...] = ()) -> dict[str, str]:
        """``{input: kind}`` of ``workflow``; problems are collected."""
        if workflow.full_name in self.done:
            return self.done[workflow.full_name]
        if workflow.full_name in stack:  # a call cycle: the validator reports it
            return {}
        kinds: dict[str, str] = {}
        declared = {i.name for i in workflow.inputs}
        shadowed = _shadowed(workflow)
        for task in workflow.tasks.values():
            for name, kind, given, default in self._needs(workflow, task, stack):
                where = f"task {task.name!r} of {workflow.full_name!r} gives {name!r}"
                if name not in task.input:
                    if default is not None:
                        self.problems.append(f"{where} its default {default!r} ({kind})")
                    continue
                ref = _reference(given)
                item_vars = {v for v, _ in task.with_items.bindings} if task.with_items else set()
                if ref is None or ref not in declared or ref in shadowed or ref in item_vars:
                    self.problems.append(f"{where} the value {str(given)[:80]!r} ({kind})")
                elif kinds.setdefault(ref, kind) != kind:
                    self.problems.append(f"input {ref!r} of {workflow.full_name!r} is used as "
                                         f"both {kinds[ref]} and {kind}")
        self.done[workflow.full_name] = kinds
        return kinds

    def _needs(self, workflow: WorkflowSpec, task: TaskSpec,
               stack: tuple[str, ...]) -> list[tuple[str, str, Any, Any]]:
        """``(input, kind, value given, default)`` of each path input the task feeds."""
        if expressions.has_expression(task.workflow or ""):
            self.problems.append(f"task {task.name!r} of {workflow.full_name!r} names its "
                                 f"workflow with an expression ({task.workflow!r}): the "
                                 "server cannot tell which of its inputs are server paths")
            return []
        if task.workflow is not None:
            child = self.catalog.lookup(task.workflow, workflow.workbook)
            if child is None:
                return []
            defaults = {i.name: i.default for i in child.inputs}
            kinds = self.workflow(child, stack + (workflow.full_name,))
            return [(name, kind, task.input.get(name), defaults.get(name))
                    for name, kind in kinds.items()]
        if expressions.has_expression(task.action or ""):
            self.problems.append(f"task {task.name!r} of {workflow.full_name!r} names its "
                                 f"action with an expression ({task.action!r}): the server "
                                 "cannot tell which of its inputs are server paths")
            return []
        try:
            action = self.actions(task.action or "std.noop")
        except exceptions.TripleoFlowError:
            return []  # an unknown action cannot run anyway
        return [(name, kind, task.input.get(name), None)
                for name, kind in action_path_inputs(action.execute).items()]


def path_inputs(workflow: WorkflowSpec, catalog: Catalog,
                actions: Callable[[str], type[Action]]) -> dict[str, str]:
    """``{input name: path kind}`` of ``workflow``'s inputs that reach an action as a
    server path (kinds: :data:`tripleo_flow.engine.lang.action.KINDS` values).

    :raises PathNotAllowed: some action path input gets another value (each is named)
    """
    tracer = _Tracer(catalog, actions)
    kinds = tracer.workflow(workflow)
    if tracer.problems:
        raise exceptions.PathNotAllowed(
            workflow.full_name, "; ".join(tracer.problems) + ". Every server path must come "
            "from a workflow input passed through as <% $.NAME %> (the server checks those); "
            "or run the workflow with the CLI.")
    return kinds
