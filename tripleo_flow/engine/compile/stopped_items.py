"""What a task that waits for a client does after its execution was stopped with
SUCCESS or ERROR, before its completion publishes (:mod:`.stopped_publish`): its
``timeout`` passes, its next ``with-items`` items start, its action reshapes the
completions.

Mistral's ``stop_workflow`` leaves such a task RUNNING, and nothing of the task looks
at the workflow's state afterwards:

* its ``TimeoutPolicy`` (a scheduled job) completes it ERROR when it has not completed
  in time (``_fail_task_if_incomplete``, ``complete_task``): ``Task.complete``
  publishes on error, ``continue_workflow`` of the completed workflow starts nothing;
* ``WithItemsTask.on_action_complete`` gives the completed item's place back and,
  while items are left, ``_schedule_actions`` starts the next ones (``concurrency`` at
  most running); the task completes once every item was completed (ERROR when one
  failed), and publishes.

The stopped execution's engine no longer runs, so :func:`advance` does both when a
completion (or a reader) settles the task: a RUNNING action execution whose deadline
passed is recorded as timed out (:meth:`~.async_actions.AsyncActions.time_out`, at
its deadline; the task then reads ERROR with the timeout's error:
:func:`~tripleo_flow.engine.store.stopped_completions.completed`), and the next items
are started from the inputs, width and timeout the task kept as it first waited
(:data:`~tripleo_flow.engine.store.stopped_completions.WAIT_ITEMS`, written by
:func:`keep`), as the running task starts them (the action's ``execute``, then its
RUNNING row, due by the task's deadline, which its first item's set: Mistral's
``TimeoutPolicy`` counts from the task's start).  An item whose kept inputs
lost a secret to masking is not run with the mask: it fails, as a resumed task
would (:class:`~tripleo_flow.exceptions.SecretNotPersisted`).

Once completed, the task's result is what its action gives of the completions
(:func:`reshaped`): an ad-hoc action's ``output`` reshapes each, as Mistral's ad-hoc
action transforms its output as it completes, and as the running task does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tripleo_flow.common import clock
from tripleo_flow.engine.compile import execution_scope
from tripleo_flow.engine.compile.async_actions import ERROR, RUNNING, SUCCESS
from tripleo_flow.engine.lang.action import ExecutionInfo, with_run
from tripleo_flow.engine.store import redaction, stopped_completions
from tripleo_flow.engine.store.executions import ORIGIN_API

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.action_atom import ActionAtom
    from tripleo_flow.engine.compile.runner import Runner


def keep(atom: ActionAtom, all_inputs: list[dict[str, Any]], width: int,
         timeout: float | None) -> dict[str, Any] | None:
    """What ``with-items`` task ``atom`` keeps as it first waits (None: nothing, its
    ``concurrency`` started every item): enough to start the others after a stop."""
    if not width or width >= len(all_inputs):
        return None
    return {"count": len(all_inputs), "inputs": all_inputs, "width": width,
            "timeout": timeout}


def advance(runner: Runner, fd: Any, ad: Any, actions: list[Any]) -> list[Any]:
    """The action executions of the waiting task of atom detail ``ad`` (of stopped flow
    detail ``fd``) once its timeout was applied and its next items were started
    (``actions``, its action executions, as read before)."""
    store = runner.store.async_actions
    now = clock.time()
    late = [a.id for a in actions if a.state == RUNNING and a.deadline is not None
            and a.deadline <= now]
    changed = any([store.time_out(ident) for ident in late])
    kept = (ad.meta or {}).get(stopped_completions.WAIT_ITEMS)
    if isinstance(kept, Mapping) and not any(stopped_completions.timed_out(a)
                                             for a in actions):
        changed = _start_next(runner, fd, ad, actions, kept) or changed
    return store.of_task(fd.uuid, ad.name) if changed else actions


def _start_next(runner: Runner, fd: Any, ad: Any, actions: list[Any],
                kept: Mapping[str, Any]) -> bool:
    """Start the items of the latest attempt no action execution was started for, in
    item order, while fewer than its width run; whether one was."""
    attempt = max(a.attempt for a in actions)
    mine = [a for a in actions if a.attempt == attempt]
    if any(stopped_completions.timed_out(a) for a in mine):
        return False  # the task timed out: it has completed
    inputs = list(kept.get("inputs") or [])
    started = {a.item for a in mine}
    free = int(kept.get("width") or len(inputs)) - sum(1 for a in mine if a.state == RUNNING)
    todo = [i for i in range(len(inputs)) if i not in started][:max(0, free)]
    # Mistral's TimeoutPolicy: the task's deadline, set as its first item started.
    deadline = min((a.deadline for a in mine if a.deadline is not None), default=None)
    for item in todo:
        _start(runner, fd, ad, kept, attempt, item, inputs[item], deadline)
    return bool(todo)


def _start(runner: Runner, fd: Any, ad: Any, kept: Mapping[str, Any], attempt: int,
           item: int, inputs: Mapping[str, Any], deadline: float | None) -> None:
    """Start item ``item``: the action's ``execute``, then its RUNNING row, due by the
    task's ``deadline``; one that cannot start (a masked secret, ``execute`` raised) is
    recorded failed."""
    store = runner.store.async_actions
    timeout = kept.get("timeout")
    error: str | None = None
    task = ad.name.partition("[")[0]
    masked = redaction.masked_inputs(inputs)
    if masked:  # as a resumed task's (SecretNotPersisted): never run with the mask
        error = (f"task {task!r}, item {item}: {', '.join(masked)} held a secret that the "
                 "executions database does not keep: it cannot start after the stop")
    else:
        try:
            with execution_scope.acting_in(_env(runner, fd)):
                _action(runner, fd, ad).execute(**inputs)
        except Exception as exc:  # Mistral's _schedule_actions: the task fails with it
            error = str(exc) or type(exc).__name__
    row = store.start(fd.uuid, ad.name, ad.uuid, attempt, item,
                      None if timeout is None else float(timeout), deadline=deadline)
    if error is not None:
        store.complete(row.id, ERROR, error)


def reshaped(runner: Runner, fd: Any, ad: Any, actions: list[Any],
             completed: tuple[str, Any, str | None]) -> Any:
    """The result of ``completed`` (of the task of atom detail ``ad``, its action
    executions ``actions``) as its action gives it: an ad-hoc action's ``output``
    reshapes each completion's output, as the running task's does (Mistral's ad-hoc
    action transforms its output as it completes); the error data of a failed item
    stays as it came.  The raw result when the action is no longer known."""
    _state, result, _error = completed
    try:
        action = _action(runner, fd, ad)
        with execution_scope.acting_in(_env(runner, fd)):
            if all(a.item is None for a in actions):
                row = stopped_completions.latest(actions)[0]
                return action.completed(result) if row.state == SUCCESS else result
            return [action.completed(a.output) if a.state == SUCCESS else a.output
                    for a in stopped_completions.latest(actions)]
    except Exception:  # an action no longer known, an output it cannot reshape
        return result


def _action(runner: Runner, fd: Any, ad: Any) -> Any:
    """The action the task of atom detail ``ad`` (of flow detail ``fd``) waited for."""
    meta = fd.meta or {}
    name = (ad.meta or {}).get(stopped_completions.WAIT_ACTION)
    if not isinstance(name, str):  # kept by an older version: as the task names it
        workflow = runner._catalog().get(meta["workflow"])
        name = workflow.tasks[ad.name.partition("[")[0]].action
    cls = runner._catalog().action_lookup(runner._actions)(str(name))
    return cls(with_run(with_run(runner._action_context,
                                 api_user=meta.get("origin") == ORIGIN_API),
                        execution=ExecutionInfo(str(meta.get("workflow") or ""), fd.uuid,
                                                ad.name.partition("[")[0], ad.uuid)))


def _env(runner: Runner, fd: Any) -> Any:
    """The environment the actions of the execution of flow detail ``fd`` act in."""
    meta = fd.meta or {}
    env = meta.get("env") or {}
    return runner._evaluated_env(env) if meta.get("evaluate_env", True) else env


__all__ = ["advance", "keep", "reshaped"]
