"""What a task publishes when a client completes its action after the execution was
stopped with SUCCESS or ERROR.

Mistral's ``stop_workflow`` leaves the workflow's running task executions and their
asynchronous action executions RUNNING; a client's completion then completes the task
execution (``Task.complete``), which evaluates its ``publish`` (``publish-on-error``
after an error; ``data_flow.publish_variables``) over the task itself (``task()``: its
state and result now) above its inbound context (``in_context``, as it started), the
workflow's context, env and input.  An expression that fails is a
``MistralException`` that ``task_handler._on_action_complete`` answers with
``force_fail_task``: the task ERROR, the error in its ``state_info``; failing the
workflow does nothing to a completed one.  The workflow's state and output stay what
the stop gave them, and no task starts.

Here the stopped execution's engine no longer runs, so :func:`settle` (called by the
completion, :mod:`tripleo_flow.client.tasks`, and by the runner as it records the
end of a stopped execution, for a completion made meanwhile) evaluates it: over the
inbound context the task persisted as its action first waited
(:data:`~.execution_scope.WAIT_CONTEXT`), the global variables its execution had
published, the inputs, ``vars`` and env, with :func:`.atoms.evaluate_publish` as a
running task does.  What it gives (or the error) is kept in the task's atom metadata
(:data:`~tripleo_flow.engine.store.stopped_completions.KEPT`, masked as every record),
once; readers show it (:func:`~tripleo_flow.engine.store.stopped_completions.view`).
Global variables it publishes change nothing visible (the output was evaluated by the
stop), so they are evaluated (an error fails the task) but not kept.  A task that
waited before contexts were kept (an execution started by an older version) publishes
nothing when it has nothing to publish; else it fails with the reason (as a publish
that cannot be evaluated does): its inbound context is not rebuilt from the records,
since only a replay of the whole machine (joins, commands, pauses) would give it
exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from taskflow import states

from tripleo_flow import exceptions
from tripleo_flow.engine.compile import atoms, execution_scope, stopped_items, workflow_outputs
from tripleo_flow.engine.store import stopped_completions
from tripleo_flow.engine.store.states import CANCELLED, ERROR

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.runner import Runner


def settle(runner: Runner, execution_id: str) -> list[str]:
    """Evaluate the ``publish`` of each task of stopped ``execution_id`` whose action
    executions a client completed since the stop (once each); the names of those tasks.
    Nothing while its engine has not recorded its end (it calls this then), nor for an
    execution that was not stopped with SUCCESS or ERROR."""
    store = runner.store
    stop = store.cancels.of([execution_id]).get(execution_id)
    if stop is None or stop.state == CANCELLED:
        return []
    store.backend.flush()  # what its engine deferred, read as it left it
    fd = store.flow_detail(execution_id)
    meta = fd.meta or {}
    if meta.get("finished_at") is None:
        return []
    rows: dict[str, list[Any]] = {}
    for action in store.async_actions.of_execution(execution_id):
        rows.setdefault(action.task, []).append(action)
    todo = [ad for ad in fd if ad.name in rows and ad.state == states.RUNNING
            and stopped_completions.KEPT not in (ad.meta or {})]
    if not todo:
        return []
    try:
        workflow = runner._catalog().get(meta["workflow"])
    except (KeyError, exceptions.TripleoFlowError):
        workflow = None  # no longer known: it completes, publishing nothing
    done = []
    for ad in todo:
        actions = stopped_items.advance(runner, fd, ad, rows[ad.name])  # timeout, next items
        completed = stopped_completions.completed(actions, stopped_completions.count(ad.meta))
        if completed is None:
            continue
        state, raw, error = completed
        result = stopped_items.reshaped(runner, fd, ad, actions, completed)
        task = None if workflow is None else workflow_outputs.task_of(ad.name, workflow)
        kept = {"published": {}} if task is None else publish(
            fd, workflow, ad, task, (state, result, error), runner._expression_limits())
        if result != raw:  # an ad-hoc action's ``output`` reshaped it: readers show it
            kept["result"] = result
        store.update_atom_meta(ad, **{stopped_completions.KEPT: kept})
        done.append(ad.name)
    return done


def publish(fd: Any, workflow: Any, ad: Any, task: str,
            completed: tuple[str, Any, str | None], limits: Any) -> dict[str, Any]:
    """``{"published": {...}}`` of task ``task`` (its atom detail ``ad`` of flow detail
    ``fd``) completed as ``completed`` (``(state, result, error)``), or ``{"error":
    why}`` when an expression of its ``publish`` fails."""
    state, result, error = completed
    spec = workflow.tasks[task]
    ctx = (ad.meta or {}).get(execution_scope.WAIT_CONTEXT)
    if not isinstance(ctx, Mapping):  # it waited before contexts were kept
        if not _publishes(spec, state == ERROR):
            return {"published": {}}  # nothing to evaluate: as Mistral's
        return {"error": f"task {task!r}: its publish cannot be evaluated: it started "
                         "waiting for its client under an older tripleo-flow, which kept "
                         "no inbound context to evaluate it over"}
    current = {"id": ad.uuid, "name": task, "spec": dict(getattr(spec, "raw", None) or {}),
               "state": state, "state_info": error, "result": result, "published": {},
               "type": "ACTION", "workflow_execution_id": fd.uuid}
    published_globals = _globals(fd)
    evaluator = workflow_outputs.evaluator(fd, workflow, {**published_globals, **ctx},
                                           limits, current, published_globals)
    try:
        published, _global_values = atoms.evaluate_publish(spec, evaluator, state == ERROR)
    except Exception as exc:  # Mistral's force_fail_task: the task fails with it
        return {"error": f"task {task!r}: {exc}"}
    return {"published": published}


def _publishes(spec: Any, failed: bool) -> bool:
    """Whether task ``spec`` completed so (``failed``: ERROR) has anything to publish
    (what :func:`.atoms.evaluate_publish` would evaluate)."""
    clauses = ("on-error" if failed else "on-success", "on-complete")
    return bool(spec.publish_on_error if failed else spec.publish) or any(
        (spec.clause_publish.get(clause) or {}).get(scope)
        for clause in clauses for scope in ("branch", "global"))


def _globals(fd: Any) -> dict[str, Any]:
    """The global variables the tasks of flow detail ``fd`` published, in the order they
    completed (as a resumed execution rebuilds them)."""
    found = []
    for ad in fd:
        results = ad.results
        if isinstance(results, Mapping) and isinstance(results.get(execution_scope.GLOBAL),
                                                       Mapping):
            found.append((results.get("finished_at") or 0.0, results[execution_scope.GLOBAL]))
    merged: dict[str, Any] = {}
    for _at, values in sorted(found, key=lambda item: item[0]):
        merged.update(values)
    return merged


__all__ = ["publish", "settle"]
