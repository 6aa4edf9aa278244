"""Completing a task's asynchronous action: what a client of ``std.async_noop`` (or
of an ad-hoc action based on it) calls once the work is done, as Mistral's
``PUT /v2/action_executions/<id>`` with ``state`` and ``output``.

:class:`CompletionsMixin` lives on :class:`~tripleo_flow.client.Client` beside
:class:`~tripleo_flow.client.workflows.WorkflowsMixin`, whose runner and executions
store it uses.  The task is named as ``execution tasks`` lists it: its name
(``approve``, ``poll[2]``) or its id; a ``with-items`` task waiting for several
items takes the item too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.common import jsonvalues

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.async_actions import ActionExecution
    from tripleo_flow.engine.compile.runner import Runner

#: An execution no process runs (a crash, a restart, a server that stopped left it): a
#: completion resumes it.
NOT_RUNNING = ("INTERRUPTED", "SUSPENDED")


class CompletionsMixin:
    """Completing asynchronous actions (needs the workflows mixin's ``_runner``)."""

    def _runner(self) -> Runner:
        raise NotImplementedError

    def _limit(self, name: str) -> int:
        raise NotImplementedError

    def resume_execution(self, execution_id: str, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def _settled(self, execution_id: str) -> bool:
        """What completions of ``execution_id`` leave to do when no engine runs it,
        done: a PAUSED one's tasks completed, a stopped one's timeouts applied, next
        items started and publish evaluated.  A
        completion killed between its record and this is repaired by the next
        completion asked (refused then, as the task no longer waits); whether anything
        was done."""
        from tripleo_flow.engine.compile import stopped_publish
        from tripleo_flow.engine.store import paused_completions  # the engine: on first use

        paused = paused_completions.settle(self._runner(), execution_id)  # when PAUSED
        published = stopped_publish.settle(self._runner(), execution_id)  # when stopped
        return bool(paused) or bool(published)

    def complete_task(self, execution_id: str, task: str, state: str = "SUCCESS",
                      output: Any = None, item: int | None = None, api_user: bool = False,
                      detach: bool = False) -> ActionExecution:
        """Complete the asynchronous action task execution ``task`` of ``execution_id``
        waits for: with ``state`` SUCCESS, ``output`` is the action's result (the task
        publishes it and the workflow goes on); with ERROR, it is the error and the
        task's ``on-error`` runs (Mistral's action execution update).

        The process that runs the execution sees the completion at once (this one) or
        within a second (another); an execution no process runs (INTERRUPTED, or
        SUSPENDED by a server that stopped) is resumed, in the background, where the
        rules of ``resume_execution`` let it.

        :param task: the task execution's name (``poll[2]``) or id
        :param item: which item of a ``with-items`` task (needed when several wait)
        :param api_user: asked over the HTTP API (an execution it did not start is not
            resumed from there)
        :param detach: a resume runs in a process of its own (the CLI's)
        :returns: the completed action execution, its output masked as stored
        :raises InvalidInput: a state other than SUCCESS or ERROR, an output past
            ``[limits] yaml_max_depth`` / ``yaml_max_nodes``, a missing item
        :raises NotFound: no such execution, task execution or item
        :raises Conflict: the task execution (or item) does not wait for a client:
            completed already, cancelled, not asynchronous, or past its ``timeout``
        """
        from tripleo_flow.engine.compile.async_actions import COMPLETIONS, RUNNING

        if state not in COMPLETIONS:
            raise exceptions.InvalidInput(
                f"A task's action is completed with state {' or '.join(COMPLETIONS)}, not "
                f"{str(state)[:40]!r}.")
        if item is not None and (isinstance(item, bool) or not isinstance(item, int)
                                 or item < 0):
            raise exceptions.InvalidInput(f"item must be a whole number >= 0, not {item!r}.")
        jsonvalues.check_value(output, self._limit("yaml_max_depth"),
                               self._limit("yaml_max_nodes"), "The action's output")
        store = self._runner().store
        record = next((t for t in store.tasks(execution_id) if task in (t.name, t.id)), None)
        if record is None:
            raise exceptions.NotFound(
                f"Execution {execution_id!r} has no task execution {task[:80]!r}.",
                hints=[exceptions.Hint("List its tasks with", "execution.tasks",
                                       {"execution": execution_id})])
        actions = store.async_actions.of_task(execution_id, record.name)
        running = [a for a in actions if a.state == RUNNING]
        if item is not None:
            if not any(a.item == item for a in actions):
                raise exceptions.NotFound(
                    f"Task execution {record.name!r} of execution {execution_id!r} has no "
                    f"action execution for item {item}.")
            running = [a for a in running if a.item == item]
        if not running:
            if actions and self._settled(execution_id):  # a completion a kill cut short
                record = next(t for t in store.tasks(execution_id) if t.name == record.name)
            raise exceptions.Conflict(
                f"Task execution {record.name!r} of execution {execution_id!r} does not wait "
                f"for a client (it is {record.state}"
                + (f"; its action executions are {', '.join(sorted({a.state for a in actions}))}"
                   if actions else "; its action is not asynchronous") + ").")
        if len(running) > 1:
            raise exceptions.InvalidInput(
                f"Task execution {record.name!r} waits for {len(running)} items ("
                + ", ".join(str(a.item) for a in running) + "): say which one with item.")
        try:
            done = store.async_actions.complete(running[0].id, state, output)
        except exceptions.Conflict:
            self._settled(execution_id)  # its timeout passed: a stopped one's task fails
            raise
        self._settled(execution_id)
        if store.get(execution_id).state in NOT_RUNNING:
            try:
                self.resume_execution(execution_id, wait=False, detach=detach,
                                      api_user=api_user)
            except exceptions.Conflict:
                pass  # it stays completed; whoever may resume it goes on from here
        return done
