"""Changing an execution's state, as Mistral's ``PUT /v2/executions/<id>``
(``mistral execution-update``).

One call takes Mistral's body and runs the operation it names through the methods
that already do it: PAUSED pauses, RUNNING resumes (with ``env``: the execution's
environment is first updated, merged into the old one, as Mistral's resume with
``params.env``), CANCELLED cancels, ERROR or SUCCESS stops the workflow in that state
(:func:`stop`, Mistral's ``stop_workflow``).  An
``env`` alone updates the environment of a PAUSED or failed execution (Mistral's of
an IDLE, PAUSED or ERROR one; ours are never IDLE).

A ``description`` (alone, or with ``env``; never with a state, as Mistral's) is
kept on the execution's record and shown with it.

Where ours differs: an environment update refused answers 409 Conflict
(Mistral's NotAllowedException, a 403, which here means a missing role).  A transition Mistral
refuses (SUCCESS of a paused or ended execution) is invalid input (400), as its.

:meth:`ExecutionManager.stop <tripleo_flow.client.executions.ExecutionManager.stop>` and
:meth:`~tripleo_flow.client.executions.ExecutionManager.update` call these functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.engine.store.states import UPDATE_STATES

if TYPE_CHECKING:
    from tripleo_flow.client.executions import ExecutionManager
    from tripleo_flow.client.session import Session
    from tripleo_flow.engine.store.executions import Execution

#: The states an update may ask for (Mistral's names), in the order its message gives.
STATES = UPDATE_STATES
#: Mistral's ERROR is stored FAILURE (TaskFlow's name); records read it ERROR.
_STOPPED = {"ERROR": "FAILURE", "FAILURE": "FAILURE", "SUCCESS": "SUCCESS"}
#: The states whose env may be updated: Mistral's PAUSED and ERROR.
_ENV_STATES = ("PAUSED", "ERROR")
#: The longest description kept (Mistral's ``description`` column: String(255)).
DESCRIPTION_MAX = 255


def merged(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """``new`` merged into ``old``: a key of both whose values are both objects is
    merged in turn, any other value of ``new`` replaces ``old``'s (Mistral's
    ``merge_dicts`` of an execution's env)."""
    out = dict(old)
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def stop(session: Session, execution_id: str, state: str, message: str | None = None,
         api_user: bool = False) -> Execution:
    """Stop a running execution in ``state`` ERROR (stored FAILURE, read ERROR) or
    SUCCESS, as Mistral's ``execution-update -s ERROR|SUCCESS``:
    it reads that state at once with ``message`` as its ``state_info`` (ERROR: as
    its error too), its output evaluated then as Mistral's ``Workflow.stop`` does
    (SUCCESS: the workflow's ``output``; ERROR: ``{"result": message}`` with
    ``output-on-error`` merged over it; :mod:`~tripleo_flow.engine.compile.workflow_outputs`);
    its running tasks end, no new task starts, it is never resumed; its
    sub-workflows that still run run on to their ends (Mistral's ``stop_workflow``
    cancels them for CANCELLED only).  A sub-workflow stopped so ends its parent's
    task: failed (ERROR, its on-error runs) or completed (SUCCESS).

    Asked ERROR, an execution that is PAUSED or has ended is left as it is
    (Mistral's ``stop_workflow`` does nothing then).

    :param api_user: asked by a user of the HTTP API: only executions started through
        the API may be stopped
    :raises InvalidInput: ``state`` is neither, ``message`` is not text, SUCCESS
        asked of an execution that is PAUSED or has ended (Mistral has no such
        transition: 400, as its) or whose ``output`` cannot be evaluated now
    :raises Conflict: (``api_user``) it was not started through the API
    """
    from tripleo_flow.engine.store import pause_views
    from tripleo_flow.engine.store.executions import ORIGIN_API

    stopped = _STOPPED.get(state) if isinstance(state, str) else None
    if stopped is None:
        raise exceptions.InvalidInput(
            f"An execution is stopped with state ERROR or SUCCESS, not {str(state)[:40]!r}"
            " (cancel it with state CANCELLED).")
    _check_message(message)
    runner = session.runner()
    return pause_views.shown_one(runner.store, runner.cancel(
        execution_id, message, ORIGIN_API if api_user else None, stopped))

def update(executions: ExecutionManager, session: Session, execution_id: str,
           state: str | None = None, state_info: str | None = None,
           env: Mapping[str, Any] | None = None, api_user: bool = False,
           detach: bool = False, description: str | None = None) -> Execution:
    """Change an execution's state as Mistral's ``PUT /v2/executions/<id>``: PAUSED
    pauses it (:meth:`ExecutionManager.pause`), RUNNING resumes it in the background
    (:meth:`ExecutionManager.resume`; ``detach``: in a separate process, as the CLI's),
    CANCELLED cancels it (:meth:`ExecutionManager.cancel`), ERROR or SUCCESS stops it
    (:func:`stop`), ``state_info`` the message of the last three.
    ``env`` (with RUNNING or alone) is merged into the environment of a PAUSED
    execution first (alone, of a failed one too, as Mistral's of an ERROR one).
    ``description`` (without ``state``, as Mistral's) is kept on the execution, in
    any state, at most :data:`DESCRIPTION_MAX` characters.

    :raises InvalidInput: none of ``state``, ``env``, ``description`` given, an
        unknown state, ``env`` with a state other than RUNNING, ``description`` with
        a state or too long, a value of the wrong type
    :raises Conflict: the change is not allowed from the execution's state
    """
    if state is None and not env and description is None:
        raise exceptions.InvalidInput(
            "Give the execution's new state, env or description to update it.")
    _check_description(description, state)
    if state is not None and (not isinstance(state, str) or state not in STATES):
        raise exceptions.InvalidInput(
            f"Cannot change an execution's state to {str(state)[:40]!r}; the states "
            f"allowed are {', '.join(STATES)}.")
    if env is not None and not isinstance(env, Mapping):
        raise exceptions.InvalidInput(
            f"The execution's env must be a JSON object, not {type(env).__name__}.")
    if env and state not in (None, "RUNNING"):
        raise exceptions.InvalidInput(
            "The env can only be updated alone or on resume (state RUNNING).")
    _check_message(state_info)
    if env:
        _update_env(session, execution_id, env, api_user)
    if description is not None:
        _update_description(session, execution_id, description, api_user)
    if state == "PAUSED":
        return executions.pause(execution_id, api_user=api_user)
    if state == "RUNNING":
        return executions.resume(execution_id, wait=False, detach=detach,
                                 api_user=api_user)
    if state == "CANCELLED":
        return executions.cancel(execution_id, state_info, api_user=api_user)
    if state is not None:
        return stop(session, execution_id, state, state_info, api_user=api_user)
    from tripleo_flow.engine.store import pause_views

    store = session.runner().store
    return pause_views.shown_one(store, store.get(execution_id))

def _update_env(session: Session, execution_id: str, env: Mapping[str, Any],
                api_user: bool) -> None:
    """Merge ``env`` into the environment of ``execution_id``, PAUSED or failed
    (Mistral's ``update_workflow_execution_env``: IDLE, PAUSED or ERROR)."""
    from tripleo_flow.engine.store import pause_requests, pause_views
    from tripleo_flow.engine.store.executions import ORIGIN_API

    store = session.runner().store
    pause_requests.check_origin(store, execution_id, ORIGIN_API if api_user else None,
                                "update")
    with session.context.locks.hold_execution(execution_id):
        record = pause_views.shown_one(store, store.get(execution_id))
        if record.state not in _ENV_STATES or record.pausing:
            raise exceptions.Conflict(
                f"Execution {execution_id!r} is {record.state}"
                f"{' (its running tasks still end)' if record.pausing else ''}: only a "
                "paused or failed execution's env can be updated.")
        fd = store.flow_detail(execution_id, lazy=True)
        store.update_meta(fd, env=merged((fd.meta or {}).get("env") or {}, env))


def _update_description(session: Session, execution_id: str, description: str,
                        api_user: bool) -> None:
    """Keep ``description`` on ``execution_id``'s record (Mistral's, in any state)."""
    from tripleo_flow.engine.store import pause_requests
    from tripleo_flow.engine.store.executions import ORIGIN_API

    store = session.runner().store
    pause_requests.check_origin(store, execution_id, ORIGIN_API if api_user else None,
                                "update")
    with session.context.locks.hold_execution(execution_id):
        store.update_meta(store.flow_detail(execution_id, lazy=True),
                          description=description)



def _check_description(description: Any, state: str | None) -> None:
    if description is None:
        return
    if not isinstance(description, str):
        raise exceptions.InvalidInput(
            f"An execution's description must be text, not {type(description).__name__}.")
    if state is not None:
        raise exceptions.InvalidInput(
            "An execution's description is updated apart from its state (as Mistral's).")
    if len(description) > DESCRIPTION_MAX:
        raise exceptions.InvalidInput(
            f"An execution's description has at most {DESCRIPTION_MAX} characters "
            f"(Mistral's column), not {len(description)}.")


def _check_message(message: Any) -> None:
    if message is not None and not isinstance(message, str):
        raise exceptions.InvalidInput(
            f"An execution's state_info must be text, not {type(message).__name__}.")


__all__ = ["DESCRIPTION_MAX", "STATES", "merged", "stop", "update"]
