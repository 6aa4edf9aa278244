"""The results of the items that succeeded in a failed ``with-items`` task, kept so
that Mistral's task rerun without reset (:mod:`.task_reruns`) runs the failed items
only.

A ``with-items`` task whose item failed raises an error that carries the results of
the items that had succeeded (:func:`attach`), when its action undoes nothing (an
action with a ``revert`` undid them: they run again).  The engine keeps them with the
failed task: in its outcome (a compiled graph, :data:`DONE`) or in its atom's
metadata (the state machine).  A rerun without reset copies them into the atom's
metadata (:data:`RERUN`); the task run then (:attr:`.execution_scope.Scope.kept_items`)
takes their results instead of running those items again.

Both are lists of ``[item index, result]`` pairs (JSON keeps no integer keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Where a failed task keeps the results of its items that succeeded.
DONE = "items_done"
#: Where a rerun without reset leaves them for the task's next run.
RERUN = "items_kept"
#: In a rerun ``workflow:`` task's atom metadata: how many times it was rerun (its
#: new child executions' ids count them: :func:`.subworkflow.child_id`).
CHILD_RERUNS = "child_reruns"
_ATTRIBUTE = "tripleo_flow_items_done"
_DATA = "tripleo_flow_items_data"


def attach(error: BaseException, done: Mapping[int, Any]) -> BaseException:
    """``error`` carrying ``done`` (item index -> result)."""
    setattr(error, _ATTRIBUTE, [[index, done[index]] for index in sorted(done)])
    return error


def of(error: BaseException | None) -> list[list[Any]] | None:
    """What :func:`attach` gave ``error`` (None: nothing kept)."""
    return getattr(error, _ATTRIBUTE, None) if error is not None else None


def with_result(error: BaseException, result: list[Any]) -> BaseException:
    """``error`` carrying the result its failed ``with-items`` task reads after the error
    (``task().result`` in ``on-error`` and ``publish-on-error``): as Mistral's, the
    output of each item that completed, in item order, a failed one's error too."""
    setattr(error, _DATA, result)
    return error


def result_of(error: BaseException) -> Any:
    """What :func:`with_result` gave ``error`` (None: nothing)."""
    return getattr(error, _DATA, None)


def kept(pairs: Any) -> dict[int, Any]:
    """``[index, result]`` pairs as a mapping (anything else: none)."""
    if not isinstance(pairs, list):
        return {}
    return {int(pair[0]): pair[1] for pair in pairs
            if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int)}


__all__ = ["CHILD_RERUNS", "DONE", "RERUN", "attach", "kept", "of", "result_of",
           "with_result"]
