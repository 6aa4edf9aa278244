"""Jobboard execution: ``client.conductors`` runs the executions posted as jobs.

With ``[jobboard] backend_url`` set, :meth:`client.executions.create
<tripleo_flow.client.executions.ExecutionManager.create>` records the execution and
posts it (:meth:`~tripleo_flow.client.session.Session.post_execution`) instead of
running it; ``tripleo-flow conductor`` processes (:meth:`ConductorManager.run`) claim
and run the jobs, and :meth:`~tripleo_flow.client.executions.ExecutionManager.follow`
reads the record of one until it ends (:func:`_emit` makes its progress events).
"""

from __future__ import annotations

import functools
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client.base import Manager
from tripleo_flow.common import clock
from tripleo_flow.engine.jobs import jobboard

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.runner import Listener
    from tripleo_flow.engine.jobs.conductor import Conductor
    from tripleo_flow.engine.store.executions import Execution, TaskRecord

#: Execution states (as records read them) after which nothing more happens by itself:
#: SUCCESS and ERROR (Mistral's names; a stored FAILURE or REVERTED reads ERROR).
ENDED = ("SUCCESS", "ERROR")


@functools.cache
def _task_events() -> dict[str, str]:
    """The progress event a task's new state makes."""
    from taskflow import states

    from tripleo_flow.engine.compile import atoms

    return {states.RUNNING: "started", states.SUCCESS: "succeeded",
            states.FAILURE: "failed", states.REVERTING: "reverting",
            states.REVERTED: "reverted", states.RETRYING: "retrying",
            atoms.SKIPPED: "skipped", atoms.ERROR: "failed"}


class ConductorManager(Manager):
    """Conductors: processes that run the executions posted on the jobboard
    (``client.conductors``)."""

    def run(self, name: str | None = None, concurrency: int = 4,
            max_jobs: int | None = None,
            started: Callable[[Conductor], None] | None = None) -> None:
        """Claim and run posted executions until stopped (``conductor.stop()``).

        :param concurrency: executions this process runs at the same time
        :param max_jobs: return once this many jobs have been run (None: never)
        :param started: called with the conductor before it runs (to stop it from
            a signal handler)
        """
        from tripleo_flow.engine.jobs.conductor import Conductor

        settings = self._session.jobboard_settings()
        if settings is None:
            raise exceptions.InvalidInput(
                "A conductor needs a jobboard: set [jobboard] backend_url (redis://... or "
                "zookeeper://...) and a [workflows] connection every process shares.")
        if concurrency < 1:
            raise exceptions.InvalidInput(
                f"--concurrency must be at least 1, not {concurrency}.")
        if max_jobs is not None and max_jobs < 1:
            raise exceptions.InvalidInput(f"--max-jobs must be at least 1, not {max_jobs}.")
        runner = self._session.runner()
        runner.store.book()  # ready before the first claim: database, workbooks, actions
        self._session.catalog()  # the checked catalog, its actions loaded
        board = jobboard.make_board(settings, runner.store.backend)
        conductor = Conductor(name or f"conductor-{socket.gethostname()}", board, runner,
                              concurrency, settings, max_jobs)
        if started is not None:
            started(conductor)
        try:
            conductor.run()
        finally:
            board.close()


def _emit(execution: Execution, task: TaskRecord, seen: dict[str, tuple[str, Any, bool]],
          listeners: tuple[Listener, ...]) -> None:
    """Send an event for ``task`` when its state or its progress changed."""
    from tripleo_flow.engine.compile.runner import ProgressEvent

    before = seen.get(task.name)
    now = (task.state, task.progress, task.reverted)
    if before == now:
        return
    seen[task.name] = now
    at = clock.time()
    events = []
    if before is None or before[0] != task.state:
        events.append(_task_events().get(task.state))
    if task.reverted and task.state != "REVERTED" and not (before and before[2]):
        events.append("reverted")  # a failed task reads ERROR; its undo is this event
    for event in events:
        if event is not None:
            progress = ProgressEvent(execution.id, execution.workflow, task.name, event, at,
                                     task.result, task.error)
            for listener in listeners:
                listener(progress)
    if task.progress:
        report = ProgressEvent(execution.id, execution.workflow, task.name, "progress", at,
                               progress=dict(task.progress))
        for listener in listeners:
            listener(report)


__all__ = ["ENDED", "ConductorManager"]
