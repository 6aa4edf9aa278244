"""Compiling a checked workflow into one TaskFlow graph flow.

Each task becomes an atom (see :mod:`tripleo_flow.engine.compile.atoms`) whose
requirements are the outcomes of the tasks leading to it, so TaskFlow's graph
orders them and reverts completed ones in reverse order on a failure.  A task
with ``retry`` sits in a linear sub-flow under a retry controller; a plain
``workflow:`` task is inlined between an enter and an exit atom, one with
policies (or calling a workflow that loops, or itself, or named by an expression)
runs its workflow as a child execution (:mod:`.subworkflow`).  All atoms are
added with one ``add(*items)`` call (adding one at a time is quadratic).

A task runs at most once in such a graph: a direct workflow that loops, joins or
reaches a task from several tasks runs on :mod:`.state_machine` instead (the
runner decides with :func:`runs_as_state_machine`; one with ``workflow:`` tasks
only when it loops, or when one of them would run child executions:
:func:`starts_children`); its ``workflow:`` tasks run child executions.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from taskflow.patterns import graph_flow, linear_flow

from tripleo_flow import exceptions
from tripleo_flow.engine.compile import (
    action_atom,
    atoms,
    graph_cancels,
    subworkflow,
    workflow_atoms,
)
from tripleo_flow.engine.lang import expressions, workbook_clauses, workbook_validator
from tripleo_flow.engine.lang.workbook_loader import Catalog
from tripleo_flow.engine.lang.workbook_model import TaskSpec, WorkflowSpec

END_ATOM = "__end__"
#: Attempts of a retry controller whose task evaluates its ``count`` expression.
UNBOUNDED_ATTEMPTS = 1 << 30


@dataclass
class Compiled:
    """A compiled workflow: the flow to run and its atoms by name."""

    flow: Any
    workflow: WorkflowSpec
    atoms: dict[str, Any] = field(default_factory=dict)


def asynchronous(actions: Callable[[str], type[Any]]) -> Callable[[str | None], bool]:
    """Whether a task's action (by name, through ``actions``) is asynchronous: its task
    waits for a client (:mod:`.async_tasks`); False for an unknown name or one given by
    an expression (known only when the task runs)."""

    def check(name: str | None) -> bool:
        if not name or expressions.has_expression(name):
            return False
        try:
            return bool(getattr(actions(name), "asynchronous", False))
        except exceptions.TripleoFlowError:
            return False

    return check


def runs_as_state_machine(workflow: WorkflowSpec,
                          is_async: Callable[[str | None], bool] | None = None) -> bool:
    """Whether ``workflow`` runs on :mod:`.state_machine` rather than as a graph: a
    direct workflow with a cycle, or a task several tasks lead to or a ``join`` in one
    without ``workflow:`` tasks (the graph inlines its plain ones, as it always has),
    or one with a task whose action is asynchronous (``is_async``: the machine parks
    a task that waits for its client; a graph would hold a thread), or one with a
    ``workflow:`` task that runs child executions (the runner asks
    :func:`starts_children` too, which needs the catalog), or one where a ``fail`` or
    a ``pause`` follows a task in a transition list (:func:`starts_before_command`)."""
    if workflow.type != "direct":
        return False
    if any(starts_before_command(spec) for spec in workflow.tasks.values()):
        return True
    if is_async is not None and any(is_async(spec.action) for spec in workflow.tasks.values()):
        return True
    graph = workbook_validator.successors(workflow)
    if any(spec.workflow is not None for spec in workflow.tasks.values()):
        return workbook_validator.find_cycle(graph) is not None
    inbound: dict[str, int] = {}
    for targets in graph.values():
        for target in set(targets):
            inbound[target] = inbound.get(target, 0) + 1
    return (workbook_validator.find_cycle(graph) is not None
            or any(count > 1 for count in inbound.values())
            or any(spec.join is not None for spec in workflow.tasks.values()))


def takes_fail(workflow: WorkflowSpec) -> bool:
    """Whether a transition of ``workflow`` may fire ``fail``.  Run as an execution, such
    a workflow runs on the state machine: Mistral's task that takes ``fail`` succeeds
    while its workflow fails, and the tasks created before run on, where a graph fails
    the task's atom to stop the flow.  (A sub-workflow run inline in its parent's graph
    stops its own scope instead, and its task reads SUCCESS.)"""
    return workflow.type == "direct" and any(
        item.target == "fail" for spec in workflow.tasks.values()
        for item in spec.on_success + spec.on_error + spec.on_complete)


def starts_before_command(spec: TaskSpec) -> bool:
    """Whether a ``fail`` or a ``pause`` of ``spec``'s transitions comes after a task
    they start (``on-success`` or ``on-error``, then ``on-complete``, in list order):
    Mistral starts that task, then fails or pauses the workflow (its dispatcher runs
    the task commands listed before the state change), which the machine does and a
    graph cannot (its failed atom stops the flow, its pause suspends the engine,
    before the task's atom).  A ``succeed`` after a task needs no machine: the graph
    starts the tasks listed before it and drops what follows (Mistral's dispatcher)."""
    for first in (spec.on_success, spec.on_error):
        started = False
        for item in first + spec.on_complete:
            if item.target in ("fail", "pause") and started:
                return True
            started = started or item.target not in workbook_clauses.COMMANDS
    return False


def starts_children(workflow: WorkflowSpec, catalog: Catalog,
                    is_async: Callable[[str | None], bool] | None = None,
                    inlining: tuple[str, ...] = ()) -> bool:
    """Whether the graph of the direct ``workflow`` would hold a task that runs child
    executions (:func:`~.subworkflow.runs_apart`), its own or one of a sub-workflow
    it inlines: such a workflow runs on the state machine, where a child that pauses
    pauses it with the task RUNNING, as Mistral's parent (a graph cannot leave a task
    RUNNING)."""
    inlining = inlining + (workflow.full_name,)
    for spec in workflow.tasks.values():
        if spec.workflow is None:
            continue
        if subworkflow.dynamic(spec):
            return True
        child = catalog.lookup(spec.workflow, workflow.workbook)
        if child is None or subworkflow.runs_apart(spec, child, inlining, is_async):
            return True
        if child.type == "direct" and starts_children(child, catalog, is_async, inlining):
            return True
    return False


def _preds(workflow: WorkflowSpec) -> dict[str, list[str]]:
    graph = workbook_validator.successors(workflow)
    preds: dict[str, list[str]] = {name: [] for name in workflow.tasks}
    for name, targets in graph.items():
        for target in targets:
            preds[target].append(name)
    return preds


def _ancestors(name: str, preds: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(preds[name])
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo += preds[node]
    return seen


def _refs(spec: TaskSpec) -> set[str]:
    values: list[Any] = [spec.input, spec.input_expr, spec.publish, spec.publish_on_error,
                         [t.condition for t in spec.transitions()],
                         [t.params for t in spec.transitions()], spec.clause_publish,
                         spec.keep_result, spec.safe_rerun, spec.pause_before,
                         spec.timeout, spec.wait_before, spec.wait_after]
    if spec.with_items:
        values += [list(spec.with_items.bindings), spec.with_items.concurrency]
    if spec.retry:
        values += [spec.retry.continue_on, spec.retry.break_on, spec.retry.count,
                   spec.retry.delay]
    return expressions.task_references(values)[0]


def _selection(workflow: WorkflowSpec, target: str | None,
               preds: dict[str, list[str]]) -> list[str]:
    if target is None:
        return list(workflow.tasks)
    if workflow.type != "reverse":
        raise exceptions.InvalidInput(
            f"Workflow {workflow.full_name!r} is a direct workflow: a target task is only "
            "used by reverse workflows.")
    if target not in workflow.tasks:
        raise exceptions.InvalidInput(
            f"Workflow {workflow.full_name!r} has no task {target!r}; its tasks are: "
            f"{', '.join(workflow.tasks)}.")
    keep = _ancestors(target, preds) | {target}
    return [name for name in workflow.tasks if name in keep]


class _Builder:
    def __init__(self, catalog: Catalog, runtime: atoms.Runtime) -> None:
        self.catalog = catalog
        self.runtime = runtime
        self.items: list[Any] = []
        self.atoms: dict[str, Any] = {}
        #: The workflows being inlined (a workflow calling one of them runs apart).
        self.inlining: tuple[str, ...] = ()

    def _keep(self, atom: Any) -> Any:
        self.atoms[atom.name] = atom
        return atom

    def workflow(self, workflow: WorkflowSpec, prefix: str, target: str | None,
                 contained: bool = False) -> list[str]:
        """Add the atoms of ``workflow``; return the atom names of its last tasks.

        ``contained``: the ``workflow:`` task that runs it (or one running that one)
        answers errors, so an unhandled error fails that task rather than the whole
        execution at once.

        Only the last tasks (no successor) feed the workflow's exit atom: their
        contexts already hold everything published before them, and an exit
        atom requiring every task would make scheduling quadratic.
        """
        preds = _preds(workflow)
        names = _selection(workflow, target, preds)
        for name, spec in workflow.tasks.items():  # task(NAME) of one not run: null
            self.runtime.scope.task_specs.setdefault(prefix + name, spec)
        self.inlining = (*self.inlining, workflow.full_name)
        chosen = set(names)
        reverse = workflow.type == "reverse"
        result = []
        has_successor = {p for name in names for p in preds[name] if p in chosen}
        for name in names:
            spec = workflow.tasks[name]
            my_preds = [p for p in preds[name] if p in chosen]
            refs = _refs(spec)
            if refs:
                refs &= _ancestors(name, preds)
            links = atoms.Links(prefix=prefix, preds=tuple(prefix + p for p in my_preds),
                                refs=tuple(sorted(refs)), start=not my_preds, reverse=reverse,
                                retry=spec.retry is not None,
                                contained=contained)
            atom_name = self.task(workflow, spec, prefix + name, links)
            if name not in has_successor:
                result.append(atom_name)
        self.inlining = self.inlining[:-1]
        return result

    def task(self, workflow: WorkflowSpec, spec: TaskSpec, atom_name: str,
             links: atoms.Links) -> str:
        gate: tuple[str, ...] = ()
        if spec.pause_before not in (None, False):
            self.items.append(action_atom.PauseGate(atom_name, spec, links, self.runtime))
            gate = (action_atom.pause_symbol(atom_name),)
        if spec.workflow is not None:
            apart = functools.partial(subworkflow.SubWorkflowAtom, workbook=workflow.workbook)
            if subworkflow.dynamic(spec):  # known when the task runs
                return self._action(spec, atom_name, links, gate, apart)
            child = self.catalog.lookup(spec.workflow, workflow.workbook)
            if child is None:
                raise exceptions.WorkflowNotFound(spec.workflow)
            if subworkflow.runs_apart(spec, child, self.inlining,
                                      asynchronous(self.runtime.actions)):
                return self._action(spec, atom_name, links, gate, apart)
            links = dataclasses.replace(links, retry=False)
            child_prefix = atom_name + "/"
            enter = workflow_atoms.EnterAtom(child_prefix + "__enter__", spec, links, self.runtime,
                                    child, child_prefix, gate)
            self.items.append(self._keep(enter))
            child_atoms = self.workflow(child, child_prefix, None,
                                        contained=spec.reacts_to_errors()
                                        or links.contained)
            exit_links = atoms.Links(prefix=links.prefix, preds=(), refs=links.refs,
                                     contained=links.contained)
            self.items.append(self._keep(workflow_atoms.ExitAtom(
                atom_name, spec, exit_links, self.runtime, child, child_prefix, child_atoms)))
            return atom_name
        return self._action(spec, atom_name, links, gate, action_atom.ActionAtom)

    def _action(self, spec: TaskSpec, atom_name: str, links: atoms.Links,
                gate: tuple[str, ...], kind: Callable[..., action_atom.ActionAtom]) -> str:
        atom = self._keep(kind(atom_name, spec, links, self.runtime, gate))
        if spec.retry is None:
            self.items.append(atom)
        else:
            # A count or delay given as an expression is evaluated by the task itself,
            # which ends the retries (RetriesExhausted) once the count is reached.
            count, delay = spec.retry.count, spec.retry.delay
            controller = action_atom.DelayedTimes(
                count + 1 if isinstance(count, int) else UNBOUNDED_ATTEMPTS,
                delay if isinstance(delay, (int, float)) else 0.0,
                name=atom_name + "#retry", provides=atoms.retry_symbol(atom_name))
            self.items.append(linear_flow.Flow(atom_name + "#retry", retry=controller)
                              .add(atom))
        return atom_name


def compile_workflow(workflow: WorkflowSpec, catalog: Catalog, runtime: atoms.Runtime,
                     target: str | None = None) -> Compiled:
    """Build the TaskFlow flow of ``workflow`` (restricted to ``target``'s requirements)."""
    builder = _Builder(catalog, runtime)
    # As Mistral's: an unhandled error lets the other branches finish, then fails.
    top = builder.workflow(workflow, "", target, contained=True)
    end = graph_cancels.CancellingExit(
        END_ATOM, TaskSpec(name=""), atoms.Links(prefix="", preds=()), runtime, workflow, "",
        top, provides=atoms.OUTPUT_SYMBOL)
    builder.items.append(builder._keep(end))
    flow = graph_flow.Flow(workflow.full_name)
    flow.add(*builder.items)
    return Compiled(flow, workflow, builder.atoms)


def edges(workflow: WorkflowSpec) -> list[tuple[str, str, str]]:
    """The task graph's edges ``(from, to, label)``: ``requires`` for a reverse
    workflow, else the transition kind (``on-success``, ``on-error``,
    ``on-complete``) with its condition when it has one."""
    found: list[tuple[str, str, str]] = []
    for name, spec in workflow.tasks.items():
        if workflow.type == "reverse":
            found.extend((req, name, "requires") for req in spec.requires)
            continue
        for kind, transitions in (("on-success", spec.on_success), ("on-error", spec.on_error),
                                  ("on-complete", spec.on_complete)):
            for item in transitions:
                label = kind if item.condition is None else f"{kind}: {item.condition}"
                found.append((name, str(item.target), str(label)))
    return found


def to_graph(workflow: WorkflowSpec) -> dict[str, Any]:
    """The task graph of ``workflow`` as data: ``{"name", "type", "tasks": [{"name",
    "action", "workflow", "with_items"}], "edges": [{"from", "to", "label"}]}``."""
    return {
        "name": workflow.full_name, "type": workflow.type,
        "tasks": [{"name": name, "action": spec.action, "workflow": spec.workflow,
                   "with_items": bool(spec.with_items)}
                  for name, spec in workflow.tasks.items()],
        "edges": [{"from": a, "to": b, "label": label} for a, b, label in edges(workflow)],
    }


def to_dot(workflow: WorkflowSpec) -> str:
    """The task graph of ``workflow`` in Graphviz DOT."""
    lines = [f'digraph "{workflow.full_name}" {{', "  rankdir=LR;"]
    for name, spec in workflow.tasks.items():
        what = f"action: {spec.action}" if spec.action else f"workflow: {spec.workflow}"
        extra = " (with-items)" if spec.with_items else ""
        lines.append(f'  "{name}" [shape=box, label="{name}\\n{what}{extra}"];')
    for source, target, label in edges(workflow):
        label = label.replace('"', '\\"')
        style = ", style=dashed, color=red" if label.startswith("on-error") else ""
        lines.append(f'  "{source}" -> "{target}" [label="{label}"{style}];')
    lines.append("}")
    return "\n".join(lines)
