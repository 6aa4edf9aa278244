"""Task executions of :mod:`.state_machine` that wait for clients.

A task execution whose asynchronous action waits for a client
(:class:`~.async_actions.Waiting`, :mod:`.async_tasks`) is parked: no thread runs it
meanwhile.  The machine runs it again once one of its action executions is no longer
RUNNING (a completion: at once when made in this process, at the next poll when made
by another) or its first deadline passed (its ``timeout``).  A stop request (Ctrl-C)
fails a parked one; a failed or ended (``succeed``) workflow stops waiting and
cancels what it waited for; a suspended one (pause, a stopping server) leaves them
RUNNING: the resumed execution runs them again, and they go on waiting.  A pause
asked by another process (:mod:`.pause_requests`) is looked for at each poll.

Split from the machine, whose state these methods read and change.
"""

from __future__ import annotations

import threading
from typing import Any

from taskflow import states
from taskflow.types import failure

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import async_actions, atoms
from tripleo_flow.exceptions import TaskFailed


class ClientWaits:
    """The waits for clients the :class:`~.state_machine.Machine` inherits."""

    runtime: atoms.Runtime
    storage: Any
    workflow: Any
    _waiting: list[Any]
    _again: list[Any]
    _wake: threading.Event
    _failing: BaseException | None
    pause_check: Any

    def suspend(self) -> None:
        raise NotImplementedError

    def _fail_task(self, tex: Any, exc: BaseException) -> None:
        raise NotImplementedError

    def _record(self, tex: Any, state: str, result: Any, **values: Any) -> None:
        raise NotImplementedError

    def waits_for_clients(self) -> bool:
        """Whether task executions of it wait for clients to complete their actions."""
        return bool(self._waiting)

    def _park(self, tex: Any, waiting: async_actions.Waiting) -> None:
        """``tex`` waits for its asynchronous action(s): no thread runs it meanwhile; its
        RUNNING state and attempt are made durable (a restart finds it waiting)."""
        tex.waiting, tex.deadline = waiting.ids, waiting.deadline
        self._waiting.append(tex)
        self.storage.update_atom_metadata(tex.name, {"attempt": tex.attempt})
        self.runtime.scope.mark_running()

    def _answered(self, ready: list[Any], execution_id: str) -> list[Any]:
        """Of the task executions a resumed run is about to start (``ready``), those
        that had started and whose action executions (of the attempt they waited in)
        were all completed since: they continue rather than start, so they complete
        even while a pause is pending, as Mistral's task whose action is completed
        while its workflow is PAUSED reads SUCCESS at once."""
        store = self.runtime.async_actions
        if store is None or not ready:
            return []
        rows: dict[str, list[async_actions.ActionExecution]] = {}
        for row in store.of_execution(execution_id):
            rows.setdefault(row.task, []).append(row)
        found = []
        for tex in ready:
            detail = tex.detail or self.storage.details.get(tex.name)
            if detail is None or detail.state != states.RUNNING or tex.name not in rows:
                continue
            attempt = int((detail.meta or {}).get("attempt") or 1)
            mine = [row for row in rows[tex.name] if row.attempt == attempt]
            if mine and all(row.state != async_actions.RUNNING for row in mine) \
                    and not self._would_start(tex, mine):
                found.append(tex)
        return found

    def _would_start(self, tex: Any, rows: list[async_actions.ActionExecution]) -> bool:
        """Whether running ``tex`` again could start another action (left for the
        resume: a paused execution starts none): a ``with-items`` task with a
        ``concurrency`` (items not started yet), a ``retry`` after an error."""
        spec = self.workflow.tasks[tex.task]
        if spec.with_items is not None and spec.with_items.concurrency is not None:
            return True
        return spec.retry is not None and any(
            row.state != async_actions.SUCCESS for row in rows)

    def _wait_for_clients(self) -> None:
        """Nothing runs but parked task executions: wait until a completion (at once
        when made in this process), a deadline, a suspension or the next poll."""
        pause = async_actions.POLL_INTERVAL
        deadlines = [tex.deadline for tex in self._waiting if tex.deadline is not None]
        if deadlines:
            pause = min(pause, max(0.0, min(deadlines) - clock.time()) + 0.01)
        clock.wait(self._wake, pause)
        self._wake.clear()
        if self.pause_check is not None and self.pause_check():
            self.suspend()  # a pause asked by another process: they wait again once resumed
        self._check_waiting()

    def _check_waiting(self) -> None:
        """Run again the parked task executions whose action executions changed or
        whose deadline passed; a stop request (Ctrl-C) fails them."""
        store = self.runtime.async_actions
        found = store.states([i for tex in self._waiting for i in tex.waiting])
        now = clock.time()
        for tex in list(self._waiting):
            if self.runtime.stop_check is not None:
                try:
                    self.runtime.stop_check(tex.task)
                except exceptions.Interrupted as exc:
                    self._waiting.remove(tex)
                    store.cancel(tex.waiting, str(exc))
                    self._fail_task(tex, exc)
                    continue
            if (tex.deadline is not None and tex.deadline <= now) or any(
                    found.get(ident, (async_actions.RUNNING, None))[0]
                    != async_actions.RUNNING for ident in tex.waiting):
                self._waiting.remove(tex)
                tex.again = True
                self._again.append(tex)

    def _stop_waiting(self) -> None:
        """The workflow failed or ended (``succeed``): its parked task executions stop
        waiting; their action executions are cancelled (a completion is then refused)."""
        why = ("the workflow failed" if self._failing is not None
               else "the workflow ended (succeed)")
        for tex in self._waiting + self._again:
            self.runtime.async_actions.cancel(tex.waiting, f"cancelled: {why}")
            self._record(tex, states.FAILURE, None, failure=failure.Failure.from_exception(
                TaskFailed(f"task {tex.task!r} stopped waiting for its action: {why}")))
        self._waiting, self._again = [], []
