"""The TaskFlow atoms a compiled workbook is made of.

Every workbook task becomes one :class:`~.action_atom.ActionAtom` (or, for a
``workflow:`` task, an :class:`~.workflow_atoms.EnterAtom` / child atoms /
:class:`~.workflow_atoms.ExitAtom` sandwich).  An
atom's result is an *outcome* mapping that the next atoms require::

    {"state": "SUCCESS" | "ERROR" | "SKIPPED", "result": ..., "ctx": {...},
     "next": [task names chosen by on-success/on-error/on-complete], "error": str}

``ctx`` is the workflow context (inputs plus everything published so far), so
a task sees exactly what its predecessors published, and a resumed execution
rebuilds it from persisted outcomes.  A task no transition chose is SKIPPED
(it runs no action).  When anything fails after an action ran, the atom undoes
that action itself and raises, so TaskFlow reverts the completed tasks in
reverse order and the failed task is never undone twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

from taskflow import task

from tripleo_flow.common import clock
from tripleo_flow.engine.compile import execution_scope
from tripleo_flow.engine.compile.signatures import CachedSignatures
from tripleo_flow.engine.lang import expressions, workbook_clauses
from tripleo_flow.engine.lang.action import Action
from tripleo_flow.engine.lang.workbook_clauses import COMMANDS
from tripleo_flow.engine.lang.workbook_model import TaskSpec, Transition, WorkflowSpec
from tripleo_flow.engine.store import error_records
from tripleo_flow.engine.store.states import CANCELLED, ERROR, SKIPPED, SUCCESS
from tripleo_flow.engine.store.undo_journal import ExecutionUndoJournal
from tripleo_flow.exceptions import FailCommand, TaskFailed

#: Outcome key of a task whose error no ``on-error`` transition handled.
UNHANDLED = execution_scope.UNHANDLED
#: Outcome key of the inputs the action was given (per item with with-items): a revert
#: undoes with them, never with inputs evaluated again from a context that moved on.
INPUTS = "inputs"


def task_symbol(atom_name: str) -> str:
    return f"t:{atom_name}"


def input_symbol(prefix: str) -> str:
    return f"wf:{prefix}"


def retry_symbol(atom_name: str) -> str:
    return f"retry:{atom_name}"


OUTPUT_SYMBOL = "out:"
#: Outcome key of a state machine's task execution: its fired targets, in order.
STEPS = "steps"


def merge_dicts(left: Mapping[str, Any], right: Mapping[str, Any]) -> dict[str, Any]:
    """``left`` with ``right`` merged over it, mappings merged key by key (Mistral's
    ``merge_dicts``: a value of ``right`` wins, except where both are mappings)."""
    merged = dict(left)
    for key, value in right.items():
        mine = merged.get(key)
        if isinstance(mine, Mapping) and isinstance(value, Mapping):
            merged[key] = merge_dicts(mine, value)
        else:
            merged[key] = value
    return merged


def merge_contexts(outcomes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The inbound context of a task several branches lead to, as Mistral builds it
    (``data_flow.evaluate_upstream_context``): every branch's outbound context merged
    in order, then what each branch itself published merged over that, so a branch's
    own new value beats another branch's old copy of the same variable."""
    if len(outcomes) == 1:
        return dict(outcomes[0].get("ctx") or {})
    ctx: dict[str, Any] = {}
    published: dict[str, Any] = {}
    for outcome in outcomes:
        ctx = merge_dicts(ctx, outcome.get("ctx") or {})
        published = merge_dicts(published, outcome.get("published") or {})
    return merge_dicts(ctx, published)


def evaluate_publish(spec: TaskSpec, evaluator: expressions.Evaluator,
                     failed: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """What task ``spec`` publishes as it completes (``failed``: in ERROR), evaluated
    by ``evaluator``: its branch variables (``publish`` or ``publish-on-error``, then
    the ``publish`` of its fired clause and of ``on-complete``) and its global ones, as
    Mistral's ``TaskSpec.get_publish(state)`` gathers them.

    :raises ExpressionError: an expression cannot be evaluated"""
    publish = spec.publish_on_error if failed else spec.publish
    published = {k: evaluator.evaluate(v) for k, v in publish.items()}
    global_values: dict[str, Any] = {}
    for clause in ("on-error" if failed else "on-success", "on-complete"):
        scopes = spec.clause_publish.get(clause) or {}
        for scope, into in (("branch", published), ("global", global_values)):
            into.update({k: evaluator.evaluate(v)
                         for k, v in (scopes.get(scope) or {}).items()})
    return published, global_values


def start_context(workflow: WorkflowSpec, ctx: dict[str, Any],
                  evaluator: Callable[[Mapping[str, Any]], expressions.Evaluator]
                  ) -> dict[str, Any]:
    """The initial context of ``workflow``: its inputs ``ctx`` with its ``vars``
    evaluated over them, a var replacing an input of its name (Mistral's order)."""
    if not workflow.vars:
        return ctx
    return {**ctx, **evaluator(ctx).evaluate(dict(workflow.vars))}


@dataclass
class Runtime:
    """What atoms need while running: action classes, their context, the execution."""

    actions: Callable[[str], type[Action]]
    action_context: Any
    executor: futures.Executor
    execution: dict[str, Any] = field(default_factory=dict)
    #: Told ``(task name, progress details, typed report)`` when a task's action
    #: reports progress.
    on_progress: Callable[[str, dict[str, Any], Any], None] | None = None
    #: False when started over HTTP without ``[api] allow_plan_code``: refuse ``runs_plan_code``.
    plan_code_allowed: bool = True
    #: False when started over HTTP without ``[api] allow_outbound_actions``: refuse
    #: ``connects_out``.
    outbound_allowed: bool = True
    #: How large a value one expression may build (``[limits]``).
    expression_limits: expressions.Limits = expressions.DEFAULT_LIMITS
    #: What the tasks of the execution share (global variables, env, pause).
    scope: execution_scope.Scope = field(default_factory=execution_scope.Scope)
    #: Called with a task's name as it starts: raises
    #: :class:`~tripleo_flow.exceptions.Interrupted` once a signal asked to stop.
    stop_check: Callable[[str], None] | None = None
    #: Keeps each task's undo record for a re-run (:mod:`.undo_journal`).
    undo_journal: ExecutionUndoJournal | None = None
    #: Starts the child executions of ``workflow:`` tasks run apart
    #: (:class:`~.subworkflow.ChildRuns`).
    children: Any = None
    #: The asynchronous action executions of the executions database
    #: (:class:`~.async_actions.AsyncActions`).
    async_actions: Any = None
    #: Other executions and their tasks for ``executions()`` and ``tasks(id)``
    #: (:class:`~tripleo_flow.engine.store.execution_queries.ExecutionQueries`; None:
    #: only this execution is known).
    queries: Any = None


@dataclass(frozen=True)
class Links:
    """Where an atom sits: its predecessors (atom names) and referenced tasks."""

    prefix: str
    preds: tuple[str, ...]
    refs: tuple[str, ...] = ()
    start: bool = False
    reverse: bool = False
    retry: bool = False
    #: An error no transition here handles fails this workflow at its end, not at once:
    #: the execution's own, or a sub-workflow whose ``workflow:`` task answers errors.
    contained: bool = False
    #: Run by :mod:`.state_machine`, which chose this task execution (no join to wait
    #: for here) and applies the engine commands itself, in list order.
    machine: bool = False


class _WorkbookAtom(CachedSignatures, task.Task):  # type: ignore[misc]
    def __init__(self, name: str, spec: TaskSpec, links: Links, runtime: Runtime,
                 extra_requires: Sequence[str] = (), provides: str | None = None) -> None:
        requires = [task_symbol(p) for p in links.preds]
        if links.start:
            requires.append(input_symbol(links.prefix))
        requires += [task_symbol(links.prefix + r) for r in links.refs
                     if task_symbol(links.prefix + r) not in requires]
        if links.retry:
            requires.append(retry_symbol(name))
        requires += [r for r in extra_requires if r not in requires]
        super().__init__(name=name, provides=provides or task_symbol(name), requires=requires)
        self.spec = spec
        self.links = links
        self.runtime = runtime
        runtime.scope.task_specs.setdefault(links.prefix + spec.name, spec)

    def execute(self, **kwargs: Any) -> dict[str, Any]:
        started = clock.time()
        outcome = self._run(**kwargs)
        outcome["started_at"], outcome["finished_at"] = started, clock.time()
        return outcome

    def _run(self, **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError

    # -- helpers over the outcomes this atom requires -------------------------

    def _selected(self, kwargs: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """Outcomes of predecessors that chose this task (in predecessor order)."""
        chosen = []
        if self.links.start:
            start = kwargs[input_symbol(self.links.prefix)]
            if start.get("state") != SKIPPED:
                chosen.append(start)
        for pred in self.links.preds:
            outcome = kwargs[task_symbol(pred)]
            if outcome.get("state") in (SKIPPED, CANCELLED):  # (:mod:`.graph_cancels`)
                continue
            if self.links.reverse:  # a requirement counts once it succeeded (Mistral)
                if outcome.get("state") == SUCCESS:
                    chosen.append(outcome)
            elif self.spec.name in outcome.get("next", ()):
                chosen.append(outcome)
        return chosen

    def _active(self, chosen: list[Mapping[str, Any]]) -> bool:
        if self.links.machine:
            return True
        if self.runtime.scope.ended(self.links.prefix) and not any(
                outcome.get(execution_scope.ENDED) == self.links.prefix for outcome in chosen):
            # A ``succeed`` ended this workflow: nothing more starts but the tasks listed
            # before ``succeed`` in the transitions that took it (Mistral starts them).
            return False
        if self.runtime.scope.stopped(self.links.prefix) and not any(
                outcome.get(execution_scope.FAILED_BY) == self.links.prefix
                for outcome in chosen):
            return False  # a ``fail`` stopped it: the same, before ``fail``
        inbound = len(self.links.preds) + (1 if self.links.start else 0)
        if self.links.reverse or self.spec.join == "all":
            return len(chosen) == inbound and inbound > 0
        if isinstance(self.spec.join, int):
            return len(chosen) >= self.spec.join
        return bool(chosen)

    @staticmethod
    def _merge(chosen: list[Mapping[str, Any]]) -> dict[str, Any]:
        return merge_contexts(chosen)

    def _evaluator(self, ctx: Mapping[str, Any], kwargs: Mapping[str, Any],
                   current: Mapping[str, Any] | None = None) -> expressions.Evaluator:
        scope, prefix = self.runtime.scope, self.links.prefix

        def lookup(name: str | None) -> Any:
            if name is None or name == self.spec.name:
                if current is None:  # before it ran (input, with-items, timeout ...)
                    return scope.task_model(prefix, self.name, {
                        "name": self.spec.name, "state": "RUNNING"})
                return scope.task_model(prefix, self.name, current)
            outcome = kwargs.get(task_symbol(prefix + name))
            if outcome is not None:
                return scope.outcome_model(prefix, prefix + name, name, outcome)
            # A task this one does not require: its latest execution, null if it did
            # not run (Mistral's ``task()`` reads any task execution of the workflow).
            if prefix + name not in scope.task_specs:
                raise expressions.ExpressionError(f"task({name!r})", "unknown task")
            found = scope.latest_task(prefix, name)
            if self.links.machine:
                return found
            if found is not None and found.get("state") not in ("RUNNING", "PENDING"):
                return found  # it ended (in this run, or in one before a resume)
            if prefix + name not in scope.began:  # its atom is deciding to skip: not run
                return None
            # A sub-workflow's task has no record until its child ends: RUNNING.
            return found or scope.task_model(prefix, prefix + name,
                                             {"name": name, "state": "RUNNING"})

        return expressions.Evaluator(self.runtime.scope.with_globals(ctx), lookup,
                                     self.runtime.execution,
                                     self.runtime.expression_limits, self._hooks())

    def _hooks(self) -> dict[str, Any]:
        scope, execution = self.runtime.scope, self.runtime.execution

        queries, prefix = self.runtime.queries, self.links.prefix

        def executions(ex_id: str | None = None, root: str | None = None,
                       state: str | None = None, from_time: Any = None,
                       to_time: Any = None) -> list[Any]:
            if queries is not None:
                return [{**found, **execution, "state": found["state"]}
                        if found["id"] == execution.get("id") else found
                        for found in queries.executions(ex_id, root, state, from_time,
                                                        to_time)]
            mine = {**execution, "state": "RUNNING"}
            keep = ex_id in (None, mine.get("id")) and root is None and \
                state in (None, "RUNNING")
            return [mine] if keep else []

        def tasks(ex_id: str | None = None, recursive: bool = False,
                  state: str | None = None, flat: bool = False) -> list[Any]:
            """Mistral's ``tasks()``: this execution's (read from its engine), another's
            (``ex_id``: from the database), or with no id every execution's."""
            mine = execution.get("id")
            if ex_id == mine or queries is None:
                return scope.tasks(prefix, bool(recursive), state)
            if ex_id is not None:
                return queries.tasks(ex_id, bool(recursive), state, bool(flat))
            return [*scope.tasks("", True, state),
                    *queries.tasks(None, True, state, bool(flat), skip=mine)]

        return {"tasks": tasks, "executions": executions, "global": scope.get_global,
                "env": lambda: dict(scope.env)}

    def _task_input(self, evaluator: expressions.Evaluator) -> dict[str, Any]:
        """The task's ``input``: a mapping, or one expression that must give one."""
        inputs = dict(evaluator.evaluate(self.spec.input))
        if self.spec.input_expr is not None:
            given = evaluator.evaluate(self.spec.input_expr)
            if not isinstance(given, Mapping):
                raise TaskFailed(f"task {self.spec.name!r}: 'input' {self.spec.input_expr!r} "
                                 f"must give a mapping of input names to values (got "
                                 f"{type(given).__name__})")
            inputs.update(given)
        return inputs

    def _transitions(self, evaluator: expressions.Evaluator,
                     transitions: Sequence[Transition]) -> list[Transition]:
        return [item for item in transitions
                if item.condition is None or bool(evaluator.evaluate(item.condition))]

    def _wait(self, key: str, value: Any, evaluator: expressions.Evaluator) -> None:
        seconds = self._policy(key, value, evaluator)
        if seconds:
            clock.sleep(seconds)

    def _policy(self, key: str, value: Any, evaluator: expressions.Evaluator,
                whole: bool = False) -> float | None:
        """Policy ``key`` (``wait-before``, ``timeout``...) of this task once evaluated:
        seconds, or a count with ``whole``.  As in Mistral, a value an expression gives
        is checked when the task starts: anything but a number >= 0 fails the task."""
        if value is None:
            return None
        got = evaluator.evaluate(value) if isinstance(value, str) else value
        if (isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isfinite(got)
                or got < 0 or (whole and got != int(got))):
            kind = "a whole number >= 0" if whole else "a number of seconds >= 0"
            raise TaskFailed(f"task {self.spec.name!r}: {key!r} is {value!r}, which gave "
                             f"{got!r}; it must give {kind}: correct the expression or the "
                             "value it reads")
        return int(got) if whole else float(got)

    def _attempt(self, kwargs: Mapping[str, Any],
                 evaluator: expressions.Evaluator) -> tuple[int, int]:
        if not self.links.retry or self.spec.retry is None:
            return 1, 1
        count = int(self._policy("retry count", self.spec.retry.count, evaluator,
                                 whole=True) or 0)
        return int(kwargs[retry_symbol(self.name)]), count + 1

    def _skipped(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """A skipped task passes on what its predecessors published (for the output)."""
        outcomes = [kwargs[task_symbol(p)] for p in self.links.preds]
        if self.links.start:
            outcomes.insert(0, kwargs[input_symbol(self.links.prefix)])
        return {"state": SKIPPED, "next": [], "ctx": self._merge(outcomes)}

    def _finish(self, ctx: dict[str, Any], kwargs: Mapping[str, Any], result: Any,
                error: str | None) -> dict[str, Any]:
        """Publish (branch and global scopes) and choose transitions; run the engine
        commands: raise FailCommand on ``fail``, end the workflow on ``succeed``, pause
        the execution on ``pause`` (the other transitions go on when it resumes).

        As Mistral does, the targets are the fired ``on-success`` (or ``on-error``)
        ones, then the fired ``on-complete`` ones, cut after the first ``fail`` or
        ``succeed``.  An error is handled only when an ``on-error`` transition fired;
        otherwise the outcome carries :data:`UNHANDLED`: with no transition at all
        the caller fails the task at once, else the workflow fails once the
        ``on-complete`` tasks have run (:meth:`_unhandled_error`)."""
        state = ERROR if error is not None else SUCCESS
        current = {"name": self.spec.name, "state": state,
                   "result": error if error is not None and result is None else result}
        evaluator = self._evaluator(ctx, kwargs, current)
        published, global_values = evaluate_publish(self.spec, evaluator, error is not None)
        new_ctx = {**ctx, **published}
        evaluator = self._evaluator(new_ctx, kwargs, {**current, "published": published})
        targets: list[Transition] = []
        handled = error is None
        if not self.links.reverse:
            first = self.spec.on_error if error is not None else self.spec.on_success
            targets = self._transitions(evaluator, first)
            handled = handled or bool(targets)
            targets += self._transitions(evaluator, self.spec.on_complete)
        for index, item in enumerate(targets):
            if item.target in ("fail", "succeed"):  # what follows is never processed
                targets = targets[:index + 1]
                break
        names = [t.target for t in targets]
        if self.links.machine:
            return self._steps(state, current["result"], published, new_ctx, targets,
                               global_values, evaluator, error, handled)
        failing = None
        if names and names[-1] == "fail":
            msg = targets[-1].params.get("msg")
            failing = workbook_clauses.fail_message(
                self.spec.name, None if msg is None else evaluator.evaluate(msg), error)
            if not (self.links.contained and self.links.prefix):  # a sub-workflow's:
                raise FailCommand(failing)  # its task's on-error decides
        if global_values:
            self.runtime.scope.publish(global_values)
        chosen = [n for n in names if n not in COMMANDS]
        outcome = {"state": state, "result": current["result"], "published": published,
                   "ctx": new_ctx, "next": chosen}  # after an error: the error, as Mistral
        if global_values:
            outcome[execution_scope.GLOBAL] = global_values
        if "succeed" in names:
            outcome[execution_scope.ENDED] = self.links.prefix
            self.runtime.scope.end(self.links.prefix)
        for item in targets:
            if item.target in ("succeed", "pause") and item.params.get("msg") is not None:
                outcome["state_info"] = str(evaluator.evaluate(item.params["msg"]))
        if failing is not None:
            outcome.update({UNHANDLED: "later", "state_info": failing,
                            execution_scope.FAILED_BY: self.links.prefix})
            self.runtime.scope.fail_later(self.links.prefix, self.name, failing)
            self.runtime.scope.stop(self.links.prefix)
        self._error_keys(outcome, error, handled, bool(targets))
        if "pause" in names:
            self.runtime.scope.pause()
        return outcome

    def _steps(self, state: str, result: Any, published: dict[str, Any],
               ctx: dict[str, Any], targets: list[Transition], global_values: dict[str, Any],
               evaluator: expressions.Evaluator, error: str | None,
               handled: bool) -> dict[str, Any]:
        """The outcome of a task execution of :mod:`.state_machine`: its fired targets
        in list order, engine commands included (:data:`STEPS`: ``[target, message]``),
        for the machine to apply in that order; ``next`` names the tasks only."""
        steps = []
        for item in targets:
            msg = item.params.get("msg")
            text = str(evaluator.evaluate(msg)) if msg is not None else None
            if item.target == "fail":
                text = workbook_clauses.fail_message(self.spec.name, text, error)
            steps.append([item.target, text])
        if global_values:
            self.runtime.scope.publish(global_values)
        outcome = {"state": state, "result": result, "published": published, "ctx": ctx,
                   "next": [t.target for t in targets if t.target not in COMMANDS],
                   STEPS: steps}
        if global_values:
            outcome[execution_scope.GLOBAL] = global_values
        for target, text in steps:  # read by the execution record (command_message)
            if target == "succeed":
                outcome[execution_scope.ENDED] = self.links.prefix
            if target in ("succeed", "pause") and text is not None:
                outcome["state_info"] = text
        self._error_keys(outcome, error, handled, bool(targets))
        return outcome

    def _error_keys(self, outcome: dict[str, Any], error: str | None, handled: bool,
                    fired: bool) -> None:
        """After an error: the error, and whether no transition handled it."""
        if error is None:
            return
        outcome["error"] = error
        if not handled:
            # No transition fired: the caller fails the task now (never persisted).
            outcome[UNHANDLED] = "later" if fired else "now"
            if fired:
                self.runtime.scope.fail_later(self.links.prefix, self.name, error)

    def _contain(self, outcome: dict[str, Any], cause: BaseException | None = None) -> bool:
        """When this atom's workflow is the execution's own (Mistral lets the other
        branches finish) or a sub-workflow whose task answers errors, turn an error
        that fails it now into one that fails it at its end (a sub-workflow's task
        then fails, and the parent's transitions decide): True when contained."""
        if outcome.get(UNHANDLED) != "now" or not self.links.contained:
            return False
        outcome[UNHANDLED] = "later"
        self.runtime.scope.fail_later(self.links.prefix, self.name, str(outcome["error"]), cause)
        record = error_records.describe(cause)
        if record is not None:  # raised as it is at the end, in any process
            outcome[error_records.ERROR_RECORD] = record
        return True

    def _unhandled_error(self, prefix: str) -> str | None:
        """Why the workflow of ``prefix`` (its last atom asks) failed: one of its tasks
        failed with no ``on-error`` transition handling it; None when none did or a
        ``succeed`` ended it first (Mistral then reports SUCCESS)."""
        if self.runtime.scope.ended(prefix):
            return None
        failed = self.runtime.scope.failed_tasks(prefix)
        if not failed:
            return None
        return execution_scope.unhandled_message(
            [(atom[len(prefix):], error) for atom, error in failed])
