"""The atom of an action task: runs one action (once per item with ``with-items``).

Split from :mod:`tripleo_flow.engine.compile.atoms` (the outcome contract and the
sub-workflow atoms live there); :class:`DelayedTimes` is the retry controller
a task with ``retry`` sits under.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from taskflow import retry, task
from taskflow.types import failure

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import (
    async_tasks,
    atoms,
    execution_scope,
    graph_cancels,
    item_results,
    item_runs,
    task_progress,
)
from tripleo_flow.engine.compile.atoms import ERROR, INPUTS, SUCCESS, Links, Runtime, _WorkbookAtom
from tripleo_flow.engine.lang import expressions
from tripleo_flow.engine.lang.action import Action, ExecutionInfo, reverter, with_run
from tripleo_flow.engine.lang.workbook_model import TaskSpec
from tripleo_flow.engine.store import error_records, redaction, undo_journal
from tripleo_flow.exceptions import BreakRetry, FailCommand, RetriesExhausted, TaskFailed

#: Items of one ``with-items`` task running at once at most (its ``concurrency`` unset:
#: all of them, as in Mistral, within this bound).
MAX_ITEM_THREADS = 16
#: Outcome key of the action a task ran when its name was an expression.
ACTION = "action"


class ActionAtom(_WorkbookAtom):
    """One workbook task running one action (``with-items``: once per item)."""

    def __init__(self, name: str, spec: TaskSpec, links: Links, runtime: Runtime,
                 extra_requires: Sequence[str] = ()) -> None:
        super().__init__(name, spec, links, runtime, extra_requires=extra_requires)
        self._action: Action | None = None
        #: The action's name once given by an expression (``action: <% $.name %>``).
        self._action_name: str | None = None
        self._last_attempt = True
        self._attempt_no = 1
        #: When its asynchronous action was first started (a task execution run again).
        self._first_start: float | None = None
        #: When this attempt times out (clock.time()): its task execution's start plus
        #: its timeout on a first attempt (a wait-before counts, as Mistral's timeout
        #: starts with the task execution); None: from when its action starts.
        self._task_deadline: float | None = None

    def execute(self, **kwargs: Any) -> dict[str, Any]:
        outcome = super().execute(**kwargs)
        if self._first_start is not None:
            outcome["started_at"] = self._first_start
        return outcome

    def _get_action(self) -> Action:
        if self._action is None:
            cls = self.runtime.actions(self._action_label())
            context = task_progress.with_progress(self.runtime.action_context,
                                                  self._progress)
            scope = self.runtime.scope
            context = with_run(context, execution=ExecutionInfo(
                str(self.runtime.execution.get("name") or ""), scope.execution_id,
                self.spec.name, scope.atom_id(self.name)))
            self._action = cls(context)
        return self._action

    def _action_label(self) -> str:
        return self._action_name or self.spec.action or "std.noop"

    def _resolve_action(self, evaluator: expressions.Evaluator) -> None:
        """An action name written as an expression: evaluated as the task starts (as
        Mistral's), kept with the outcome for a revert."""
        written = self.spec.action or ""
        if self._action_name is not None or not expressions.has_expression(written):
            return
        name = evaluator.evaluate(written)
        if not isinstance(name, str) or not name.strip():
            raise TaskFailed(f"task {self.spec.name!r}: action {written!r} gave {name!r}, "
                             "not an action name")
        self._action_name = name.strip()

    def _progress(self, report: dict[str, Any], typed: task_progress.Progress) -> None:
        """Report through TaskFlow (stored with the task: ``TaskRecord.progress``)."""
        self.notifier.notify(task.EVENT_UPDATE_PROGRESS,
                             {"progress": task_progress.fraction(report), **report})
        if self.runtime.on_progress is not None:
            self.runtime.on_progress(self.name, report, typed)

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
        inputs = self._task_input(self._evaluator(data, kwargs))
        masked = redaction.masked_inputs(inputs)
        if masked and check:  # a resumed execution read back a context whose secrets were masked
            raise exceptions.SecretNotPersisted(self.spec.name, masked)
        return inputs

    def _call(self, inputs: dict[str, Any], timeout: float | None,
              item: int | None = None, until: float | None = None) -> Any:
        """Run the action with ``inputs`` within ``timeout`` seconds, or until the
        deadline ``until`` of its task (an item of a ``with-items`` task)."""
        action = self._get_action()
        attempt = self._attempt_no

        def execute() -> Any:  # in the thread that runs the action: its undo records' key
            with undo_journal.ExecutionUndoJournal.running(self.name, attempt, item), \
                    execution_scope.acting_in(self.runtime.scope.env):
                return action.execute(**inputs)

        if timeout is None:
            return execute()
        wait = timeout if until is None else item_runs.left(until)
        if wait is not None and wait <= 0:  # its task timed out before it started
            raise TaskFailed(f"task {self.spec.name!r} timed out after {timeout:g} s")
        future = self.runtime.executor.submit(execute)
        if not clock.wait_futures([future], wait).done:
            raise TaskFailed(f"task {self.spec.name!r} timed out after {timeout:g} s")
        return future.result()

    def _until(self) -> float | None:
        """The attempt's deadline on the :func:`~tripleo_flow.common.clock.monotonic`
        clock, when it counts from the task execution's start (None: the timeout counts
        from the action's)."""
        if self._task_deadline is None:
            return None
        return clock.monotonic() + (self._task_deadline - clock.time())

    def _undo(self, inputs: dict[str, Any], result: Any,
              flow_failures: Mapping[str, Any] | None = None) -> None:
        """Revert the action (nothing when it defines no revert); ``flow_failures`` (what
        failed, by atom) reaches actions that take it, so a revert can record the reason
        of the failure."""
        revert = reverter(self._get_action())
        if revert is None:
            return
        accepted = _accepted(revert)
        args = {k: v for k, v in inputs.items() if accepted is None or k in accepted}
        if accepted is None or "flow_failures" in accepted:
            args["flow_failures"] = dict(flow_failures or {})
        with execution_scope.acting_in(self.runtime.scope.env):
            revert(result=result, **args)

    def _run_items(self, ctx: dict[str, Any], kwargs: Mapping[str, Any],
                   evaluator: expressions.Evaluator, timeout: float | None, width: int
                   ) -> tuple[Any, Any]:
        """Run the action (once per item): its result(s), and the inputs it was given
        (a list per item), kept with the outcome so a revert gets those very inputs."""
        items = self._items(evaluator)
        until = self._until()
        if until is not None and until <= clock.monotonic():  # timed out while it waited
            raise TaskFailed(f"task {self.spec.name!r} timed out after {timeout:g} s")
        if self._get_action().asynchronous:
            return async_tasks.run(self, [self._inputs(ctx, kwargs, None)] if items is None
                                   else [self._inputs(ctx, kwargs, item) for item in items],
                                   items is not None, timeout, width, ctx)
        if items is None:
            inputs = self._inputs(ctx, kwargs, None)
            try:
                return self._call(inputs, timeout, None, until), inputs
            except (TaskFailed, exceptions.ChildPaused):
                raise  # a paused child: nothing to undo, the task goes on once resumed
            except Exception as exc:
                self._undo(inputs, failure.Failure.from_exception(exc),
                           {self.name: failure.Failure.from_exception(exc)})
                raise
        all_inputs = [self._inputs(ctx, kwargs, item) for item in items]
        results: list[Any] = [None] * len(items)
        # A rerun without reset: the items that had succeeded keep their results.
        kept = {i: r for i, r in self.runtime.scope.kept_items.pop(self.name, {}).items()
                if i < len(items)}
        for index, result in kept.items():
            results[index] = result
        done: list[int] = list(kept)
        all_inputs_run = [(i, inputs) for i, inputs in enumerate(all_inputs) if i not in kept]
        width = min(width or len(items), len(items), MAX_ITEM_THREADS)
        failed: dict[int, BaseException] = {}
        first_error, cancelled = item_runs.run(
            lambda inputs, index, until: self._call(inputs, timeout, index, until),
            all_inputs_run, width, until or item_runs.deadline(timeout), results, done, failed)
        if isinstance(first_error, exceptions.ChildCancelled) and len(items) > 1:
            raise exceptions.ChildCancelled(  # Mistral's with-items task: CANCELLED
                self.name, first_error.execution_id,
                f"{len(cancelled)} of {len(items)} sub-workflow executions were cancelled: "
                f"{first_error.state_info}") from first_error
        if isinstance(first_error, exceptions.ChildPaused):
            raise first_error  # the others ended: read back from their records on resume
        if first_error is not None:
            for index in sorted(done, reverse=True):
                self._undo(all_inputs[index], results[index])
            error = error_records.prefixed(  # of its kind, with its next steps
                f"task {self.spec.name!r}, one of {len(items)} items failed: ", first_error)
            if done and not self._get_action().has_revert():  # for a rerun without reset
                item_results.attach(error, {index: results[index] for index in done})
            item_results.with_result(error, item_runs.outputs(results, done, failed))
            raise error from first_error
        return results, all_inputs

    def _run(self, **kwargs: Any) -> dict[str, Any]:
        self._last_attempt = True  # until the retry count is known
        try:
            return self._run_task(kwargs)
        except (RetriesExhausted, exceptions.ChildPaused):
            raise
        except Exception as exc:
            # Only a retry count given as an expression leaves the controller unbounded:
            # the task itself ends the retries.
            policy = self.spec.retry
            if policy is not None and isinstance(policy.count, str) and self._last_attempt:
                raise RetriesExhausted(_describe(exc)) from exc
            raise

    def _run_task(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        chosen = self._selected(kwargs)
        if not self._active(chosen):
            return self._skipped(kwargs)
        self.runtime.scope.began.add(self.links.prefix + self.spec.name)
        if self.runtime.stop_check is not None:  # Ctrl-C: this task fails, all reverts
            self.runtime.stop_check(self.spec.name)
        ctx = self._merge(chosen)
        evaluator = self._evaluator(ctx, kwargs)
        self._resolve_action(evaluator)
        if not self.runtime.plan_code_allowed and self._get_action().runs_plan_code:
            # Before it runs and outside on-error handling: no workbook routes around it.
            raise exceptions.PlanCodeNotAllowed(self._action_label(), self.spec.name)
        if not self.runtime.outbound_allowed and self._get_action().connects_out:
            raise exceptions.OutboundActionNotAllowed(self._action_label(), self.spec.name)
        if self._get_action().asynchronous:
            # Run again while its action waits for its client: it goes on waiting.
            self._first_start = async_tasks.started_before(self)
        if self._first_start is None:
            self._check_rerun(evaluator)
        keep_result = bool(evaluator.evaluate(self.spec.keep_result))
        if not keep_result and self._get_action().has_revert():
            raise TaskFailed(f"task {self.spec.name!r}: 'keep-result: false' cannot be used "
                             f"with action {self._action_label()!r}: undoing it needs its "
                             "result")
        attempt, attempts = self._attempt(kwargs, evaluator)
        began = clock.time() if self._first_start is None and attempt == 1 else None
        if began is not None:
            # Once per task execution, as Mistral's WaitBeforePolicy (before_task_start):
            # a retry continues the task execution without waiting before it again.
            self._wait("wait-before", self.spec.wait_before, evaluator)
        timeout = self._policy("timeout", self.spec.timeout, evaluator) or None  # 0: none
        self._task_deadline = None if timeout is None or began is None else began + timeout
        concurrency = self.spec.with_items.concurrency if self.spec.with_items else None
        # Unset (or 0): every item at once, as Mistral (up to MAX_ITEM_THREADS here).
        width = int(self._policy("concurrency", concurrency, evaluator, whole=True) or 0)
        self._last_attempt = attempt >= attempts
        self._attempt_no = attempt
        policy = self.spec.retry
        delay = 0.0
        if policy is not None:
            delay = self._policy("retry delay", policy.delay, evaluator) or 0.0
            if attempt > 1 and isinstance(policy.delay, str):  # the controller waits a number
                clock.sleep(max(0.0, delay))
        while True:
            try:
                result, inputs = self._run_items(ctx, kwargs, evaluator, timeout, width)
                self._check_fail_on(ctx, kwargs, result, inputs)
            except Exception as exc:
                if isinstance(exc, exceptions.ChildCancelled) and not self.links.machine:
                    return graph_cancels.outcome(ctx, exc)  # the other branches go on
                if isinstance(exc, (exceptions.Interrupted, exceptions.ChildPaused)):
                    raise  # stopping (pausing) is not an error a workbook handles or retries
                if attempt < attempts and not self._breaks(ctx, kwargs, exc):
                    raise
                if not (self.spec.reacts_to_errors() or self.links.contained):
                    raise
                outcome = self._after(ctx, kwargs, _error_data(exc), _describe(exc))
                if item_results.of(exc):
                    outcome[item_results.DONE] = item_results.of(exc)
                if outcome.get(atoms.UNHANDLED) == "later":  # on-complete ran: named at
                    self.runtime.scope.keep_kind(self.name, exc, outcome)  # the end
                elif outcome.get(atoms.UNHANDLED) == "now" and not self._contain(outcome, exc):
                    # No transition fired: the task fails the workflow now, with what
                    # it published on error kept for the workflow's output-on-error.
                    self.runtime.scope.keep_error_context(self.name, outcome["ctx"], exc)
                    raise
                return outcome
            if (policy is not None and policy.continue_on is not None and attempt < attempts
                    and self._evaluator(ctx, kwargs, {"result": result}).evaluate(
                        policy.continue_on)):
                attempt += 1
                self._last_attempt = attempt >= attempts
                self._attempt_no = attempt
                self._task_deadline = None  # each retry its whole timeout
                clock.sleep(max(0.0, delay))
                continue
            outcome = self._after(ctx, kwargs, result, None, inputs)
            if not keep_result:
                outcome["result"] = None
                outcome[execution_scope.RESULT_DROPPED] = True
            return outcome

    def _check_fail_on(self, ctx: dict[str, Any], kwargs: Mapping[str, Any], result: Any,
                       inputs: Any) -> None:
        """``fail-on``: a condition true over the result fails the task (its action
        undone first), which a retry runs again, as Mistral's fail-on policy does."""
        if self.spec.fail_on is None:
            return
        current = {"name": self.spec.name, "state": SUCCESS, "result": result}
        try:
            failed = self._evaluator(ctx, kwargs, current).evaluate(self.spec.fail_on)
        except Exception as exc:
            self._revert_outcome({"state": SUCCESS, "result": result, INPUTS: inputs}, kwargs)
            raise TaskFailed(f"task {self.spec.name!r}: 'fail-on': {exc}") from exc
        if failed:
            self._revert_outcome({"state": SUCCESS, "result": result, INPUTS: inputs}, kwargs)
            raise TaskFailed(f"task {self.spec.name!r} failed by its 'fail-on' condition "
                             f"{self.spec.fail_on!r}, true for its result")

    def _check_rerun(self, evaluator: expressions.Evaluator) -> None:
        """``safe-rerun: false``: a task a crash interrupted fails instead of running
        again when the execution resumes (unset or true: it runs again)."""
        if self.spec.safe_rerun is None:
            return
        if self.name not in self.runtime.scope.interrupted:
            self.runtime.scope.mark_running()
            return
        if not evaluator.evaluate(self.spec.safe_rerun):
            raise TaskFailed(f"task {self.spec.name!r} was running when the execution was "
                             "interrupted and is marked 'safe-rerun: false': it is not run "
                             "again; check what it did, then run the workflow again")

    def _breaks(self, ctx: dict[str, Any], kwargs: Mapping[str, Any], exc: Exception) -> bool:
        policy = self.spec.retry
        if policy is None or policy.break_on is None:
            return False
        data = _error_data(exc)
        current = {"name": self.spec.name, "state": ERROR,
                   "result": _describe(exc) if data is None else data}
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
            if self._action_name is not None:
                outcome[ACTION] = self._action_name
            if self._get_action().secret_result:
                outcome[redaction.SECRET_RESULT] = True
            self._wait("wait-after", self.spec.wait_after,
                       self._evaluator(outcome["ctx"], kwargs))
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
        if self._action_name is None and isinstance(result.get(ACTION), str):
            self._action_name = result[ACTION]  # a resumed execution: the name it ran
        self._revert_outcome(result, kwargs, flow_failures)


class PauseGate(_WorkbookAtom):
    """``pause-before``: pauses the execution before its task runs.

    The gate's own outcome is persisted, so the task runs when the execution is
    resumed (``execution resume``) instead of pausing again.
    """

    def __init__(self, task_atom: str, spec: TaskSpec, links: Links, runtime: Runtime) -> None:
        super().__init__(task_atom + "#pause", spec, dataclasses.replace(links, retry=False),
                         runtime, provides=pause_symbol(task_atom))

    def _run(self, **kwargs: Any) -> dict[str, Any]:
        chosen = self._selected(kwargs)
        if self._active(chosen) and self._evaluator(self._merge(chosen), kwargs).evaluate(
                self.spec.pause_before):
            self.runtime.scope.pause()
            return {"state": SUCCESS, "paused": True}
        return {"state": SUCCESS, "paused": False}


def pause_symbol(atom_name: str) -> str:
    return f"pause:{atom_name}"


class DelayedTimes(retry.Times):  # type: ignore[misc]
    """``retry: {count, delay}``: retries a task, waiting ``delay`` s between attempts."""

    def __init__(self, attempts: int, delay: float, name: str, provides: str) -> None:
        super().__init__(attempts=attempts, name=name, provides=provides, revert_all=True)
        self.delay = delay

    def on_failure(self, history: Any, *args: Any, **kwargs: Any) -> Any:
        if history.caused_by(BreakRetry) or history.caused_by(FailCommand) \
                or history.caused_by(RetriesExhausted) \
                or history.caused_by(exceptions.PlanCodeNotAllowed) \
                or history.caused_by(exceptions.Interrupted):
            return retry.REVERT_ALL
        return super().on_failure(history, *args, **kwargs)

    def execute(self, history: Any, *args: Any, **kwargs: Any) -> int:
        if len(history) and self.delay:
            clock.sleep(self.delay)
        return int(super().execute(history, *args, **kwargs))


def _accepted(func: Callable[..., Any]) -> set[str] | None:
    params = inspect.signature(func).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params}


def _error_data(exc: BaseException) -> Any:
    """The error data an action gave with its error (``std.fail error_data=...``), which
    ``task().result`` reads after the error as in Mistral; None: it gave none."""
    if isinstance(exc, exceptions.ActionFailed):
        return exc.data
    return item_results.result_of(exc)  # a with-items task's: each item's output


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
