"""The Python API of jobboard execution: posting runs as jobs, following them, conductors.

With ``[jobboard] backend_url`` set, :meth:`WorkflowsMixin.run_workflow
<tripleo_flow.client.workflows.WorkflowsMixin.run_workflow>` records the execution
and posts it here instead of running it; ``tripleo-flow conductor`` processes
(:meth:`JobsMixin.run_conductor`) claim and run the jobs.  :class:`JobsMixin`
needs the attributes :class:`~tripleo_flow.client.workflows.WorkflowsMixin` needs.
"""

from __future__ import annotations

import functools
import socket
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.engine.jobs import jobboard
from tripleo_flow.engine.store.states import CANCELLED

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.runner import Listener, Runner
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


class JobsMixin:
    """Jobboard wiring of the workflows API (inert without ``[jobboard] backend_url``)."""

    conf: Any
    _wf_state: Callable[[], dict[str, Any]]
    _runner: Callable[[], Runner]
    list_workbooks: Callable[[], Any]

    def jobboard_settings(self) -> jobboard.BoardSettings | None:
        """``[jobboard]`` checked, or None when workflows run in-process."""
        return jobboard.BoardSettings.from_conf(self.conf)

    def _board(self) -> Any:
        state = self._wf_state()
        if "board" not in state:
            settings = self.jobboard_settings()
            if settings is None:
                raise exceptions.InvalidInput(
                    "No jobboard is configured: set [jobboard] backend_url (redis://... or "
                    "zookeeper://...) to run workflows on conductors.")
            state["board"] = jobboard.make_board(settings, self._runner().store.backend)
        return state["board"]

    def close_jobboard(self) -> None:
        board = self._wf_state().pop("board", None)
        if board is not None:
            board.close()

    def _post_execution(self, fd: Any) -> None:
        """Post the job that runs the recorded execution ``fd``."""
        runner = self._runner()
        shown = runner.store.backend.redactor.value(dict((fd.meta or {}).get("input") or {}))
        jobboard.post(self._board(), runner.store.book().uuid, fd, shown)

    def _execution_job(self, execution_id: str) -> Any:
        """The job of the execution on the board (claimed or not), or None."""
        for job in self._board().iterjobs(ensure_fresh=True):
            if (job.details or {}).get(jobboard.EXECUTION_KEY) == execution_id:
                return job
        return None

    def follow_execution(self, execution_id: str, listeners: Iterable[Listener] = (),
                         timeout: float | None = None) -> Execution:
        """Wait for an execution that runs elsewhere (a conductor) to end.

        Task changes seen in its record go to ``listeners`` as progress events.

        A cancelled execution is returned once its running tasks ended (CANCELLED).

        :raises WorkflowFailed: when it failed (its completed tasks were reverted)
        :raises Conflict: it had not ended after ``timeout`` s
        """
        settings = self.jobboard_settings()
        poll = settings.poll_interval if settings is not None \
            else float(self.conf.jobboard.poll_interval)  # a worker runs it: the same look
        store = self._runner().store
        listeners = tuple(listeners)
        seen: dict[str, tuple[str, Any, bool]] = {}
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            execution = store.get(execution_id)
            if listeners:
                for task in store.tasks(execution_id):
                    _emit(execution, task, seen, listeners)
            if execution.state in (*ENDED, CANCELLED) and execution.finished_at is not None:
                break
            if deadline is not None and time.monotonic() > deadline:
                raise exceptions.Conflict(
                    f"Execution {execution_id!r} has not ended after {timeout:g} s "
                    f"({execution.state});", hints=[exceptions.Hint(
                        "follow it with", "execution.show", {"execution": execution_id})])
            time.sleep(poll)
        if execution.state not in ("SUCCESS", CANCELLED):  # cancelled: not a failure
            raise exceptions.WorkflowFailed(execution.workflow, execution.failed_task,
                                            execution.error or execution.state,
                                            execution.reverted)
        return execution

    def run_conductor(self, name: str | None = None, concurrency: int = 4,
                      max_jobs: int | None = None,
                      started: Callable[[Conductor], None] | None = None) -> None:
        """Claim and run posted executions until stopped (``conductor.stop()``).

        :param concurrency: executions this process runs at the same time
        :param max_jobs: return once this many jobs have been run (None: never)
        :param started: called with the conductor before it runs (to stop it from
            a signal handler)
        """
        from tripleo_flow.engine.jobs.conductor import Conductor

        settings = self.jobboard_settings()
        if settings is None:
            raise exceptions.InvalidInput(
                "A conductor needs a jobboard: set [jobboard] backend_url (redis://... or "
                "zookeeper://...) and a [workflows] connection every process shares.")
        if concurrency < 1:
            raise exceptions.InvalidInput(
                f"--concurrency must be at least 1, not {concurrency}.")
        if max_jobs is not None and max_jobs < 1:
            raise exceptions.InvalidInput(f"--max-jobs must be at least 1, not {max_jobs}.")
        runner = self._runner()
        runner.store.book()  # ready before the first claim: database, workbooks, actions
        self.list_workbooks()  # the checked catalog, its actions loaded
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
    at = time.time()
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


__all__ = ["ENDED", "JobsMixin"]
