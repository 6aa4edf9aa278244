"""Resuming an execution: continued from its last completed task, here or in a thread
of this process, once a pause of one this process runs has settled; refused while it
runs elsewhere, pauses, or ended (:func:`resumable`), or while this process resumes it
already (:func:`claim_resume`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from taskflow import states

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile.progress_events import Listener
from tripleo_flow.engine.store import pause_requests, pause_views
from tripleo_flow.engine.store.executions import Execution
from tripleo_flow.engine.store.states import ERROR

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.runner import Runner

LOG = logging.getLogger(__name__)

#: How long a resume waits for a pause of an execution run here to settle (s).
PAUSE_SETTLE = 30.0


def resume(runner: Runner, execution_id: str, listeners: Iterable[Listener] = (),
           wait: bool = True, origin: str | None = None) -> Execution:
    """Continue an interrupted execution from its last completed task; with ``wait``
    False return while it runs in a thread.  A second resume of the same execution
    while this process runs one is refused.

    An execution this process runs that is still pausing (its running tasks end)
    is continued once it paused, as Mistral resumes a paused workflow at once
    (readers show it PAUSED): with ``wait`` the caller waits (up to
    :data:`PAUSE_SETTLE` s), without it the resume is accepted at once (its
    record as readers show it: PAUSED, pausing) and its thread waits (an HTTP
    request holds no server thread meanwhile).

    :param origin: :data:`~tripleo_flow.engine.store.executions.ORIGIN_API` when an HTTP API
        user asks: only an execution an API user started may then be resumed (it
        runs with the rights of whoever started it)
    """
    if (ended := runner.ended(execution_id, origin)) is not None:
        return ended
    top = runner.resume_target(execution_id)
    if top != execution_id:  # a paused parent: it resumes this child in its task
        runner.resume(top, listeners, wait, origin)
        return runner.store.get(execution_id)
    pausing = pausing_here(runner, execution_id)
    if pausing and not wait:
        pause_requests.check_origin(runner.store, execution_id, origin, "resume")
        claim_resume(runner, execution_id)

        def paused() -> Any:
            settle_pause(runner, execution_id, None)
            return resumable(runner, execution_id, origin)

        # As readers show it: PAUSED, pausing, until its running tasks ended.
        return pause_views.shown_one(
            runner.store, in_thread(runner, execution_id, listeners, paused))
    if pausing:
        settle_pause(runner, execution_id, PAUSE_SETTLE)
    fd = resumable(runner, execution_id, origin)
    claim_resume(runner, execution_id)
    if wait:
        try:
            return runner.execute(fd, listeners)
        finally:
            runner._resuming.discard(execution_id)
    return in_thread(runner, execution_id, listeners, lambda: fd)


def claim_resume(runner: Runner, execution_id: str) -> None:
    """Note that ``execution_id`` is being resumed here; Conflict if it is already."""
    with runner._resume_lock:
        if execution_id in runner._resuming:
            raise exceptions.Conflict(
                f"Execution {execution_id!r} is being resumed already; follow it.")
        runner._resuming.add(execution_id)


def in_thread(runner: Runner, execution_id: str, listeners: Iterable[Listener],
               flow_detail: Callable[[], Any]) -> Execution:
    """Continue ``execution_id`` (its flow detail: ``flow_detail()``, in the thread)
    in a thread of this process; its record as the thread starts."""
    listeners = tuple(listeners)

    def run() -> None:
        try:
            if not runner._closing:  # a resume waiting for its pause while this stops
                runner._quiet(flow_detail(), listeners)
        except exceptions.TripleoFlowError as exc:
            LOG.info("execution %s was not resumed: %s", execution_id, exc)
        except Exception:  # a background resume must not die silently
            LOG.exception("execution %s could not be resumed", execution_id)
        finally:
            runner._resuming.discard(execution_id)

    thread = threading.Thread(target=run, name=f"execution-{execution_id}", daemon=True)
    runner._background.append(thread)
    thread.start()
    return runner.store.get(execution_id)


def pausing_here(runner: Runner, execution_id: str) -> bool:
    """Whether an execution this process runs is pausing (asked to, still running)."""
    return execution_id in runner._live and runner.store.pause_requests.requested(
        [execution_id])


def settle_pause(runner: Runner, execution_id: str, limit: float | None) -> None:
    """Wait (up to ``limit`` s; None: as long as it takes, unless this runner closes)
    while an execution this process runs is still pausing (its engine lets its
    running tasks end).  Another process's execution is not waited for
    (:func:`resumable` refuses it while it pauses)."""
    deadline = None if limit is None else clock.monotonic() + limit
    while execution_id in runner._live and not runner._closing and (
            deadline is None or clock.monotonic() < deadline):
        clock.sleep(0.02)


def resumable(runner: Runner, execution_id: str, origin: str | None = None) -> Any:
    """The flow detail of an execution that can be continued (paused, suspended,
    interrupted by a crash); Conflict when it ended or still runs, or (``origin``
    given) when it was not started from that origin."""
    record = runner.store.get(execution_id)
    pause_requests.check_origin(runner.store, execution_id, origin, "resume")
    if record.state in (states.SUCCESS, ERROR):
        raise exceptions.Conflict(
            f"Execution {execution_id!r} has already ended ({record.state}); nothing to "
            "resume.", hints=[exceptions.Hint(
                "Run it again with", "workflow.run", {"workflow": record.workflow})])
    if record.state in (states.RUNNING, states.PENDING, states.SUSPENDING) and \
            runner.store.pause_requests.requested([execution_id]):
        raise exceptions.Conflict(
            f"Execution {execution_id!r} is pausing: the process that runs it lets its "
            "running tasks end first (no new task starts); resume it once they ended.")
    if record.state == states.RUNNING:
        raise exceptions.Conflict(
            f"Execution {execution_id!r} is still running in another process; wait for it "
            "or stop that process first.")
    runner.store.pause_requests.clear(execution_id)  # resumed: no longer asked to pause
    return runner.store.flow_detail(execution_id)


__all__ = ["PAUSE_SETTLE", "claim_resume", "resumable", "resume"]
