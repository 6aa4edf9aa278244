"""Rerunning a failed task, as Mistral's task rerun (``PUT /v2/tasks/<id>`` with
``{"state": "RUNNING", "reset": ..., "env": ...}``; python-mistralclient's
``task-rerun``).

:class:`TaskRerunsMixin` lives on :class:`~tripleo_flow.client.Client` beside
:class:`~tripleo_flow.client.workflows.WorkflowsMixin`, whose resume it goes through
once :mod:`tripleo_flow.engine.compile.task_reruns` rewrote the failed execution.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client.execution_updates import merged
from tripleo_flow.common import jsonvalues
from tripleo_flow.engine.store.states import ERROR

if TYPE_CHECKING:
    from tripleo_flow.actions.context import ActionContext
    from tripleo_flow.actions.registry import ActionRegistry
    from tripleo_flow.engine.compile.runner import Listener, Runner
    from tripleo_flow.engine.lang.workbook_loader import Catalog
    from tripleo_flow.engine.store.executions import Execution


class TaskRerunsMixin:
    """Rerunning a failed task of a failed execution (needs the workflows mixin)."""

    context: ActionContext

    def _runner(self) -> Runner:
        raise NotImplementedError

    def _catalog(self) -> Catalog:
        raise NotImplementedError

    @property
    def action_registry(self) -> ActionRegistry:
        raise NotImplementedError

    def resume_execution(self, execution_id: str, *args: Any, **kwargs: Any) -> Execution:
        raise NotImplementedError

    def _limit(self, name: str) -> int:
        raise NotImplementedError

    def rerun_task(self, execution_id: str, task: str, reset: bool = True,
                   env: Mapping[str, Any] | None = None,
                   listeners: Iterable[Listener] | None = None, wait: bool = True,
                   detach: bool = False, api_user: bool = False) -> Execution:
        """Run failed task ``task`` of failed execution ``execution_id`` again, as
        Mistral's task rerun: the tasks that had completed keep their results, the
        failed task (and what follows it) runs again and the execution goes on to its
        end through :meth:`resume_execution`.  ``env`` is merged into the execution's
        environment first (as Mistral's ``env`` of a rerun).

        :param task: the task execution's name as ``execution tasks`` lists it
            (``deploy``, ``poll[2]``, ``t2/s1`` for a task of the sub-workflow ``t2``
            runs inline) or its id.  A sub-workflow's task (in a child execution) is
            rerun in that child, whose parents go on too, as Mistral's; a failed
            ``workflow:`` task runs its sub-workflow again (a new child execution)
        :param reset: Mistral's: false only for a ``with-items`` task: its failed items
            run again, the others keep their results (unless its action undid them)
        :param wait: return when it has ended (else at once, as ``resume_execution``)
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
            jsonvalues.check_value(dict(env), self._limit("yaml_max_depth"),
                                   self._limit("yaml_max_nodes"), "The rerun's env")
        if not isinstance(task, str) or not task:
            raise exceptions.InvalidInput("Name the task execution to rerun.")
        runner = self._runner()
        store = runner.store
        if api_user and (store.flow_detail(execution_id, lazy=True).meta or {}).get(
                "origin") != ORIGIN_API:
            raise exceptions.Conflict(
                f"Execution {execution_id!r} was not started through the HTTP API;",
                hints=[exceptions.Hint("rerun its task where it was started, with",
                                       "task.rerun_where_started",
                                       {"execution": execution_id, "task": task[:80]})])
        catalog = self._catalog()
        actions = catalog.action_lookup(self.action_registry.get)
        with contextlib.ExitStack() as held:
            held.enter_context(self.context.locks.hold_execution(execution_id))
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
            for parent, atom in _parents(store, fd, held, self.context.locks.hold_execution):
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
        return self.resume_execution(execution_id, listeners, wait=wait, detach=detach,
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


__all__ = ["TaskRerunsMixin"]
