"""The base of every action: a plain class with ``execute`` and, when it undoes, ``revert``.

As Mistral's ``mistral_lib`` action, an action is a plain object a workflow task
runs: it is built with its context, :meth:`execute` does the one thing it does
and returns its result.  It is no TaskFlow atom: the workflow engine's own atom
(:mod:`tripleo_flow.engine.compile.action_atom`) evaluates the task's inputs, calls
:meth:`execute`, keeps the result and, when the workflow fails, calls ``revert``.

An action is registered under the stevedore namespace ``tripleo_flow.actions``
as ``<area>.<verb>``.  Its inputs are the parameters of :meth:`execute` (typed);
its one-line description is the first line of the class docstring.  An action
whose change can be undone defines ``revert(result, **inputs)``, which undoes
exactly what :meth:`execute` did, using the persisted result, and is safe to run
twice; an action that changes nothing, or whose change cannot be undone, defines
none (:meth:`Action.has_revert` is then false, and a task running it may drop its
result with ``keep-result: false``).

Actions reach the outside world only through the
:class:`~tripleo_flow.actions.context.ActionContext` they are built with; they
never call another action.
"""

from __future__ import annotations

import base64

# The context lives in its own module; its names stay importable here.  The contract
# (Action, Rerun, reverter) is the workflow engine's (tripleo_flow.engine.lang.action).
from tripleo_flow.actions.context import ActionContext as ActionContext
from tripleo_flow.actions.context import ExecutionInfo as ExecutionInfo
from tripleo_flow.actions.context import UndoJournal as UndoJournal
from tripleo_flow.engine.lang.action import Action as EngineAction
from tripleo_flow.engine.lang.action import Rerun as Rerun
from tripleo_flow.engine.lang.action import reverter as reverter


class Action(EngineAction):
    """Base class of tripleo-flow actions: the engine's contract, built with an
    :class:`ActionContext`."""

    def __init__(self, context: ActionContext) -> None:
        super().__init__(context)
        self.context: ActionContext = context


def encode_blobs(blobs: dict[str, bytes]) -> dict[str, str]:
    """Bytes values as base64 text, so an action result persists as JSON."""
    return {name: base64.b64encode(data).decode("ascii") for name, data in blobs.items()}


def decode_blobs(blobs: dict[str, str]) -> dict[str, bytes]:
    """The inverse of :func:`encode_blobs`."""
    return {name: base64.b64decode(text) for name, text in blobs.items()}
