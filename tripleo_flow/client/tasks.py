"""Task executions: ``client.tasks`` lists an execution's tasks, reruns a failed one
and completes the asynchronous action one waits for.

Rerunning is Mistral's task rerun (``PUT /v2/tasks/<id>`` with ``{"state": "RUNNING",
"reset": ..., "env": ...}``; python-mistralclient's ``task-rerun``): once
:mod:`tripleo_flow.engine.compile.task_reruns` rewrote the failed execution, it goes on
through :meth:`client.executions.resume
<tripleo_flow.client.executions.ExecutionManager.resume>`.

Completing is what a client of ``std.async_noop`` (or of an ad-hoc action based on
it) calls once the work is done, as Mistral's ``PUT /v2/action_executions/<id>`` with
``state`` and ``output``.  The task is named as ``execution tasks`` lists it: its name
(``approve``, ``poll[2]``) or its id; a ``with-items`` task waiting for several items
takes the item too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client.base import Manager
from tripleo_flow.client.execution_updates import merged
from tripleo_flow.common import clock, jsonvalues
from tripleo_flow.engine.store.states import ERROR

if TYPE_CHECKING:
    from tripleo_flow.client.executions import ExecutionManager
    from tripleo_flow.client.session import Session
    from tripleo_flow.engine.compile.async_actions import ActionExecution
    from tripleo_flow.engine.compile.runner import Listener
    from tripleo_flow.engine.store.executions import Execution, TaskRecord

#: An execution no process runs (a crash, a restart, a server that stopped left it): a
#: completion resumes it.
NOT_RUNNING = ("INTERRUPTED", "SUSPENDED")


class TaskManager(Manager):
    """The task executions of executions (``client.tasks``)."""

    def __init__(self, session: Session, executions: ExecutionManager) -> None:
        super().__init__(session)
        self._executions = executions

    def list(self, execution_id: str) -> list[TaskRecord]:
        """The tasks of an execution; one whose sub-workflow is paused reads PAUSED.  A
        task of a stopped execution whose ``timeout`` passed while it waited for a client
        is completed first (:mod:`~tripleo_flow.engine.compile.stopped_items`)."""
        from tripleo_flow.engine.store import pause_views

        store = self._session.execution_store()
        tasks = store.tasks(execution_id)
        now = clock.time()
        if any((w.get("deadline") or now) < now for t in tasks for w in t.waiting):
            from tripleo_flow.engine.compile import stopped_publish

            if stopped_publish.settle(self._session.runner(), execution_id):  # when stopped
                tasks = store.tasks(execution_id)
        return pause_views.shown_tasks(store, self._executions.get(execution_id), tasks)

    def _settled(self, execution_id: str) -> bool:
        """What completions of ``execution_id`` leave to do when no engine runs it,
        done: a PAUSED one's tasks completed, a stopped one's timeouts applied, next
        items started and publish evaluated.  A completion killed between its record
        and this is repaired by the next completion asked (refused then, as the task no
        longer waits); whether anything was done."""
        from tripleo_flow.engine.compile import stopped_publish
        from tripleo_flow.engine.store import paused_completions  # the engine: on first use

        paused = paused_completions.settle(self._session.runner(), execution_id)  # when PAUSED
        published = stopped_publish.settle(self._session.runner(), execution_id)  # when stopped
        return bool(paused) or bool(published)

    def complete(self, execution_id: str, task: str, state: str = "SUCCESS",
                 output: Any = None, item: int | None = None, api_user: bool = False,
                 detach: bool = False) -> ActionExecution:
        """Complete the asynchronous action task execution ``task`` of ``execution_id``
        waits for: with ``state`` SUCCESS, ``output`` is the action's result (the task
        publishes it and the workflow goes on); with ERROR, it is the error and the
        task's ``on-error`` runs (Mistral's action execution update).

        The process that runs the execution sees the completion at once (this one) or
        within a second (another); an execution no process runs (INTERRUPTED, or
        SUSPENDED by a server that stopped) is resumed, in the background, where the
        rules of ``executions.resume`` let it.

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
        jsonvalues.check_value(output, self._session.limit("yaml_max_depth"),
                               self._session.limit("yaml_max_nodes"), "The action's output")
        store = self._session.runner().store
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
                self._executions.resume(execution_id, wait=False, detach=detach,
                                        api_user=api_user)
            except exceptions.Conflict:
                pass  # it stays completed; whoever may resume it goes on from here
        return done

    def rerun(self, execution_id: str, task: str, reset: bool = True,
              env: Mapping[str, Any] | None = None,
              listeners: Iterable[Listener] | None = None, wait: bool = True,
              detach: bool = False, api_user: bool = False) -> Execution:
        """Run failed task ``task`` of failed execution ``execution_id`` again, as
        Mistral's task rerun: the tasks that had completed keep their results, the
        failed task (and what follows it) runs again and the execution goes on to its
        end through :meth:`ExecutionManager.resume`.  ``env`` is merged into the execution's
        environment first (as Mistral's ``env`` of a rerun).

        :param task: the task execution's name as ``execution tasks`` lists it
            (``deploy``, ``poll[2]``, ``t2/s1`` for a task of the sub-workflow ``t2``
            runs inline) or its id.  A sub-workflow's task (in a child execution) is
            rerun in that child, whose parents go on too, as Mistral's; a failed
            ``workflow:`` task runs its sub-workflow again (a new child execution)
        :param reset: Mistral's: false only for a ``with-items`` task: its failed items
            run again, the others keep their results (unless its action undid them)
        :param wait: return when it has ended (else at once, as ``executions.resume``)
        :param api_user: asked over the HTTP API: only an execution started there
        :raises Conflict: the execution has not failed (Mistral's 409 on a workflow that
            is not in ERROR), or (``api_user``) it was not started through the API
        :raises InvalidInput: the task did not fail, ``reset`` false without
            ``with-items``, ``env`` past ``[limits] yaml_max_depth`` / ``yaml_max_nodes``
            or not an object, or a completed task of the execution (or of a parent) was
            undone when it failed (its action reverts: TripleO's workbooks); nothing is
            changed then
        :raises Conflict: (a sub-workflow's task) a parent execution has not failed
        :raises NotFound: no such execution or task execution
        """
        from tripleo_flow.engine.compile import task_reruns
        from tripleo_flow.engine.store.executions import ORIGIN_API

        if not isinstance(reset, bool):
            raise exceptions.InvalidInput(
                f"A rerun's reset must be true or false, not {type(reset).__name__}.")
        if env is not None and not isinstance(env, Mapping):
            raise exceptions.InvalidInput(
                f"A rerun's env must be a JSON object, not {type(env).__name__}.")
        if env is not None:
            jsonvalues.check_value(dict(env), self._session.limit("yaml_max_depth"),
                                   self._session.limit("yaml_max_nodes"), "The rerun's env")
        if not isinstance(task, str) or not task:
            raise exceptions.InvalidInput("Name the task execution to rerun.")
        runner = self._session.runner()
        store = runner.store
        if api_user and (store.flow_detail(execution_id, lazy=True).meta or {}).get(
                "origin") != ORIGIN_API:
            raise exceptions.Conflict(
                f"Execution {execution_id!r} was not started through the HTTP API;",
                hints=[exceptions.Hint("rerun its task where it was started, with",
                                       "task.rerun_where_started",
                                       {"execution": execution_id, "task": task[:80]})])
        catalog = self._session.catalog()
        actions = catalog.action_lookup(self._session.action_registry.get)
        with contextlib.ExitStack() as held:
            held.enter_context(self._session.context.locks.hold_execution(execution_id))
            if store.get(execution_id).state != ERROR:
                # A cancelled one is CANCELLED only in its side table: not failed.
                raise exceptions.Conflict(
                    f"Execution {execution_id!r} is {store.get(execution_id).state}: only "
                    "a task of a failed execution (ERROR) "
                    "can be rerun.")
            fd = store.flow_detail(execution_id)
            workflow = catalog.get((fd.meta or {})["workflow"])
            failed = task_reruns.check(fd, workflow, task, reset, actions, catalog.lookup)
            # A sub-workflow's task: its parents, up to the top, run their task that ran
            # it again, which goes on with it (Mistral sets them RUNNING again).
            parents = []  # (flow detail, workflow, the task execution that ran the child)
            hold = self._session.context.locks.hold_execution
            for parent, atom in _parents(store, fd, held, hold):
                parent_workflow = catalog.get((parent.meta or {})["workflow"])
                parents.append((parent, parent_workflow, task_reruns.check(
                    parent, parent_workflow, atom, True, actions, catalog.lookup)))
            task_reruns.prepare(fd, workflow, failed, reset, catalog.lookup)
            if env:
                fd.meta["env"] = merged(fd.meta.get("env") or {}, env)
            for parent, parent_workflow, atom_detail in parents:
                task_reruns.prepare(parent, parent_workflow, atom_detail, True, catalog.lookup,
                                    new_child=False)
                if env:
                    parent.meta["env"] = merged(parent.meta.get("env") or {}, env)
            # Saved from the top down, the child last: killed in between, the top resumed
            # runs its task again, which meets the child still failed and fails as before,
            # after which the rerun can be asked again.
            for changed in (*(parent for parent, _w, _a in reversed(parents)), fd):
                store.save_flow(changed)
        return self._executions.resume(execution_id, listeners, wait=wait, detach=detach,
                                       api_user=api_user)


def _parents(store: Any, fd: Any, held: contextlib.ExitStack,
             hold: Callable[[str], Any]) -> list[tuple[Any, str]]:
    """The failed parents of child execution ``fd``, nearest first, each with the task
    execution that ran the child below it (held locked in ``held``).

    :raises Conflict: a parent has not failed (it is being rerun, or still runs)
    """
    found: list[tuple[Any, str]] = []
    seen = {fd.uuid}
    child = fd
    while (parent_id := (child.meta or {}).get("parent_id")) and parent_id not in seen:
        seen.add(parent_id)
        held.enter_context(hold(parent_id))
        state = store.get(parent_id).state
        if state != ERROR:
            raise exceptions.Conflict(
                f"Execution {child.uuid!r} is a sub-workflow of execution {parent_id!r}, "
                f"which is {state}: a sub-workflow's task is rerun while its parent has "
                "failed too.")
        parent = store.flow_detail(parent_id)
        found.append((parent, str((child.meta or {}).get("parent_task") or "")))
        child = parent
    return found


__all__ = ["NOT_RUNNING", "TaskManager"]
