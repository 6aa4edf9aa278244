"""The workbook language: a subset of Mistral v2, as frozen value objects.

:func:`parse_workbook` turns the YAML document of one file into a
:class:`Workbook`, collecting every structural problem as a :class:`Problem`
(file, workflow, task, message) instead of stopping at the first.  Checks that
need other workbooks or the action registry live in
:mod:`tripleo_flow.engine.lang.workbook_validator`.  No I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.engine.lang import action_workflows, adhoc_actions
from tripleo_flow.engine.lang.workbook_clauses import (
    INLINE_FORMS,
    Collector,
    Problem,
    Transition,
    merge_inline,
    parse_clause,
    split_inline,
)

WORKBOOK_KEYS = {"version", "name", "description", "tags", "workflows", "actions"}
WORKFLOW_KEYS = {"type", "description", "input", "output", "output-on-error", "tasks",
                 "task-defaults", "tags", "vars"}
TASK_KEYS = {"description", "action", "workflow", "input", "publish", "publish-on-error",
             "on-success", "on-error", "on-complete", "requires", "with-items", "concurrency",
             "retry", "timeout", "join", "wait-before", "wait-after", "keep-result",
             "safe-rerun", "pause-before", "target", "tags", "fail-on"}
DEFAULTABLE_KEYS = {"on-success", "on-error", "on-complete", "retry", "timeout",
                    "wait-before", "wait-after", "concurrency", "requires", "safe-rerun",
                    "fail-on"}
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_WITH_ITEMS_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s+in\s+(.+?)\s*$", re.S)


@dataclass(frozen=True)
class RetryPolicy:
    """``retry``: ``count`` and ``delay`` are numbers or expressions (evaluated when the
    task runs)."""

    count: int | str
    delay: float | str = 0.0
    continue_on: Any = None
    break_on: Any = None


@dataclass(frozen=True)
class WithItems:
    """``with-items``: variables bound to the items of expressions, zipped."""

    bindings: tuple[tuple[str, Any], ...]
    concurrency: Any = None


@dataclass(frozen=True)
class TaskSpec:
    name: str
    action: str | None = None
    workflow: str | None = None
    input: dict[str, Any] = field(default_factory=dict)
    publish: dict[str, Any] = field(default_factory=dict)
    publish_on_error: dict[str, Any] = field(default_factory=dict)
    on_success: tuple[Transition, ...] = ()
    on_error: tuple[Transition, ...] = ()
    on_complete: tuple[Transition, ...] = ()
    requires: tuple[str, ...] = ()
    with_items: WithItems | None = None
    retry: RetryPolicy | None = None
    timeout: Any = None
    join: str | int | None = None
    wait_before: Any = None
    wait_after: Any = None
    description: str = ""
    #: ``input`` given as one expression (evaluated to a mapping when the task runs).
    input_expr: Any = None
    #: Scoped publishes of the advanced transition form:
    #: ``{"on-success": {"branch": {...}, "global": {...}}, ...}``.
    clause_publish: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(
        default_factory=dict)
    #: ``keep-result``: False (or an expression) keeps only the published values.
    keep_result: Any = True
    #: ``safe-rerun``: None (unset) reruns an interrupted task on resume (at least once);
    #: False fails it instead; True reruns it.
    safe_rerun: Any = None
    #: ``pause-before``: the execution pauses before the task runs.
    pause_before: Any = None
    #: ``fail-on``: a condition (or boolean) read once the action succeeded; true
    #: fails the task (Mistral's fail-on policy: a retry runs it again).
    fail_on: Any = None
    #: The task as written (task-defaults applied): ``task().spec``, as Mistral's.
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def transitions(self) -> tuple[Transition, ...]:
        return self.on_success + self.on_error + self.on_complete

    def reacts_to_errors(self) -> bool:
        """True when a failure of this task has something to evaluate (a transition
        that may fire, something to publish): otherwise it fails the workflow at once.

        Whether the error is *handled* is only known once the conditions are
        evaluated: as in Mistral, only an ``on-error`` transition that fires handles
        it; ``on-complete`` runs like ``finally`` and ``publish-on-error`` only
        publishes (the workflow still fails, with those values in its
        ``output-on-error``)."""
        return bool(self.publish_on_error or self.on_error or self.on_complete
                    or self.clause_publish.get("on-error")
                    or self.clause_publish.get("on-complete"))


@dataclass(frozen=True)
class WorkflowInput:
    name: str
    required: bool = True
    default: Any = None


@dataclass(frozen=True)
class WorkflowSpec:
    name: str
    workbook: str
    path: str
    type: str = "direct"
    description: str = ""
    inputs: tuple[WorkflowInput, ...] = ()
    output: Any = None
    tasks: dict[str, TaskSpec] = field(default_factory=dict)
    #: ``output-on-error``: the output of the workflow when it fails (merged over
    #: ``{"result": the error}``, as Mistral gives it).
    output_on_error: Any = None
    #: ``vars``: variables of the initial context, evaluated over the inputs (and
    #: ``env()``) when the workflow starts; a var of an input's name replaces it.
    vars: Mapping[str, Any] = field(default_factory=dict)
    #: The workflow as written: ``execution().spec``, as Mistral's.
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: The action it was made to run, for a workflow no workbook wrote: an action
    #: execution or a named one-task workflow (:mod:`.action_workflows`).
    runs_action: str | None = None

    @property
    def full_name(self) -> str:
        return f"{self.workbook}.{self.name}" if self.workbook else self.name


@dataclass(frozen=True)
class Workbook:
    name: str
    path: str
    description: str = ""
    workflows: dict[str, WorkflowSpec] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)
    #: Ad-hoc actions by full name (``WORKBOOK.SHORT``):
    #: :class:`~tripleo_flow.engine.lang.adhoc_actions.AdhocSpec`.
    actions: dict[str, Any] = field(default_factory=dict)


def parse_workbook(document: Any, path: str) -> tuple[Workbook | None, list[Problem]]:
    """Parse one YAML document into a :class:`Workbook` and its problems."""
    out = Collector(path)
    if not isinstance(document, dict):
        out.add("the file must hold a mapping with 'version', 'name' and 'workflows'")
        return None, out.problems
    for key in sorted(set(document) - WORKBOOK_KEYS):
        out.add(f"unknown key {key!r} (expected one of {', '.join(sorted(WORKBOOK_KEYS))})")
    if str(document.get("version")) != "2.0":
        out.add(f"version must be '2.0' (got {document.get('version')!r})")
    name = document.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        out.add(f"name must be a word like 'tripleo.plan' (got {name!r})")
        name = ""
    actions = adhoc_actions.parse_actions(document.get("actions"), name, out)
    raw_workflows = document.get("workflows")
    workflows: dict[str, WorkflowSpec] = {}
    if not isinstance(raw_workflows, dict) or not raw_workflows:
        out.add("'workflows' must be a mapping of workflow names to definitions")
    else:
        for wf_name, raw in raw_workflows.items():
            spec = _parse_workflow(str(wf_name), raw, name, out)
            if spec is not None:
                workflows[spec.name] = spec
    if out.problems:
        return None, out.problems
    for workflow in workflows.values():  # short names of ad-hoc actions resolve here first
        for task_name, task in list(workflow.tasks.items()):
            if task.action in actions:
                workflow.tasks[task_name] = replace(task, action=actions[task.action].name)
    return Workbook(name, path, str(document.get("description") or ""), workflows,
                    document, {spec.name: spec for spec in actions.values()}), []


def parse_workflow(name: str, raw: Mapping[str, Any], workbook: str, path: str) -> WorkflowSpec:
    """One workflow made by the engine, not read from a file (its ``name`` may be any
    text: ``action:NAME``); InvalidWorkbook naming its problems, if any."""
    out = Collector(path)
    made = _parse_workflow("made", dict(raw), workbook, out)
    if out.problems or made is None:
        raise exceptions.InvalidWorkbook("Invalid workflow " + repr(name) + ": " + "; ".join(
            p.message for p in out.problems))
    return replace(made, name=name, raw={**made.raw, "name": name})


def _parse_workflow(name: str, raw: Any, workbook: str, out: Collector) -> WorkflowSpec | None:
    if not NAME_RE.match(name):
        out.add("invalid workflow name", name)
    if not isinstance(raw, dict):
        out.add("a workflow must be a mapping with 'tasks'", name)
        return None
    for key in sorted(set(raw) - WORKFLOW_KEYS):
        out.add(f"unknown key {key!r}", name)
    wf_type = raw.get("type", "direct")
    if wf_type not in ("direct", "reverse"):
        out.add(f"type must be 'direct' or 'reverse' (got {wf_type!r})", name)
    inputs = _parse_inputs(raw.get("input", []), name, out)
    defaults = raw.get("task-defaults") or {}
    if not isinstance(defaults, dict):
        out.add("'task-defaults' must be a mapping", name)
        defaults = {}
    for key in sorted(set(defaults) - DEFAULTABLE_KEYS):
        out.add(f"'task-defaults' cannot set {key!r}", name)
    raw_tasks = raw.get("tasks")
    tasks: dict[str, TaskSpec] = {}
    if not isinstance(raw_tasks, dict) or not raw_tasks:
        out.add("'tasks' must be a non-empty mapping of task names to definitions", name)
    else:
        for task_name, raw_task in raw_tasks.items():
            merged = raw_task
            if isinstance(raw_task, dict):
                merged = {**_defaults_for(str(task_name), defaults, raw_task), **raw_task}
                if wf_type == "direct" and "requires" not in raw_task:
                    merged.pop("requires", None)
                elif "requires" in defaults and "requires" in raw_task:
                    merged["requires"] = _names(raw_task["requires"]) + [
                        r for r in _names(defaults["requires"])
                        if r != task_name and r not in _names(raw_task["requires"])]
            task = _parse_task(str(task_name), merged, name, out)
            if task is not None:
                tasks[task.name] = task
    return WorkflowSpec(name=name, workbook=workbook, path=out.path, type=str(wf_type),
                        description=str(raw.get("description") or ""), inputs=inputs,
                        output=raw.get("output"), tasks=tasks,
                        output_on_error=raw.get("output-on-error"),
                        vars=_mapping(raw, "vars", name, None, out),
                        raw={"name": name, **raw})


def _defaults_for(task: str, defaults: Mapping[str, Any], raw_task: Mapping[str, Any]
                  ) -> dict[str, Any]:
    """What ``task-defaults`` gives ``task``, as Mistral applies it: a transition or
    ``requires`` naming the task itself is left out (it would make the task loop)."""
    given = {k: v for k, v in defaults.items() if k in DEFAULTABLE_KEYS}
    for key in ("on-success", "on-error", "on-complete"):
        if key in given and key not in raw_task:
            given[key] = _without_target(given[key], task)
    if "requires" in given:
        given["requires"] = [r for r in _names(given["requires"]) if r != task]
    return given


def _names(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value) if isinstance(value, list) else []


def _without_target(clause: Any, task: str) -> Any:
    """``clause`` (a target, a list of them or the advanced form) without ``task``."""
    if isinstance(clause, dict) and "next" in clause:
        return {**clause, "next": _without_target(clause["next"], task)}
    if not isinstance(clause, (str, list)):
        return clause

    def target(entry: Any) -> Any:
        if isinstance(entry, dict) and len(entry) == 1:
            entry = next(iter(entry))
        return split_inline(entry)[0] if isinstance(entry, str) else None

    return [entry for entry in _names(clause) if target(entry) != task]


def _parse_inputs(raw: Any, wf: str, out: Collector) -> tuple[WorkflowInput, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        out.add("'input' must be a list of names or {name: default} mappings", wf)
        return ()
    inputs = []
    for item in raw:
        if isinstance(item, str):
            inputs.append(WorkflowInput(item))
        elif isinstance(item, dict) and len(item) == 1:
            (key, default), = item.items()
            inputs.append(WorkflowInput(str(key), False, default))
        else:
            out.add(f"bad input entry {item!r}: use a name or a {{name: default}} mapping", wf)
    names = [i.name for i in inputs]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        out.add(f"input {dup!r} is declared twice", wf)
    return tuple(inputs)


def _parse_task(name: str, raw: Any, wf: str, out: Collector) -> TaskSpec | None:
    if not NAME_RE.match(name) or name.startswith("__"):
        out.add("invalid task name (letters, digits, '_', '-', '.'; not starting with '__')",
                wf, name)
    if not isinstance(raw, dict):
        out.add("a task must be a mapping with 'action' or 'workflow'", wf, name)
        return None
    for key in sorted(set(raw) - TASK_KEYS):
        out.add(f"unknown key {key!r}", wf, name)
    action, workflow = raw.get("action"), raw.get("workflow")
    inputs = raw.get("input") or {}
    input_expr = None
    if isinstance(inputs, str) and _is_expression(inputs):
        input_expr, inputs = inputs, {}
    elif not isinstance(inputs, dict):
        out.add("'input' must be a mapping or one expression giving a mapping", wf, name)
        inputs = {}
    if action is not None and workflow is not None:
        out.add("a task has either 'action' or 'workflow', not both", wf, name)
    elif action is None and workflow is None:
        action = "std.noop"
    for kind, ref in (("action", action), ("workflow", workflow)):
        if ref is not None and not isinstance(ref, str):
            out.add(f"'{kind}' must be a name", wf, name)
    for kind in ("action", "workflow"):
        ref = action if kind == "action" else workflow
        if not isinstance(ref, str):
            continue
        ref, inline, unread = split_inline(ref)
        if unread:  # Mistral would drop it without a word
            out.add(f"'{kind}' {raw.get(kind)!r}: cannot read {unread!r} as a parameter "
                    f"({INLINE_FORMS})", wf, name)
        inputs = merge_inline(inputs, inline)
        action, workflow = (ref, workflow) if kind == "action" else (action, ref)
    join = raw.get("join")
    if join is not None and join not in ("all", "one") and not (
            isinstance(join, int) and not isinstance(join, bool) and join > 0):
        out.add(f"'join' must be 'all', 'one' or a positive number (got {join!r})", wf, name)
    requires = raw.get("requires") or []
    if isinstance(requires, str):
        requires = [requires]
    if not isinstance(requires, list):
        out.add("'requires' must be a list of task names", wf, name)
        requires = []
    clauses = {key: parse_clause(raw, key, wf, name, out)
               for key in ("on-success", "on-error", "on-complete")}
    return TaskSpec(
        name=name, action=action if isinstance(action, str) else None,
        workflow=workflow if isinstance(workflow, str) else None,
        input=inputs,
        publish=_mapping(raw, "publish", wf, name, out),
        publish_on_error=_mapping(raw, "publish-on-error", wf, name, out),
        on_success=clauses["on-success"][0],
        on_error=clauses["on-error"][0],
        on_complete=clauses["on-complete"][0],
        requires=tuple(str(r) for r in requires),
        with_items=_with_items(raw, wf, name, out),
        retry=_retry(raw.get("retry"), wf, name, out),
        timeout=_number(raw, "timeout", wf, name, out),
        join=join,
        wait_before=_number(raw, "wait-before", wf, name, out),
        wait_after=_number(raw, "wait-after", wf, name, out),
        description=str(raw.get("description") or ""),
        input_expr=input_expr,
        clause_publish={k: v[1] for k, v in clauses.items() if v[1]},
        keep_result=_flag(raw, "keep-result", True, wf, name, out),
        safe_rerun=_flag(raw, "safe-rerun", None, wf, name, out),
        pause_before=_flag(raw, "pause-before", None, wf, name, out),
        fail_on=_flag(raw, "fail-on", None, wf, name, out),
        raw={"name": name, **raw},
    )


def _is_expression(value: Any) -> bool:
    return isinstance(value, str) and value.strip().startswith(("<%", "{{"))


def _flag(raw: dict[str, Any], key: str, default: Any, wf: str, task: str,
          out: Collector) -> Any:
    value = raw.get(key, default)
    if value is None or isinstance(value, bool) or _is_expression(value):
        return value
    out.add(f"'{key}' must be true, false or an expression (got {value!r})", wf, task)
    return default


def _mapping(raw: dict[str, Any], key: str, wf: str, task: str | None,
             out: Collector) -> dict[str, Any]:
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        out.add(f"'{key}' must be a mapping of names to values", wf, task)
        return {}
    return {str(k): v for k, v in value.items()}


def _with_items(raw: dict[str, Any], wf: str, task: str, out: Collector) -> WithItems | None:
    value = raw.get("with-items")
    if value is None:
        return None
    entries = value if isinstance(value, list) else [value]
    bindings = []
    for entry in entries:
        match = _WITH_ITEMS_RE.match(entry) if isinstance(entry, str) else None
        if not match:
            out.add(f"'with-items' entry {entry!r} must read 'NAME in EXPRESSION'", wf, task)
            continue
        bindings.append((match.group(1), match.group(2)))
    concurrency = raw.get("concurrency")
    if not (concurrency is None or _is_expression(concurrency)
            or (isinstance(concurrency, int) and not isinstance(concurrency, bool)
                and concurrency >= 0)):
        out.add(f"'concurrency' must be a whole number >= 0 or an expression "
                f"(got {concurrency!r})", wf, task)
        concurrency = None
    return WithItems(tuple(bindings), concurrency)


def _retry(value: Any, wf: str, task: str, out: Collector) -> RetryPolicy | None:
    if value is None:
        return None
    if isinstance(value, str):  # Mistral's one line: retry: count=3 delay=1
        _name, params, unread = split_inline(f"retry {value}")
        if unread or not params:
            out.add(f"'retry' {value!r}: cannot read {unread or value!r} as a parameter "
                    f"({INLINE_FORMS})", wf, task)
            return None
        value = params
    if not isinstance(value, dict):
        out.add("'retry' must be a mapping with 'count' (and 'delay', 'continue-on', "
                "'break-on') or one line such as 'count=3 delay=1'", wf, task)
        return None
    unknown = set(value) - {"count", "delay", "continue-on", "break-on"}
    for key in sorted(unknown):
        out.add(f"unknown key {key!r} in 'retry'", wf, task)
    count: Any = value.get("count")
    delay: Any = value.get("delay", 0)
    if _is_expression(count):
        pass
    elif not isinstance(count, int) or isinstance(count, bool) or count < 0:
        out.add(f"retry 'count' must be a number >= 0 or an expression (got {count!r})",
                wf, task)
        count = 0
    if _is_expression(delay):
        pass
    elif not isinstance(delay, (int, float)) or isinstance(delay, bool) or delay < 0:
        out.add(f"retry 'delay' must be seconds >= 0 or an expression (got {delay!r})",
                wf, task)
        delay = 0
    else:
        delay = float(delay)
    return RetryPolicy(count, delay, value.get("continue-on"), value.get("break-on"))


def _number(raw: dict[str, Any], key: str, wf: str, task: str, out: Collector) -> Any:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and value.strip().startswith(("<%", "{{"))):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        out.add(f"'{key}' must be seconds >= 0 or an expression (got {value!r})", wf, task)
        return None
    return value


def apply_inputs(workflow: WorkflowSpec, given: Mapping[str, Any]) -> dict[str, Any]:
    """The initial context of ``workflow``: ``given`` plus defaults; errors name the input."""
    declared = {i.name for i in workflow.inputs}
    unexpected = sorted(set(given) - declared)
    # An action run as an execution (``action:NAME``) is refused in its own name.
    action = action_workflows.action_of(workflow.full_name)
    named = f"Action {action!r}" if action else f"Workflow {workflow.full_name!r}"
    if unexpected:
        raise exceptions.InvalidInput(
            f"{named} has no input {', '.join(map(repr, unexpected))}; "
            f"its inputs are: {', '.join(sorted(declared)) or '(none)'}.")
    missing = [i.name for i in workflow.inputs if i.required and i.name not in given]
    if missing:
        example = missing[0]
        raise exceptions.InvalidInput(
            f"{named} needs input {', '.join(map(repr, missing))}.",
            hints=[exceptions.Hint(
                "Pass it with", "workflow.run_with_input",
                {"workflow": workflow.full_name, "input": example}, tail=".")])
    ctx = {i.name: i.default for i in workflow.inputs if not i.required}
    ctx.update(given)
    return ctx
