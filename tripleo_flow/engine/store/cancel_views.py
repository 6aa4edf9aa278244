"""What readers see of a cancelled or stopped execution (:mod:`.cancels`).

Light on purpose (no SQLAlchemy): the engine's store and the read-only reader of
the executions database (:mod:`.execution_reader`) apply the same view to the
same rows of ``tripleo_flow_cancels``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from tripleo_flow.engine.store.states import CANCELLED, ERROR

#: The end states a stop gives besides CANCELLED, as stored (a stop with Mistral's
#: ERROR is stored FAILURE and reads ERROR).
FAILURE = "FAILURE"
SUCCESS = "SUCCESS"
STOP_STATES = (CANCELLED, FAILURE, SUCCESS)


@dataclasses.dataclass(frozen=True)
class Cancel:
    """One execution's cancel (or stop): its message (``state_info``), when it was
    asked and the state it ends in."""

    state_info: str | None
    cancelled_at: float
    state: str = CANCELLED
    #: The output evaluated when it was stopped (None: :func:`output_of` gives it).
    output: Any = None


def shown(cancels: Any, records: Iterable[Any]) -> list[Any]:
    """Execution records (:class:`~.executions.Execution`) as readers see them: a
    cancelled one reads CANCELLED, its ``state_info`` the message and its output
    ``{"result": message}``, from the moment it was cancelled (``cancels``: anything
    whose ``of(ids)`` gives the :class:`Cancel` of each id cancelled)."""
    records = list(records)
    found = cancels.of([r.id for r in records])
    if not found:
        return records
    return [_as_stopped(r, found[r.id]) if r.id in found else r for r in records]


def output_of(stop: Cancel) -> Any:
    """The output of an execution cancelled or stopped (``stop``): the one evaluated
    then, else Mistral's ``{"result": state_info}`` (``{}`` for SUCCESS: its workflow
    was no longer known)."""
    if stop.output is not None:
        return stop.output
    return {} if stop.state == SUCCESS else {"result": stop.state_info}


def _as_stopped(record: Any, stop: Cancel) -> Any:
    """``record`` as a reader sees it once it was cancelled or stopped (``stop``)."""
    info = stop.state_info
    return dataclasses.replace(
        record, state=ERROR if stop.state == FAILURE else stop.state, state_info=info,
        output=output_of(stop), pausing=False,
        error=info if stop.state == FAILURE else None, failed_task=None, error_api=None,
        hints=None)


__all__ = ["FAILURE", "STOP_STATES", "SUCCESS", "Cancel", "output_of", "shown"]
