"""Actions run as executions: ``client.action_executions`` (create), as
python-mistralclient's ``action_executions`` manager and Mistral's ``POST
/v2/action_executions``.

An action execution is the execution of the one-task workflow the engine makes for
the action (``action:NAME``:
:mod:`tripleo_flow.engine.lang.action_workflows`), started as every other
(:meth:`~tripleo_flow.client.executions.ExecutionManager.create`): recorded, listed,
shown, paused, resumed and cancelled as any execution, its secrets masked, posted to
the jobboard when there is one, its output ``{"result": ...}``.  The shipped workflows
that run one action (``tripleo.heat.launch`` ...,
:data:`~tripleo_flow.client.workbooks.ACTION_WORKFLOWS`) are made the same way, under
their own names.

For an HTTP API user (:func:`check_api_start`) an action execution, or a one-action
workflow, runs only an action of ``[api] action_executions_allowed`` (never a
``std.`` one), refused before anything is read or made; its inputs are then checked
as a workflow's: unknown and missing ones, and server paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client.base import Manager
from tripleo_flow.engine.lang import action_workflows

if TYPE_CHECKING:
    from tripleo_flow.client.executions import ExecutionManager
    from tripleo_flow.client.paths import ServerPaths
    from tripleo_flow.client.session import Session
    from tripleo_flow.engine.store.executions import Execution

#: What no HTTP API user runs as an action execution, whatever the configuration
#: says: Mistral's standard actions (commands, HTTP, SSH, mail, any file of the server).
NEVER_OVER_API = "std."


def allowed(session: Session) -> frozenset[str]:
    """``[api] action_executions_allowed``."""
    return frozenset(session.conf.api.action_executions_allowed or ())


def check_allowed(session: Session, action: str) -> None:
    """Refuse ``action`` to an HTTP API user unless it is allowed.

    :raises InvalidInput: not in ``[api] action_executions_allowed``, or a ``std.`` action
    """
    if action.startswith(NEVER_OVER_API) or action not in allowed(session):
        shown = ", ".join(sorted(allowed(session))) or "none"
        raise exceptions.InvalidInput(
            f"Action {action[:200]!r} may not be run as an action execution over the HTTP "
            f"API; the server allows: {shown} ([api] action_executions_allowed; never "
            f"{NEVER_OVER_API}* actions).")


def check_api_start(session: Session, name: str) -> str | None:
    """Check that an HTTP API user may start workflow ``name``: an action execution
    (``action:NAME``) or a one-action workflow only of an allowed action, checked
    before the action is even looked up.

    :returns: the action it runs, None for a workbook's workflow
    :raises InvalidInput: the action is not allowed
    """
    action = action_workflows.action_of(name)
    if action is None:
        action = session.get_workflow(name).runs_action
    if action is not None:
        check_allowed(session, action)
    return action


class ActionExecutionManager(Manager):
    """Run an action as an execution (``client.action_executions``)."""

    def __init__(self, session: Session, executions: ExecutionManager) -> None:
        super().__init__(session)
        self._executions = executions

    def create(self, name: str, inputs: Mapping[str, Any] | None = None, wait: bool = True,
               paths: ServerPaths | None = None, api_user: bool = False,
               key: str | None = None, owner: str = "") -> Execution:
        """Run action ``name`` with ``inputs`` as an execution of its own (recorded as
        ``action:NAME``; its output ``{"result": ...}``).

        :param wait: return when it has ended (else it runs in the background, or on a
            conductor with a jobboard)
        :param paths: the server paths the inputs may name (the HTTP API's); with
            ``api_user``, only an allowed action runs (:func:`check_api_start`)
        :param key: an Idempotency-Key: a retried start with the same key and request
            gets the execution the first one made (``owner``: whose key it is)
        :raises InvalidInput: a missing or unknown input, an action an API user may
            not run
        :raises ActionNotFound: no such action
        :raises PathNotAllowed: with ``paths``, an input names a server path it does not
            allow
        """
        workflow = action_workflows.execution_name(name)
        executions = self._executions
        if key is not None:
            return executions.create_once(key, workflow, inputs, paths=paths,
                                          api_user=api_user, owner=owner)
        return executions.create(workflow, inputs, wait=wait, paths=paths, api_user=api_user)
