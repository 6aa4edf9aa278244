"""How a run of :mod:`.state_machine` ends: the workflow's ``output`` evaluated over
the context its last task executions left (``task()`` of each task's latest
execution), or, when it failed, its completed task executions undone newest first
(the flow ends REVERTED; FAILURE when a revert failed).

Split from the machine, whose state (its task executions, its failing error) these
methods read.
"""

from __future__ import annotations

from typing import Any

from taskflow import states
from taskflow.types import failure

from tripleo_flow.engine.compile import atoms
from tripleo_flow.engine.lang import expressions
from tripleo_flow.engine.lang.workbook_model import WorkflowSpec


class Ends:
    """The end of a run the :class:`~.state_machine.Machine` inherits."""

    runtime: atoms.Runtime
    workflow: WorkflowSpec
    storage: Any
    atom_notifier: Any
    _failing: BaseException | None
    _failed_name: str | None
    _done: list[Any]
    _latest: dict[str, Any]
    _start_ctx: dict[str, Any]

    def _atom(self, tex: Any) -> Any:
        raise NotImplementedError

    def _revert(self) -> None:
        """Undo the completed task executions, newest first; the flow ends REVERTED
        (FAILURE when a revert failed)."""
        self.storage.set_flow_state(states.REVERTING)
        failures = {}
        if self._failed_name is not None and self._failing is not None:
            failures[self._failed_name] = failure.Failure.from_exception(self._failing)
        ok = True
        # The failed task executions undid their own action before failing: they read
        # REVERTED with their error kept, as the graph engine reports them.
        for detail in list(self.storage.details.values()):
            if detail.state == states.FAILURE:
                detail.state = states.REVERTED
                self.storage.save(detail)
                self.atom_notifier.notify(states.REVERTED, {
                    "task_name": detail.name, "task_uuid": detail.uuid, "result": None})
        for tex in reversed(self._done):
            detail = tex.detail or self.storage.details.get(tex.name)
            if detail is None or detail.state != states.SUCCESS:
                continue
            info = {"task_name": tex.name, "task_uuid": detail.uuid, "result": None}
            self.atom_notifier.notify(states.REVERTING, info)
            try:
                self._atom(tex).revert(result=tex.outcome, flow_failures=failures)
            except Exception as exc:
                ok = False
                detail.state = states.REVERT_FAILURE
                detail.revert_failure = failure.Failure.from_exception(exc)
                self.storage.save(detail)
                continue
            detail.state = states.REVERTED
            self.storage.save(detail)
            self.atom_notifier.notify(states.REVERTED, info)
        self.storage.set_flow_state(states.REVERTED if ok else states.FAILURE)

    def _output(self) -> Any:
        ends = [t.outcome for t in self._done if t.outcome is not None
                and not t.outcome.get("next")]
        ctx = atoms.merge_contexts(ends) if ends else dict(self._start_ctx)
        if self.workflow.output is None:
            return ctx

        def lookup(name: str | None) -> Any:
            tex = self._latest.get(name or "")
            if tex is not None and tex.outcome is not None:
                return self.runtime.scope.outcome_model("", tex.name, tex.task, tex.outcome)
            if name in self.workflow.tasks:
                return None  # a task of the workflow that did not run: null, as Mistral
            raise expressions.ExpressionError(f"task({name!r})", "unknown task")

        return expressions.Evaluator(self.runtime.scope.with_globals(ctx), lookup,
                                     self.runtime.execution,
                                     self.runtime.expression_limits,
                                     hooks(self.runtime)).evaluate(self.workflow.output)


def hooks(runtime: atoms.Runtime) -> dict[str, Any]:
    """What a workflow's ``output`` may call besides ``task()``: ``tasks()``,
    ``global()``, ``env()``."""
    scope = runtime.scope
    return {"tasks": lambda ex_id=None, recursive=False, state=None: scope.tasks(
                "", bool(recursive), state),
            "global": scope.get_global, "env": lambda: dict(scope.env)}


__all__ = ["Ends", "hooks"]
