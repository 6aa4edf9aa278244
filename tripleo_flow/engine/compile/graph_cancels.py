"""Cancelled sub-workflows of a compiled workflow (a reverse workflow, or one run to a
target), as Mistral treats them; :mod:`.machine_cancels` does the same on the state
machine.

A ``workflow:`` task whose child execution was cancelled
(:class:`~tripleo_flow.exceptions.ChildCancelled`: a client cancelled the child, not
the parent) completes CANCELLED with the child's message as its ``state_info``
(:func:`outcome`); a task that requires it does not run (it reads SKIPPED), the
others run to their ends; then the workflow's end (:class:`CancellingExit`) records
the execution CANCELLED with ``Cancelled tasks: TASK, ...`` (a cancelled task wins
over unhandled errors, as Mistral's ``check_and_complete``).  The end is recorded as
any cancel (:mod:`.cancels`): a row that readers see, so a parent of this execution
sees its sub-workflow cancelled in turn, and that no resume runs it again.

Where ours differs: a cancelled task inside a sub-workflow inlined in the graph (one
that is no execution of its own) ends its tasks that require it, not the inlined
sub-workflow's task: that one completes and the tasks after it run (Mistral's
sub-workflow execution would end CANCELLED, and its task with it).
"""

from __future__ import annotations

from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import atoms, workflow_atoms
from tripleo_flow.engine.store.states import CANCELLED, CANCELLED_INFO


def outcome(ctx: dict[str, Any], cancelled: exceptions.ChildCancelled) -> dict[str, Any]:
    """The outcome of a task whose sub-workflow was cancelled: CANCELLED with the
    child's message, choosing no task after it."""
    now = clock.time()
    return {"state": CANCELLED, CANCELLED_INFO: cancelled.state_info, "ctx": ctx,
            "published": {}, "result": None, "started_at": now, "finished_at": now,
            atoms.STEPS: [], "next": []}


class CancellingExit(workflow_atoms.ExitAtom):
    """The end of a compiled top-level workflow: once every task ended, the execution
    ends CANCELLED when one of its tasks did."""

    def _run(self, **kwargs: Any) -> dict[str, Any]:
        try:
            result = super()._run(**kwargs)
        except Exception:
            if not self._end_cancelled():
                raise
            return {"state": atoms.SUCCESS, "result": None, "ctx": {}, "next": []}
        self._end_cancelled()
        return result

    def _end_cancelled(self) -> bool:
        """Record the execution CANCELLED when a task of it was; whether one was."""
        store = getattr(self.runtime.children, "store", None)
        scope = self.runtime.scope
        if store is None or not any(getattr(spec, "workflow", None)
                                    for spec in scope.task_specs.values()):
            return False  # no task of it runs a sub-workflow: none was cancelled
        names = [record["name"].partition("/")[0]
                 for record in scope.tasks("", recursive=True, state=CANCELLED)]
        if not names:
            return False
        tasks = ", ".join(dict.fromkeys(names))
        store.cancels.record(scope.execution_id, f"Cancelled tasks: {tasks}")
        store.pause_requests.request(scope.execution_id)  # never run again, as any cancel
        return True


__all__ = ["CancellingExit", "outcome"]
