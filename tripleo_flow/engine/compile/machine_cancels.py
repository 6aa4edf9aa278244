"""Cancelled sub-workflows of :mod:`.state_machine`, as Mistral's direct workflow
treats them.

A ``workflow:`` task whose child execution was cancelled
(:class:`~tripleo_flow.exceptions.ChildCancelled`: a client cancelled the child, not
the parent) completes CANCELLED with the child's message as its ``state_info`` and
fires no transition, ``on-complete`` included.  The parent's other task executions,
its other sub-workflows among them, still run to their ends; once nothing is left
to run the parent ends CANCELLED with ``Cancelled tasks: TASK, ...`` (Mistral's
``check_and_complete``: a cancelled task wins over unhandled errors; a ``fail``
command applied before still fails it).  The end is recorded as any cancel
(:mod:`.cancels`): a row, then the runner's :func:`~.cancels.finish`, so a parent
of this execution sees its sub-workflow cancelled in turn.

Split from the machine, whose state these methods read and change.
"""

from __future__ import annotations

from typing import Any

from taskflow import states

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import atoms
from tripleo_flow.engine.store.states import CANCELLED, CANCELLED_INFO


class Cancels:
    """The cancelled sub-workflows the :class:`~.state_machine.Machine` inherits."""

    runtime: atoms.Runtime
    storage: Any
    fd: Any
    _ended: bool
    _failing: BaseException | None
    #: The task executions that ended CANCELLED, in order.
    _cancelled: list[str]

    def _complete(self, tex: Any, outcome: dict[str, Any], live: bool) -> None:
        raise NotImplementedError

    def _cancel_task(self, tex: Any, cancelled: exceptions.ChildCancelled) -> None:
        """``tex``'s sub-workflow was cancelled: it completes CANCELLED, firing nothing."""
        now = clock.time()
        self._complete(tex, {"state": CANCELLED, CANCELLED_INFO: cancelled.state_info,
                             "ctx": tex.ctx, "published": {}, "started_at": now,
                             "finished_at": now, atoms.STEPS: [], "next": []}, live=True)

    def _note_cancelled(self, tex: Any, outcome: dict[str, Any]) -> None:
        """A completed (or replayed) task execution: noted when it ended CANCELLED."""
        if outcome.get("state") == CANCELLED:
            self._cancelled.append(tex.name)

    def _end_cancelled(self) -> bool:
        """Nothing is left to run: whether a cancelled task execution ends the run
        CANCELLED (recorded; the flow stops SUSPENDED for the runner to finish it)."""
        if self._failing is not None or self._ended or not self._cancelled:
            return False
        store = self.runtime.children.store if self.runtime.children is not None else None
        if store is None:
            return False
        tasks = ", ".join(dict.fromkeys(name.partition("[")[0] for name in self._cancelled))
        store.cancels.record(self.fd.uuid, f"Cancelled tasks: {tasks}")
        store.pause_requests.request(self.fd.uuid)  # never run again, as any cancel
        self.storage.set_flow_state(states.SUSPENDED)
        return True
