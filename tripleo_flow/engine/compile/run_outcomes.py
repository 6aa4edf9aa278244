"""How an execution's run ends in its record: its output when the engine finished
(:func:`succeeded`, or PAUSED when a ``pause`` stopped it), why it failed
(:func:`record_failure`: the failed task, the cause, the output on error, as Mistral
gives it) and the output of one stopped by a client (:func:`stopped_output`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from taskflow import states
from taskflow.types import failure

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import (
    atoms,
    child_errors,
    compiler,
    stopped_publish,
    workflow_outputs,
)
from tripleo_flow.engine.lang import workbook_model
from tripleo_flow.engine.store import cancels, error_records
from tripleo_flow.engine.store.executions import ENTER, Execution, command_message

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.runner import Runner


def succeeded(runner: Runner, fd: Any, engine: Any) -> Execution:
    """Record the output of the finished engine of ``fd`` (or, when a ``pause``
    command stopped it, that it is PAUSED until resumed)."""
    if engine.storage.get_flow_state() == states.SUSPENDED:
        if cancels.finish(runner.store, fd, runner._journal(fd.uuid)):  # never resumed
            stopped_publish.settle(runner, fd.uuid)  # completed since a stop: publish
            return runner.store.get(fd.uuid)
        if runner._closing:  # this process stops: SUSPENDED, as a conductor leaves it
            runner.store.update_meta(fd)
        else:
            runner.store.update_meta(fd, paused_at=clock.time(),
                                   state_info=command_message(fd, ended=False))
        return runner.store.get(fd.uuid)
    output = (engine.storage.fetch(atoms.OUTPUT_SYMBOL) or {}).get("result")
    runner.store.update_meta(fd, output=output, finished_at=clock.time(), error=None,
                           failed_task=None,
                           state_info=command_message(fd, ended=True))
    runner._journal(fd.uuid).forget()
    runner.store.async_actions.cancel_execution(fd.uuid, "cancelled: the execution ended")
    runner.store.pause_requests.clear(fd.uuid)
    return runner.store.get(fd.uuid)


def record_failure(runner: Runner, fd: Any, exc: BaseException) -> tuple[str | None, str, bool]:
    """Record why the engine of ``fd`` failed: ``(failed task, cause, reverted)``."""
    fresh = runner.store.flow_detail(fd.uuid)
    failed_task, cause = None, str(exc) or type(exc).__name__
    for ad in fresh:
        if ad.failure is not None and "#retry" not in ad.name:
            failed_task = None if ad.name == compiler.END_ATOM else ad.name
            if failed_task is not None and failed_task.endswith(ENTER):
                failed_task = failed_task[:-len(ENTER)]  # its inline sub-workflow's input
            cause = str(ad.failure.exception_str) if isinstance(
                ad.failure, failure.Failure) else str(ad.failure)
            break
    if failed_task is None:  # the workflow's end: a task that went on with on-complete,
        # or (state machine) one that took a 'fail' transition
        failed_task = next((ad.name for ad in fresh if isinstance(ad.results, Mapping)
                            and (ad.results.get(atoms.UNHANDLED) or any(
                                step[0] == "fail"
                                for step in ad.results.get(atoms.STEPS) or ()))), None)
    reverted = fresh.state == states.REVERTED
    fd.state = fresh.state
    runner._journal(fd.uuid).forget()  # ended: no task of it runs again
    runner.store.async_actions.cancel_execution(fd.uuid, "cancelled: the execution ended")
    runner.store.pause_requests.clear(fd.uuid)
    # The error itself (raised here, in the task's process) knows its next steps:
    # kept as data (error_record), each reader words them (execution_records).
    if isinstance(exc, exceptions.TripleoFlowError) and getattr(exc, "several", False):
        cause = str(exc)  # several tasks' errors, each named (:mod:`.error_records`)
    runner.store.update_meta(
        fd, error=cause, failed_task=failed_task, finished_at=clock.time(),
        output=output_on_error(runner, fresh, cause),
        error_record=child_errors.kept(exc))  # its parent's task raises it again
    return failed_task, cause, reverted


#: TaskFlow's states of a flow whose run failed.
FAILED = (states.FAILURE, states.REVERTED, states.REVERT_FAILURE)


def unrecorded_failure(runner: Runner, fd: Any) -> BaseException | None:
    """The error of an execution whose run failed but whose end is not recorded (its
    process was killed after TaskFlow saved the flow's end, before
    :func:`record_failure`): the failed task's error as it raised it; None for any
    other execution.  Its resume records that end, as its run would have, rather than
    run a flow that ended (TaskFlow runs a REVERTED flow again from its start)."""
    if fd.state not in FAILED or (fd.meta or {}).get("finished_at") is not None:
        return None
    for ad in runner.store.flow_detail(fd.uuid):
        if ad.failure is not None and "#retry" not in ad.name:
            cause = ad.failure.exception_str if isinstance(ad.failure, failure.Failure) \
                else str(ad.failure)
            return error_records.rebuild((ad.meta or {}).get(error_records.ERROR_RECORD)) \
                or exceptions.TaskFailed(cause)
    return exceptions.TaskFailed(f"the workflow ended {fd.state}")


def output_on_error(runner: Runner, fresh: Any, cause: str) -> Any:
    """The output of a failed execution, as Mistral gives it: ``{"result": the
    error}`` merged with the workflow's ``output-on-error`` (without one, with the
    context itself), evaluated over the inputs and what the top-level tasks
    published at the end (the failed task's ``publish-on-error`` too), Mistral's final
    context (:func:`.workflow_outputs.failure_context`)."""
    meta = fresh.meta or {}
    try:
        workflow = runner._catalog().get(meta["workflow"])
        ctx = workbook_model.apply_inputs(workflow, meta.get("input") or {})
    except (KeyError, exceptions.TripleoFlowError):
        return {"result": cause}
    return workflow_outputs.on_error(
        fresh, workflow, workflow_outputs.failure_context(fresh, workflow, ctx), cause,
        runner._expression_limits())


def stopped_output(runner: Runner, execution_id: str, state: str, message: str | None) -> Any:
    """The output of ``execution_id`` stopped now in ``state`` (SUCCESS or FAILURE)
    with ``message``, as Mistral's ``Workflow.stop`` evaluates it
    (:func:`.workflow_outputs.stopped`); None for a workflow no longer known.

    :raises InvalidInput: SUCCESS and the workflow's output cannot be evaluated
    """
    fresh = runner.store.flow_detail(execution_id)
    meta = fresh.meta or {}
    try:
        workflow = runner._catalog().get(meta["workflow"])
    except (KeyError, exceptions.TripleoFlowError):
        return None
    output = workflow_outputs.stopped(fresh, workflow, state, message,
                                      runner._expression_limits())
    return runner.store.backend.redactor.value(output)  # kept beside the records


__all__ = ["FAILED", "output_on_error", "record_failure", "stopped_output", "succeeded",
           "unrecorded_failure"]
