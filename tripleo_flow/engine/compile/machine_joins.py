"""The joins of :mod:`.state_machine`: a task with ``join`` waits for its inbound
transitions, as Mistral's direct workflow controller decides (:mod:`.join_rule`),
runs once they allow it, and fails once they never can.

Split from the machine, whose state (its ready, latest and waiting task
executions) these methods read and change.
"""

from __future__ import annotations

from typing import Any

from tripleo_flow.common import clock
from tripleo_flow.engine.compile import atoms, join_rule
from tripleo_flow.engine.lang.workbook_model import WorkflowSpec
from tripleo_flow.exceptions import JoinFailed


class Joins:
    """The join handling the :class:`~.state_machine.Machine` inherits."""

    workflow: WorkflowSpec
    runtime: atoms.Runtime
    _joins: dict[str, Any]
    _latest: dict[str, Any]
    _ready: list[Any]
    _inbound: dict[str, list[str]]
    _joined: set[str]
    _start_ctx: dict[str, Any]

    def _start(self, tex: Any) -> None:
        raise NotImplementedError

    def _atom(self, tex: Any) -> Any:
        raise NotImplementedError

    def _kwargs(self, tex: Any, attempt: int) -> dict[str, Any]:
        raise NotImplementedError

    def _fail_task(self, tex: Any, exc: BaseException) -> None:
        raise NotImplementedError

    def _complete(self, tex: Any, outcome: dict[str, Any], live: bool) -> None:
        raise NotImplementedError

    def _join_view(self) -> join_rule.Runs:
        fired = {name: (None if tex.outcome is None else tex.outcome.get("next") or [])
                 for name, tex in self._latest.items()}
        return join_rule.Runs(fired, {t.task for t in self._ready}, self._inbound)

    def _check_joins(self) -> None:
        for name, join in list(self._joins.items()):
            if not join.join_waiting:
                continue
            state = self._join_view().state(name, self.workflow.tasks[name].join or "all")
            if state == join_rule.RUNNING:
                self._release(name, join)
            elif state == join_rule.ERROR:
                self._fail_join(name, join)

    def _release(self, name: str, join: Any) -> None:
        join.join_waiting = False
        join.ctx = atoms.merge_contexts([t.outcome or {} for t in join.triggers])
        self._joined.add(name)
        self._ready.append(join)

    def _fail_stuck_joins(self) -> bool:
        """Nothing runs and nothing is ready: a join still waiting can never fire, and
        fails (its ``on-error`` may handle it).  True when one did."""
        stuck = [(name, join) for name, join in self._joins.items() if join.join_waiting]
        for name, join in stuck:
            self._fail_join(name, join)
        return bool(stuck)

    def _fail_join(self, name: str, join: Any) -> None:
        """A join that can no longer fire fails, as in Mistral (ERROR, "Failed by
        tasks: ..."), and its ``on-error`` transitions decide what follows."""
        join.join_waiting = False
        self._joined.add(name)
        error = (f"join {name!r} can no longer fire: failed by tasks "
                 f"{self._join_view().blocking(name)}")
        join.ctx = (atoms.merge_contexts([t.outcome or {} for t in join.triggers])
                    if join.triggers else dict(self._start_ctx))
        self._start(join)
        atom = self._atom(join)
        try:
            outcome = atom._finish(join.ctx, self._kwargs(join, 1), None, error)
        except Exception as exc:
            self._fail_task(join, exc)
            return
        if outcome.get(atoms.UNHANDLED) == "now":
            # what it published on error reaches the workflow's output, as Mistral's
            self.runtime.scope.keep_error_context(join.name, outcome["ctx"])
            self._fail_task(join, JoinFailed(error))
            return
        outcome["started_at"] = outcome["finished_at"] = clock.time()
        self._complete(join, outcome, live=True)
