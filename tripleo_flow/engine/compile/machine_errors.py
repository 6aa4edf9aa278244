"""Unhandled task errors of :mod:`.state_machine`, as Mistral's direct workflow
controller treats them: a task execution that fails with no ``on-error`` transition
handling it does not stop the others.  The task executions already running or ready,
and those their transitions create, still run (joins waiting for the failed task
fail, and their ``on-error`` decides); once nothing is left to run, the workflow
fails, naming every unhandled error (Mistral's ``check_and_complete``).  A ``fail``
command, a stop (Ctrl-C, a conductor's shutdown) and a refused action (plan code,
outbound connections) still stop new task executions at once.

Split from the machine, whose state (its failing error, the failed task execution)
these methods read and change.
"""

from __future__ import annotations

from typing import Any

from taskflow import states
from taskflow.types import failure

from tripleo_flow import exceptions
from tripleo_flow.engine.compile import atoms, execution_scope, item_results
from tripleo_flow.engine.store import error_records

#: Errors that stop new task executions at once rather than once the others ended.
STOP_NOW = (exceptions.FailCommand, exceptions.Interrupted, exceptions.PlanCodeNotAllowed)


class Errors:
    """The error handling the :class:`~.state_machine.Machine` inherits."""

    runtime: atoms.Runtime
    _ended: bool
    _failing: BaseException | None
    _failed_name: str | None
    #: The unhandled errors that let the other task executions go on, in order.
    _errors: list[tuple[str, BaseException]]

    _ready: list[Any]
    storage: Any

    def _record(self, tex: Any, state: str, result: Any, **values: Any) -> None:
        raise NotImplementedError

    def _replay_failures(self) -> None:
        """A resumed execution: the replayed task executions that had failed stay
        failed (they run no more), their errors kept for the workflow's end."""
        for tex in list(self._ready):
            detail = self.storage.details.get(tex.name)
            if detail is None or detail.state != states.FAILURE:
                continue
            self._ready.remove(tex)
            tex.detail = detail
            cause = detail.failure
            # The error as the first process raised it (its kind and next steps).
            self._errors.append((tex.name, error_records.rebuild(
                (detail.meta or {}).get(error_records.ERROR_RECORD)) or exceptions.TaskFailed(
                str(cause.exception_str) if isinstance(cause, failure.Failure)
                else str(cause))))

    def _fail_task(self, tex: Any, exc: BaseException) -> None:
        """Record ``tex`` failed by ``exc``; stop now only for :data:`STOP_NOW`."""
        fail = failure.Failure.from_exception(exc)
        record = error_records.describe(exc)
        meta = {k: v for k, v in (tex.detail.meta or {}).items() if k != item_results.DONE}
        if record is not None:  # a resumed execution reports it as raised here
            meta[error_records.ERROR_RECORD] = record
        if item_results.of(exc):  # for a rerun without reset
            meta[item_results.DONE] = item_results.of(exc)
        self._record(tex, states.FAILURE, fail, failure=fail, meta=meta)
        if self._failing is not None:
            return
        if isinstance(exc, STOP_NOW):
            self._failing = exc
            self._failed_name = tex.name
        else:
            self._errors.append((tex.name, exc))

    def _unhandled(self) -> BaseException | None:
        """Once nothing is left to run: why the workflow fails (None: it does not).
        One unhandled error alone is raised as it is (its kind and next steps kept);
        several, or ones that ran ``on-complete`` first, are named together, with
        the next steps of each and the kind they share
        (:func:`~.error_records.combined`)."""
        if self._ended:
            return None
        later = self.runtime.scope.failed_tasks("")
        if not later and len(self._errors) == 1:
            self._failed_name, error = self._errors[0]
            return error
        failed = [(atom.partition("[")[0], error) for atom, error in later]
        failed += [(name.partition("[")[0], str(exc) or type(exc).__name__)
                   for name, exc in self._errors]
        if not failed:
            return None
        if self._errors:
            self._failed_name = self._errors[0][0]
        return error_records.combined(execution_scope.unhandled_message(failed),
                                      self.runtime.scope.causes("")
                                      + [exc for _name, exc in self._errors])
