"""The TaskFlow atoms a compiled workbook is made of.

Every workbook task becomes one :class:`ActionAtom` (or, for a ``workflow:``
task, an :class:`EnterAtom` / child atoms / :class:`ExitAtom` sandwich).  An
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

import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

from taskflow import retry, task
from taskflow.types import failure

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action
from tripleo_flow.exceptions import BreakRetry, FailCommand, TaskFailed
from tripleo_flow.flows import expressions, redaction, task_progress
from tripleo_flow.flows.workbook_model import TaskSpec, Transition, WorkflowSpec, apply_inputs

SUCCESS, ERROR, SKIPPED = "SUCCESS", "ERROR", "SKIPPED"
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


@dataclass
class Runtime:
    """What atoms need while running: action classes, their context, the execution."""

    actions: Callable[[str], type[Action]]
    action_context: Any
    executor: futures.Executor
    execution: dict[str, Any] = field(default_factory=dict)
    #: Told ``(task name, progress details)`` when a task's action reports progress.
    on_progress: Callable[[str, dict[str, Any]], None] | None = None
    #: False when started over HTTP without ``[api] allow_plan_code``: refuse ``runs_plan_code``.
    plan_code_allowed: bool = True
    #: How large a value one expression may build (``[limits]``).
    expression_limits: expressions.Limits = expressions.DEFAULT_LIMITS


@dataclass(frozen=True)
class Links:
    """Where an atom sits: its predecessors (atom names) and referenced tasks."""

    prefix: str
    preds: tuple[str, ...]
    refs: tuple[str, ...] = ()
    start: bool = False
    reverse: bool = False
    retry: bool = False


class _WorkbookAtom(task.Task):  # type: ignore[misc]
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

    def execute(self, **kwargs: Any) -> dict[str, Any]:
        started = time.time()
        outcome = self._run(**kwargs)
        outcome["started_at"], outcome["finished_at"] = started, time.time()
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
            if outcome.get("state") == SKIPPED:
                continue
            if self.links.reverse or self.spec.name in outcome.get("next", ()):
                chosen.append(outcome)
        return chosen

    def _active(self, chosen: list[Mapping[str, Any]]) -> bool:
        inbound = len(self.links.preds) + (1 if self.links.start else 0)
        if self.links.reverse or self.spec.join == "all":
            return len(chosen) == inbound and inbound > 0
        if isinstance(self.spec.join, int):
            return len(chosen) >= self.spec.join
        return bool(chosen)

    @staticmethod
    def _merge(chosen: list[Mapping[str, Any]]) -> dict[str, Any]:
        ctx: dict[str, Any] = {}
        for outcome in chosen:
            ctx.update(outcome.get("ctx") or {})
        return ctx

    def _evaluator(self, ctx: Mapping[str, Any], kwargs: Mapping[str, Any],
                   current: Mapping[str, Any] | None = None) -> expressions.Evaluator:
        def lookup(name: str | None) -> Any:
            if name is None or (current is not None and name == self.spec.name):
                if current is None:
                    raise expressions.ExpressionError("task()", "only usable in publish")
                return current
            outcome = kwargs.get(task_symbol(self.links.prefix + name))
            if outcome is None:
                raise expressions.ExpressionError(f"task({name!r})", "unknown task")
            return {"name": name, "state": outcome.get("state"),
                    "result": outcome.get("result"), "published": outcome.get("published")}

        return expressions.Evaluator(ctx, lookup, self.runtime.execution,
                                     self.runtime.expression_limits)

    def _transitions(self, evaluator: expressions.Evaluator,
                     transitions: Sequence[Transition]) -> list[str]:
        chosen = []
        for item in transitions:
            if item.condition is None or bool(evaluator.evaluate(item.condition)):
                chosen.append(item.target)
        return chosen

    def _wait(self, value: Any, evaluator: expressions.Evaluator) -> None:
        if value is not None:
            time.sleep(max(0.0, float(evaluator.evaluate(value))))

    def _attempt(self, kwargs: Mapping[str, Any]) -> tuple[int, int]:
        if not self.links.retry or self.spec.retry is None:
            return 1, 1
        return int(kwargs[retry_symbol(self.name)]), self.spec.retry.count + 1

    def _skipped(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """A skipped task passes on what its predecessors published (for the output)."""
        outcomes = [kwargs[task_symbol(p)] for p in self.links.preds]
        if self.links.start:
            outcomes.insert(0, kwargs[input_symbol(self.links.prefix)])
        return {"state": SKIPPED, "next": [], "ctx": self._merge(outcomes)}

    def _finish(self, ctx: dict[str, Any], kwargs: Mapping[str, Any], result: Any,
                error: str | None) -> dict[str, Any]:
        """Publish and choose transitions; raise FailCommand on a 'fail' transition."""
        state = ERROR if error is not None else SUCCESS
        current = {"name": self.spec.name, "state": state,
                   "result": error if error is not None else result}
        evaluator = self._evaluator(ctx, kwargs, current)
        publish = self.spec.publish_on_error if error is not None else self.spec.publish
        published = {k: evaluator.evaluate(v) for k, v in publish.items()}
        new_ctx = {**ctx, **published}
        evaluator = self._evaluator(new_ctx, kwargs, {**current, "published": published})
        if self.links.reverse:
            targets: list[str] = []
        else:
            first = self.spec.on_error if error is not None else self.spec.on_success
            targets = self._transitions(evaluator, first + self.spec.on_complete)
        if "fail" in targets:
            raise FailCommand(f"task {self.spec.name!r} reached a 'fail' transition"
                              + (f" after an error: {error}" if error else ""))
        chosen = [] if "succeed" in targets else [t for t in targets if t != "noop"]
        outcome = {"state": state, "result": result, "published": published, "ctx": new_ctx,
                   "next": chosen}
        if error is not None:
            outcome["error"] = error
        return outcome


class ActionAtom(_WorkbookAtom):
    """One workbook task running one action (``with-items``: once per item)."""

    def __init__(self, name: str, spec: TaskSpec, links: Links, runtime: Runtime) -> None:
        super().__init__(name, spec, links, runtime)
        self._action: Action | None = None

    def _get_action(self) -> Action:
        if self._action is None:
            cls = self.runtime.actions(self.spec.action or "std.noop")
            self._action = cls(task_progress.with_progress(
                self.runtime.action_context, self._progress), name=self.name)
        return self._action

    def _progress(self, report: dict[str, Any]) -> None:
        """Report through TaskFlow (stored with the task: ``TaskRecord.progress``)."""
        self.notifier.notify(task.EVENT_UPDATE_PROGRESS,
                             {"progress": task_progress.fraction(report), **report})
        if self.runtime.on_progress is not None:
            self.runtime.on_progress(self.name, report)

    def _items(self, evaluator: expressions.Evaluator) -> list[dict[str, Any]] | None:
        if self.spec.with_items is None:
            return None
        columns = []
        for var, expr in self.spec.with_items.bindings:
            values = evaluator.evaluate(expr if expressions.has_expression(expr)
                                        else f"<% {expr} %>")
            if not isinstance(values, (list, tuple)):
                raise TaskFailed(f"task {self.spec.name!r}: with-items {var!r} is not a list "
                                 f"(got {type(values).__name__})")
            columns.append((var, list(values)))
        lengths = {len(values) for _var, values in columns}
        if len(lengths) > 1:
            raise TaskFailed(f"task {self.spec.name!r}: with-items lists differ in length")
        count = lengths.pop() if lengths else 0
        return [{var: values[i] for var, values in columns} for i in range(count)]

    def _inputs(self, ctx: Mapping[str, Any], kwargs: Mapping[str, Any],
                item: Mapping[str, Any] | None, check: bool = True) -> dict[str, Any]:
        data = {**ctx, **item} if item else ctx
        inputs = dict(self._evaluator(data, kwargs).evaluate(self.spec.input))
        masked = redaction.masked_inputs(inputs)
        if masked and check:  # a resumed execution read back a context whose secrets were masked
            raise exceptions.SecretNotPersisted(self.spec.name, masked)
        return inputs

    def _call(self, inputs: dict[str, Any], timeout: float | None) -> Any:
        action = self._get_action()
        if timeout is None:
            return action.execute(**inputs)
        future = self.runtime.executor.submit(action.execute, **inputs)
        try:
            return future.result(timeout=timeout)
        except futures.TimeoutError:
            raise TaskFailed(f"task {self.spec.name!r} timed out after {timeout:g} s") from None

    def _undo(self, inputs: dict[str, Any], result: Any,
              flow_failures: Mapping[str, Any] | None = None) -> None:
        """Revert the action; ``flow_failures`` (what failed, by atom) reaches actions
        that take it, so a revert can record the reason of the failure."""
        action = self._get_action()
        accepted = _accepted(action.revert)
        args = {k: v for k, v in inputs.items() if accepted is None or k in accepted}
        if accepted is None or "flow_failures" in accepted:
            args["flow_failures"] = dict(flow_failures or {})
        action.revert(result=result, **args)

    def _run_items(self, ctx: dict[str, Any], kwargs: Mapping[str, Any],
                   evaluator: expressions.Evaluator, timeout: float | None
                   ) -> tuple[Any, Any]:
        """Run the action (once per item): its result(s), and the inputs it was given
        (a list per item), kept with the outcome so a revert gets those very inputs."""
        items = self._items(evaluator)
        if items is None:
            inputs = self._inputs(ctx, kwargs, None)
            try:
                return self._call(inputs, timeout), inputs
            except TaskFailed:
                raise
            except Exception as exc:
                self._undo(inputs, failure.Failure.from_exception(exc),
                           {self.name: failure.Failure.from_exception(exc)})
                raise
        concurrency = self.spec.with_items.concurrency if self.spec.with_items else None
        width = int(evaluator.evaluate(concurrency)) if concurrency is not None else 1
        all_inputs = [self._inputs(ctx, kwargs, item) for item in items]
        results: list[Any] = [None] * len(items)
        done: list[int] = []
        first_error: BaseException | None = None
        if width <= 1 or len(items) <= 1:
            for index, inputs in enumerate(all_inputs):
                try:
                    results[index] = self._call(inputs, timeout)
                    done.append(index)
                except Exception as exc:
                    first_error = exc
                    break
        else:
            pending: dict[futures.Future[Any], int] = {}
            queue = list(enumerate(all_inputs))
            while (queue or pending) and first_error is None:
                while queue and len(pending) < width:
                    index, inputs = queue.pop(0)
                    pending[self.runtime.executor.submit(self._call, inputs, timeout)] = index
                finished, _ = futures.wait(pending, return_when=futures.FIRST_COMPLETED)
                for fut in finished:
                    index = pending.pop(fut)
                    try:
                        results[index] = fut.result()
                        done.append(index)
                    except Exception as exc:
                        first_error = first_error or exc
            for fut, index in pending.items():
                try:
                    results[index] = fut.result()
                    done.append(index)
                except Exception:
                    pass
        if first_error is not None:
            for index in sorted(done, reverse=True):
                self._undo(all_inputs[index], results[index])
            raise TaskFailed(f"task {self.spec.name!r}, one of {len(items)} items failed: "
                             f"{first_error}") from first_error
        return results, all_inputs

    def _run(self, **kwargs: Any) -> dict[str, Any]:
        chosen = self._selected(kwargs)
        if not self._active(chosen):
            return self._skipped(kwargs)
        if not self.runtime.plan_code_allowed and self._get_action().runs_plan_code:
            # Before it runs and outside on-error handling: no workbook routes around it.
            raise exceptions.PlanCodeNotAllowed(self.spec.action or "std.noop", self.spec.name)
        ctx = self._merge(chosen)
        evaluator = self._evaluator(ctx, kwargs)
        self._wait(self.spec.wait_before, evaluator)
        timeout = evaluator.evaluate(self.spec.timeout) if self.spec.timeout is not None else None
        attempt, attempts = self._attempt(kwargs)
        policy = self.spec.retry
        while True:
            try:
                result, inputs = self._run_items(
                    ctx, kwargs, evaluator, float(timeout) if timeout is not None else None)
            except Exception as exc:
                if attempt < attempts and not self._breaks(ctx, kwargs, exc):
                    raise
                if not self.spec.handles_errors():
                    raise
                return self._after(ctx, kwargs, None, _describe(exc))
            if (policy is not None and policy.continue_on is not None and attempt < attempts
                    and self._evaluator(ctx, kwargs, {"result": result}).evaluate(
                        policy.continue_on)):
                attempt += 1
                time.sleep(policy.delay)
                continue
            return self._after(ctx, kwargs, result, None, inputs)

    def _breaks(self, ctx: dict[str, Any], kwargs: Mapping[str, Any], exc: Exception) -> bool:
        policy = self.spec.retry
        if policy is None or policy.break_on is None:
            return False
        current = {"name": self.spec.name, "state": ERROR, "result": _describe(exc)}
        if self._evaluator(ctx, kwargs, current).evaluate(policy.break_on):
            raise BreakRetry(f"task {self.spec.name!r}: retry break-on matched after: "
                             f"{_describe(exc)}") from exc
        return False

    def _after(self, ctx: dict[str, Any], kwargs: Mapping[str, Any], result: Any,
               error: str | None, inputs: Any = None) -> dict[str, Any]:
        try:
            outcome = self._finish(ctx, kwargs, result, error)
            if error is None:
                outcome[INPUTS] = inputs
            if self._get_action().secret_result:
                outcome[redaction.SECRET_RESULT] = True
            self._wait(self.spec.wait_after, self._evaluator(outcome["ctx"], kwargs))
            return outcome
        except Exception as exc:
            if error is None:
                self._revert_outcome({"state": SUCCESS, "result": result, INPUTS: inputs},
                                     kwargs)
            if isinstance(exc, TaskFailed):
                raise
            raise TaskFailed(f"task {self.spec.name!r}: {exc}") from exc

    def _revert_outcome(self, outcome: Mapping[str, Any], kwargs: Mapping[str, Any],
                        flow_failures: Mapping[str, Any] | None = None) -> None:
        if outcome.get("state") != SUCCESS:
            return
        given = outcome.get(INPUTS)
        if given is None:  # an outcome recorded before inputs were kept: evaluate again
            ctx = self._merge(self._selected(kwargs))
            items = self._items(self._evaluator(ctx, kwargs))
            given = (self._inputs(ctx, kwargs, None, check=False) if items is None else
                     [self._inputs(ctx, kwargs, item, check=False) for item in items])
        if isinstance(given, Mapping):
            self._undo(dict(given), outcome.get("result"), flow_failures)
            return
        results = outcome.get("result") or []
        for index in reversed(range(len(given))):
            self._undo(dict(given[index]), results[index] if index < len(results) else None,
                       flow_failures)

    def revert(self, result: Any = None, flow_failures: Any = None, **kwargs: Any) -> None:
        """Undo the action(s) of a completed task, newest item first.

        A failed task has already undone its own action before failing, so a
        failure result needs nothing here.
        """
        if isinstance(result, failure.Failure) or not isinstance(result, Mapping):
            return
        self._revert_outcome(result, kwargs, flow_failures)


class EnterAtom(_WorkbookAtom):
    """Start of a ``workflow:`` task: evaluates the sub-workflow's input."""

    def __init__(self, name: str, spec: TaskSpec, links: Links, runtime: Runtime,
                 child: WorkflowSpec, child_prefix: str) -> None:
        super().__init__(name, spec, links, runtime, provides=input_symbol(child_prefix))
        self.child = child

    def _run(self, **kwargs: Any) -> dict[str, Any]:
        chosen = self._selected(kwargs)
        if not self._active(chosen):
            skipped = self._skipped(kwargs)
            return {**skipped, "parent": skipped["ctx"]}
        ctx = self._merge(chosen)
        evaluator = self._evaluator(ctx, kwargs)
        self._wait(self.spec.wait_before, evaluator)
        given = dict(evaluator.evaluate(self.spec.input))
        child_ctx = apply_inputs(self.child, given)
        return {"state": SUCCESS, "ctx": child_ctx, "next": ["*"], "parent": ctx}


class ExitAtom(_WorkbookAtom):
    """End of a workflow: evaluates its output (and, for a sub-workflow, publishes)."""

    def __init__(self, name: str, spec: TaskSpec, links: Links, runtime: Runtime,
                 child: WorkflowSpec, child_prefix: str, child_atoms: Sequence[str],
                 provides: str | None = None) -> None:
        extra = [input_symbol(child_prefix)] + [task_symbol(a) for a in child_atoms]
        super().__init__(name, spec, links, runtime, extra_requires=extra, provides=provides)
        self.child = child
        self.child_prefix = child_prefix
        self.child_atoms = tuple(child_atoms)

    def _run(self, **kwargs: Any) -> dict[str, Any]:
        enter = kwargs[input_symbol(self.child_prefix)]
        if enter.get("state") == SKIPPED:
            return {"state": SKIPPED, "next": [], "ctx": dict(enter.get("parent") or {})}
        ctx = dict(enter.get("ctx") or {})
        for atom in self.child_atoms:  # the last tasks: their contexts hold all published
            ctx.update(kwargs[task_symbol(atom)].get("ctx") or {})
        output = self.child.output
        result = expressions.Evaluator(ctx, None, self.runtime.execution,
                                       self.runtime.expression_limits).evaluate(output) \
            if output is not None else ctx
        if self.spec.name == "":  # the top-level workflow
            return {"state": SUCCESS, "result": result, "ctx": ctx, "next": []}
        parent = dict(enter.get("parent") or {})
        outcome = self._finish(parent, kwargs, result, None)
        self._wait(self.spec.wait_after, self._evaluator(outcome["ctx"], kwargs))
        return outcome


class DelayedTimes(retry.Times):  # type: ignore[misc]
    """``retry: {count, delay}``: retries a task, waiting ``delay`` s between attempts."""

    def __init__(self, attempts: int, delay: float, name: str, provides: str) -> None:
        super().__init__(attempts=attempts, name=name, provides=provides, revert_all=True)
        self.delay = delay

    def on_failure(self, history: Any, *args: Any, **kwargs: Any) -> Any:
        if history.caused_by(BreakRetry) or history.caused_by(FailCommand) \
                or history.caused_by(exceptions.PlanCodeNotAllowed):
            return retry.REVERT_ALL
        return super().on_failure(history, *args, **kwargs)

    def execute(self, history: Any, *args: Any, **kwargs: Any) -> int:
        if len(history) and self.delay:
            time.sleep(self.delay)
        return int(super().execute(history, *args, **kwargs))


def _accepted(func: Callable[..., Any]) -> set[str] | None:
    params = inspect.signature(func).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params}


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
