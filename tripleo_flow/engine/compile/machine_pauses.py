"""Pauses of :mod:`.state_machine` that an execution's end or engine command meets.

Mistral keeps a paused workflow from completing until it is resumed
(``Workflow.check_and_complete`` returns while it is paused), and a task that
completes while its workflow is paused is left unprocessed: its transitions,
``fail`` and ``succeed`` included, are worked out again and applied when the
workflow resumes (``Task.complete`` returns before it dispatches them;
``Workflow.resume`` continues from the unprocessed tasks).  Here a pause is
pending once the machine was suspended (a pause in this process, a ``pause``
command, a paused child) or a pause request of another process is read (fresh,
not trusting a recent "no": :class:`~.pause_requests.PauseCheck`): then

* a run with nothing left to run (or only unhandled errors) stops PAUSED instead
  of ending;
* a ``fail`` or ``succeed`` command a completing task execution reaches is not
  applied: its completion is recorded with the targets it fired, so the resumed
  execution replays it and applies the command then (it fails, or succeeds);
* a ``pause`` command likewise starts nothing; the resume ignores it, as Mistral's
  (``Workflow._continue_workflow`` drops the pause commands of the tasks that completed
  while paused), and applies the rest of its list.  Met with no pause pending, a
  ``pause`` starts the tasks listed before it, then pauses.

Split from the machine, whose state these methods read and change.
"""

from __future__ import annotations

import threading
from typing import Any

from tripleo_flow.engine.lang.workbook_model import WorkflowSpec

#: Atom metadata of a task execution that paused the execution before it started.
PAUSED_BEFORE = "paused_before"


class Pauses:
    """The pause handling the :class:`~.state_machine.Machine` inherits."""

    _suspend: threading.Event
    _failing: BaseException | None
    _ended: bool
    pause_check: Any
    workflow: WorkflowSpec
    storage: Any
    runtime: Any

    def _atom(self, tex: Any) -> Any:
        raise NotImplementedError

    def _kwargs(self, tex: Any, attempt: int) -> dict[str, Any]:
        raise NotImplementedError

    def _pauses_before(self, tex: Any) -> bool:
        """``pause-before``: whether ``tex`` pauses the execution now (it is recorded,
        PENDING, with :data:`PAUSED_BEFORE`; once resumed it starts)."""
        spec = self.workflow.tasks[tex.task]
        detail = tex.detail or self.storage.details.get(tex.name)
        if spec.pause_before in (None, False) or (
                detail is not None and (detail.meta or {}).get(PAUSED_BEFORE)):
            return False
        atom = self._atom(tex)
        if not atom._evaluator(tex.ctx, self._kwargs(tex, 1)).evaluate(spec.pause_before):
            return False
        tex.detail = self.storage.detail(tex.name)
        self.storage.update_atom_metadata(tex.name, {PAUSED_BEFORE: True})
        return True

    def _pause_for_child(self, tex: Any) -> None:
        """The child execution of ``tex`` paused: ``tex`` stays RUNNING (its attempt
        durable, so the resumed execution finds the same child) and the execution
        pauses once its running task executions end, as Mistral's parent does."""
        self.storage.update_atom_metadata(tex.name, {"attempt": tex.attempt})
        self.runtime.scope.mark_running()
        self.suspend()


    def _pause_command(self, live: bool) -> bool | None:
        """A completing task execution met a ``pause`` command (``live``: it completed
        now, else replayed): None when it is not applied (replayed: it was applied as
        it completed, or it met a pending pause, and a resume ignores it as Mistral's
        ``_continue_workflow`` ignores pause commands: what follows in its list applies
        now), else the execution pauses and whether the tasks its list fired before it
        start now (as Mistral's dispatcher runs the task commands before a state
        change; not when a pause was pending: nothing starts until the resume)."""
        if not live:
            return None
        starting = not self._pause_pending()
        self.suspend()
        return starting

    def suspend(self) -> None:
        raise NotImplementedError

    def _pause_pending(self) -> bool:
        """Whether a pause of the execution is pending (suspended already, or asked
        by another process: it then suspends)."""
        if self._suspend.is_set():
            return True
        if self.pause_check is None or not self.pause_check(fresh=True):
            return False
        self.suspend()
        return True

    def _command_waits(self, live: bool) -> bool:
        """A completing task execution reached a ``fail`` or ``succeed`` command:
        whether it waits for the resume (``live``: it completed now, not replayed)."""
        return live and self._pause_pending()

    def _pause_asked_at_end(self) -> bool:
        """Nothing is left to run (or only unhandled errors are): whether a pending
        pause keeps the run from ending (it then stops PAUSED and ends once resumed).
        A ``fail`` or ``succeed`` command applied before the pause still ends it."""
        if self._failing is not None or self._ended:
            return False
        return self._pause_pending()
