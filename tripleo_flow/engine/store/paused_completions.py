"""A task whose asynchronous action is completed while its execution is PAUSED.

Mistral completes such a task at once (``on_action_complete``): it reads SUCCESS
(or ERROR) with its result and published variables while the workflow stays
PAUSED; its transitions wait for the resume.  Here the engine of a paused
execution has stopped, so :func:`settle` (called by the completion,
:mod:`tripleo_flow.client.tasks`) continues the execution with its pause held:
the state machine runs again only the task executions whose action executions
were all completed (:meth:`~.machine_waits.ClientWaits._answered`), records
them, starts nothing else and stops PAUSED again.  The resume then replays those
completions and runs what they fired.

While it settles, the execution is kept paused for readers and for other
processes (its pause request is held, so a resume elsewhere is refused as for a
pausing execution).  Not settled (left for the resume, as before): a task that
could start another action by running again (a ``with-items`` task with a
``concurrency``, a ``retry`` after an error: a paused execution starts none), a compiled
graph's task (a reverse workflow, an action named by an expression), whose
engine cannot run one task alone, and an execution not PAUSED (an interrupted
one is resumed by the completion instead).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tripleo_flow import exceptions
from tripleo_flow.engine.compile import state_machine
from tripleo_flow.engine.store.executions import PAUSED

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.runner import Runner


def _held(fresh: bool = False) -> bool:
    """The pause check of a settling run: the pause holds."""
    return True


def settle(runner: Runner, execution_id: str) -> bool:
    """Complete the task executions of PAUSED ``execution_id`` whose asynchronous
    actions were all completed, leaving it PAUSED; whether it ran (False: not
    paused, run by this process, being resumed, or not a state-machine run)."""
    store = runner.store
    if store.get(execution_id).state != PAUSED or execution_id in runner._live:
        return False
    try:
        runner._claim_resume(execution_id)
    except exceptions.Conflict:
        return False  # being resumed here: the resume completes it
    try:
        fd = store.flow_detail(execution_id)
        paused_at = (fd.meta or {}).get("paused_at")
        asked = store.pause_requests.requested([execution_id])
        engine, workflow = runner.load(fd)
        # Held while it runs: readers see it PAUSED, a resume elsewhere is refused.
        store.pause_requests.request(execution_id)
        try:
            if not isinstance(engine, state_machine.Machine):
                return False
            engine.pause_check = _held
            runner._live[execution_id] = engine
            try:
                engine.run()
            except Exception as exc:  # an engine error: recorded as any run's
                try:
                    runner._failed(fd, workflow, exc)
                except exceptions.WorkflowFailed:
                    pass  # the completion was taken; the record says why it failed
                return True
            finally:
                runner._live.pop(execution_id, None)
            runner.succeeded(fd, engine)
            return True
        finally:
            if not asked:
                store.pause_requests.clear(execution_id)
            if store.get(execution_id).state == PAUSED or not isinstance(
                    engine, state_machine.Machine):
                store.update_meta(fd, paused_at=paused_at)  # paused when it was
    finally:
        runner._resuming.discard(execution_id)
