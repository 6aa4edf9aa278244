"""Checks of parsed workbooks that need the other workbooks and the actions.

Unknown actions and workflows, action or sub-workflow inputs that are missing
or unexpected (a reverse sub-workflow's ``task_name`` that is not one of its
tasks), transitions to missing tasks, unreachable tasks, cycles of
``requires`` (a direct workflow's loop is valid: :mod:`.state_machine` runs it), bad
expressions and ``task('name')`` references to unknown tasks: each becomes a
:class:`~tripleo_flow.engine.lang.workbook_model.Problem` naming file, workflow and
task.  Pure: the caller passes the actions as a name -> class mapping.
"""

from __future__ import annotations

import inspect
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tripleo_flow.engine.lang import adhoc_actions, expressions
from tripleo_flow.engine.lang.action import Action
from tripleo_flow.engine.lang.workbook_model import Problem, TaskSpec, WorkflowSpec

#: Finds a workflow for a reference made from a workbook (None when unknown).
WorkflowLookup = Callable[[str, str], "WorkflowSpec | None"]
#: The input of a ``workflow:`` task naming the task a reverse workflow runs to.
TASK_NAME = "task_name"


def takes_target(child: WorkflowSpec) -> bool:
    """Whether a ``task_name`` given to ``child`` names the task it runs to (Mistral's
    ``task_name`` parameter): ``child`` is a reverse workflow that does not declare an
    input of that name."""
    return child.type == "reverse" and all(i.name != TASK_NAME for i in child.inputs)


def successors(workflow: WorkflowSpec) -> dict[str, list[str]]:
    """Task -> tasks it leads to (transitions; ``requires`` reversed for reverse workflows)."""
    graph: dict[str, list[str]] = {name: [] for name in workflow.tasks}
    for name, spec in workflow.tasks.items():
        if workflow.type == "reverse":
            for req in spec.requires:
                if req in graph and name not in graph[req]:
                    graph[req].append(name)
        else:
            for item in spec.transitions():
                if item.target in graph and item.target not in graph[name]:
                    graph[name].append(item.target)
    return graph


def find_cycle(graph: Mapping[str, list[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes, or None (iterative DFS)."""
    done: set[str] = set()
    for root in graph:
        if root in done:
            continue
        path: list[str] = [root]
        on_path = {root}
        iters = [iter(graph.get(root, []))]
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                iters.pop()
                node = path.pop()
                on_path.discard(node)
                done.add(node)
                continue
            if nxt in on_path:
                return path[path.index(nxt):] + [nxt]
            if nxt not in done and nxt in graph:
                path.append(nxt)
                on_path.add(nxt)
                iters.append(iter(graph.get(nxt, [])))
    return None


def validate_workflow(workflow: WorkflowSpec, actions: Mapping[str, type[Action]],
                      broken: Mapping[str, str], lookup: WorkflowLookup) -> list[Problem]:
    """Every problem of ``workflow`` (empty when it can run).

    The problems of its calls are a function of the workflow and of what its calls find
    (:class:`_Answers`): a workflow checked before, whose calls all find what they found
    then, has the problems it had then, which are not worked out again
    (:data:`_CHECKED`)."""
    local = _local_problems(workflow)
    answers = _Answers(actions, broken, lookup, workflow.workbook)
    with _LOCAL_LOCK:
        known = _CHECKED.get(id(workflow))
    if known is not None and known.workflow() is workflow and known.local is local \
            and answers.same(known.answers):
        with _LOCAL_LOCK:
            if _CHECKED.get(id(workflow)) is known:
                _CHECKED.move_to_end(id(workflow))
        return list(known.problems)
    problems = list(local.head)
    for name, spec in workflow.tasks.items():
        messages = local.tasks[name] + _check_calls(workflow, spec, answers)
        problems += [Problem(workflow.path, message, workflow.name, name)
                     for message in messages]
    problems += local.tail
    with _LOCAL_LOCK:
        _CHECKED[id(workflow)] = _Checked(weakref.ref(workflow), local, dict(answers.found),
                                          tuple(problems))
        while len(_CHECKED) > LOCAL_KEPT:
            _CHECKED.popitem(last=False)
    return problems


#: What a call of a task found, as its checks read it: a workflow (None: unknown), or
#: for an action ``("broken", why)``, ``("unknown", hint)`` or
#: ``("known", ((input, required), ...), takes_any_keyword, undoes)``.
Answer = Any


class _Answers:
    """What the calls of one workflow's tasks find around it (each asked once): the
    actions by name (``actions``, ``broken``) and the workflows by reference
    (``lookup`` near the workflow's workbook)."""

    def __init__(self, actions: Mapping[str, type[Action]], broken: Mapping[str, str],
                 lookup: WorkflowLookup, near: str) -> None:
        self._actions = actions
        self._broken = broken
        self._lookup = lookup
        self._near = near
        #: ``("action", name)`` or ``("workflow", reference)`` -> its answer
        self.found: dict[tuple[str, str], Answer] = {}

    def action(self, name: str) -> Answer:
        key = ("action", name)
        if key not in self.found:
            self.found[key] = _action_answer(name, self._actions, self._broken)
        return self.found[key]

    def workflow(self, reference: str) -> WorkflowSpec | None:
        key = ("workflow", reference)
        if key not in self.found:
            self.found[key] = self._lookup(reference, self._near)
        return self.found[key]  # type: ignore[no-any-return]

    def same(self, before: Mapping[tuple[str, str], Answer]) -> bool:
        """Whether every question asked ``before`` has the same answer now (a workflow:
        the same parsed object, which no reader changes)."""
        for (kind, name), then in before.items():
            if kind == "workflow":
                if self.workflow(name) is not then:
                    return False
            elif self.action(name) != then:
                return False
        return True


def _action_answer(name: str, actions: Mapping[str, type[Action]],
                   broken: Mapping[str, str]) -> Answer:
    if name in broken:
        return ("broken", broken[name])
    cls = actions.get(name)
    if cls is None:
        return ("unknown", adhoc_actions.LIST_ACTIONS.words())
    inputs, takes_any = _signature(cls)
    return ("known", tuple((pname, bool(required)) for pname, _type, required, _d in inputs),
            takes_any, bool(cls.has_revert()))


@dataclass(frozen=True)
class _Checked:
    """A workflow checked before: its own problems, what its calls found, and all its
    problems then."""

    workflow: weakref.ref[WorkflowSpec]
    local: _Local
    answers: dict[tuple[str, str], Answer]
    problems: tuple[Problem, ...]


@dataclass(frozen=True)
class _Local:
    """The problems of a workflow that it alone decides (its expressions, transitions,
    graph), in the order :func:`validate_workflow` lists them: ``head`` before the
    tasks', ``tasks`` each task's messages before its calls', ``tail`` after."""

    head: list[Problem]
    tasks: dict[str, list[str]]
    tail: list[Problem]
    #: The workflows named by the tasks that run whenever it runs (a direct workflow's
    #: start tasks, every task of a reverse one), as written.
    first_calls: tuple[str, ...] = ()


#: :class:`_Local` of the workflows checked lately, by id (with a weak reference to the
#: workflow, which tells a workflow since made at the same address): a parsed workbook is
#: shared while its text is unchanged
#: (:func:`~tripleo_flow.engine.lang.workbook_loader.read_file`), and each catalog read
#: checks every workflow again with what changed around it.
_LOCAL: OrderedDict[int, tuple[weakref.ref[WorkflowSpec], _Local]] = OrderedDict()
_LOCAL_LOCK = threading.Lock()
#: How many workflows :data:`_LOCAL` and :data:`_CHECKED` keep (the least recently
#: checked go first).
LOCAL_KEPT = 1024
#: The workflows checked lately, by id (:class:`_Checked`): a catalog read checks every
#: shipped workflow again, and it finds what it found before unless a workbook or an
#: action changed what one of its calls names.
_CHECKED: OrderedDict[int, _Checked] = OrderedDict()


def _local_problems(workflow: WorkflowSpec) -> _Local:
    with _LOCAL_LOCK:
        known = _LOCAL.get(id(workflow))
        if known is not None and known[0]() is workflow:
            _LOCAL.move_to_end(id(workflow))
            return known[1]
    local = _check_local(workflow)
    with _LOCAL_LOCK:
        _LOCAL[id(workflow)] = (weakref.ref(workflow), local)
        while len(_LOCAL) > LOCAL_KEPT:
            _LOCAL.popitem(last=False)
    return local


def _check_local(workflow: WorkflowSpec) -> _Local:
    head: list[Problem] = []
    tail: list[Problem] = []

    def add(out: list[Problem], message: str, task: str | None = None) -> None:
        out.append(Problem(workflow.path, message, workflow.name, task))

    for text in expressions.check(workflow.output):
        add(head, f"bad expression in 'output': {text}")
    for text in expressions.check(dict(workflow.vars)):
        add(head, f"bad expression in 'vars': {text}")
    for item in workflow.inputs:
        for text in expressions.check(item.default):
            add(head, f"bad expression in the default of input {item.name!r}: {text}")
    tasks = {name: _check_task(workflow, spec) for name, spec in workflow.tasks.items()}
    graph = successors(workflow)
    inbound = {t for targets in graph.values() for t in targets}
    starts = [t for t in workflow.tasks if t not in inbound]
    reached = set(starts)
    todo = list(starts)
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in reached:
                reached.add(nxt)
                todo.append(nxt)
    for name in workflow.tasks:
        if name not in reached:
            add(tail, "unreachable: no start task leads to it (only tasks in a cycle lead "
                "here)", name)
    cycle = find_cycle(graph)
    if cycle and workflow.type == "reverse":
        add(tail, f"cycle {' -> '.join(cycle)}: a task cannot require itself, "
            "even through other tasks", cycle[0])
    first = workflow.tasks.values() if workflow.type == "reverse" else (
        workflow.tasks[name] for name in starts)
    return _Local(head, tasks, tail, tuple(spec.workflow for spec in first if spec.workflow))


def first_calls(workflow: WorkflowSpec) -> tuple[str, ...]:
    """The workflows named by the tasks of ``workflow`` that run whenever it runs (a
    direct workflow's start tasks, every task of a reverse one), as written."""
    return _local_problems(workflow).first_calls


def _check_task(workflow: WorkflowSpec, spec: TaskSpec) -> list[str]:
    """The problems of ``spec`` that its workflow alone decides."""
    out: list[str] = []
    fields: dict[str, Any] = {
        "input": spec.input, "publish": spec.publish, "publish-on-error": spec.publish_on_error,
        "timeout": spec.timeout, "wait-before": spec.wait_before, "wait-after": spec.wait_after,
        "on-success": [[t.condition, t.params] for t in spec.on_success]
        + [spec.clause_publish.get("on-success")],
        "on-error": [[t.condition, t.params] for t in spec.on_error]
        + [spec.clause_publish.get("on-error")],
        "on-complete": [[t.condition, t.params] for t in spec.on_complete]
        + [spec.clause_publish.get("on-complete")],
        "keep-result": spec.keep_result, "safe-rerun": spec.safe_rerun,
        "pause-before": spec.pause_before, "fail-on": spec.fail_on,
    }
    if spec.input_expr is not None:
        fields["input"] = [spec.input, spec.input_expr]
    if expressions.has_expression(spec.workflow or ""):
        fields["workflow"] = spec.workflow
    if spec.with_items:
        fields["with-items"] = [expr for _var, expr in spec.with_items.bindings]
        fields["concurrency"] = spec.with_items.concurrency
    if spec.retry:
        fields["retry"] = [spec.retry.continue_on, spec.retry.break_on, spec.retry.count,
                           spec.retry.delay]
    for key, value in fields.items():
        for text in expressions.check(value):
            out.append(f"bad expression in {key!r}: {text}")
        names, dynamic = expressions.task_references(value)
        if dynamic:
            out.append(f"task() in {key!r} needs a task name, like task('name') or "
                       "task(name)")
        for ref in sorted(n for n in names if n not in workflow.tasks):
            out.append(f"{key!r} refers to task({ref!r}), which is not in this workflow")
    if workflow.type == "reverse":
        if spec.transitions():
            out.append("on-success/on-error/on-complete are not used in reverse workflows; "
                       "use 'requires'")
        if spec.join is not None:
            out.append("'join' is not used in reverse workflows")
        for req in spec.requires:
            if req not in workflow.tasks:
                out.append(f"requires {req!r}, which is not a task of this workflow")
    else:
        if spec.requires:
            out.append("'requires' is only used in reverse workflows; use on-success")
        for item in spec.transitions():
            if not item.is_command and item.target not in workflow.tasks:
                out.append(f"transition to {item.target!r}, which is not a task of this "
                           "workflow")
    return out


def _check_calls(workflow: WorkflowSpec, spec: TaskSpec, answers: _Answers) -> list[str]:
    """The problems of what ``spec`` calls: its action, or its sub-workflow."""
    out: list[str] = []
    if spec.action is not None:
        out += _check_action_inputs(spec, answers)
    elif spec.workflow is not None and not expressions.has_expression(spec.workflow):
        # A workflow named by an expression is known when the task runs (Mistral's
        # dynamic sub-workflow): only the expression (above) is checked here.
        child = answers.workflow(spec.workflow)
        if child is None:
            out.append(f"unknown workflow {spec.workflow!r}")
        else:
            declared = {i.name for i in child.inputs}
            target = spec.input.get(TASK_NAME)
            if takes_target(child) and TASK_NAME in spec.input:
                declared |= {TASK_NAME}
                if not (isinstance(target, str) and (
                        target in child.tasks or expressions.has_expression(target))):
                    out.append(f"task_name {target!r} is not a task of reverse workflow "
                               f"{child.full_name!r} (its tasks: {', '.join(child.tasks)})")
            for key in sorted(set(spec.input) - declared):
                out.append(f"unexpected input {key!r} for workflow {child.full_name!r} "
                           f"(its inputs: {', '.join(sorted(declared)) or 'none'})")
            for wf_input in child.inputs:
                if wf_input.required and wf_input.name not in spec.input \
                        and spec.input_expr is None:
                    out.append(f"missing required input {wf_input.name!r} of workflow "
                               f"{child.full_name!r}")
    return out


def _check_action_inputs(spec: TaskSpec, answers: _Answers) -> list[str]:
    name = spec.action or ""
    if expressions.has_expression(name):
        # Its action is known when the task runs (Mistral's dynamic action name): the
        # name must then give a known action, which takes the task's input.
        return [f"action {name!r}: {problem}" for problem in expressions.check(name)]
    answer = answers.action(name)
    if answer[0] == "broken":
        return [f"action {name!r} cannot be loaded: {answer[1]}"]
    if answer[0] == "unknown":
        return [f"unknown action {name!r}{answer[1]}"]
    _known, inputs, takes_any, undoes = answer
    out = []
    known = {pname for pname, _required in inputs}
    if not takes_any:
        for key in sorted(set(spec.input) - known):
            out.append(f"unexpected input {key!r} for action {name!r} "
                       f"(its inputs: {', '.join(sorted(known)) or 'none'})")
    for pname, required in inputs:
        if required and pname not in spec.input and spec.input_expr is None:
            out.append(f"missing required input {pname!r} of action {name!r}")
    if spec.keep_result is False and undoes:
        out.append(f"'keep-result: false' cannot be used with action {name!r}: undoing it "
                   "needs its result")
    return out


_SIGNATURES: weakref.WeakKeyDictionary[type[Action], tuple[
    list[tuple[str, str, bool, Any]], bool]] = weakref.WeakKeyDictionary()


def _signature(cls: type[Action]) -> tuple[list[tuple[str, str, bool, Any]], bool]:
    """An action's inputs and whether it takes any keyword (read once per class: a
    workbook of many tasks calls few actions)."""
    if cls not in _SIGNATURES:
        takes_any = any(p.kind is p.VAR_KEYWORD
                        for p in inspect.signature(cls.execute).parameters.values())
        _SIGNATURES[cls] = (cls.inputs(), takes_any)
    return _SIGNATURES[cls]
