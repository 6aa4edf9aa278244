"""What readers see of a pause, as Mistral shows it (issue 26).

Mistral marks an execution PAUSED the moment a client pauses it: its running
tasks finish, no new task starts.  Here the engine of an execution run by another
process learns of the pause through a request (:mod:`.pause_requests`) and
records SUSPENDED only once its running tasks ended.  The readers of the Python
API (hence the CLI and the HTTP API) show what Mistral shows:

* an execution still RUNNING (or PENDING, not claimed yet, or SUSPENDING) in a
  family (its topmost ancestor and every sub-workflow under it) where a pause was
  requested reads PAUSED at once, with ``pausing`` true while its engine still ends its
  running tasks (a backup, an event stream, a resume go by that flag: it still
  runs);
* a task whose child execution (sub-workflow) is PAUSED reads PAUSED, as
  Mistral's task inherits its sub-workflow's state (a task whose action waits
  or runs stays RUNNING, as in Mistral).

Not a lie if the run then ends: its engine stops PAUSED rather than finish once a
request is seen (a natural end, unhandled errors), as Mistral keeps a paused
workflow from completing; what a request could not stop (a ``fail`` or
``succeed`` command, a stop signal, the request arriving after the end) ends
the run, and the readers then show that end (a request is removed when its
execution ends).

The raw records (:class:`~.executions.ExecutionStore`) stay what the engines
wrote; only readers are given these views.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.engine.store.execution_records import PAUSED, Execution, to_execution

if TYPE_CHECKING:  # the engine's store: readers of a list of executions never load it
    from tripleo_flow.engine.store.executions import TaskRecord

#: The states a pause request turns into PAUSED for readers (its engine still runs;
#: SUSPENDING: a TaskFlow engine that saw it and waits for its running tasks).
_STILL_RUNNING = ("RUNNING", "PENDING", "SUSPENDING")


def _root(store: Any, ident: str, parent: Any = ...) -> str:
    """The topmost ancestor of execution ``ident`` (whose parent is ``parent``, None
    for none, when known): the family a pause spreads through."""
    seen = {ident}
    if parent is ...:
        try:
            parent = (store.flow_detail(ident, lazy=True).meta or {}).get("parent_id")
        except exceptions.ExecutionNotFound:
            return ident
    while isinstance(parent, str) and parent not in seen:
        seen.add(parent)
        ident = parent
        try:
            parent = (store.flow_detail(ident, lazy=True).meta or {}).get("parent_id")
        except exceptions.ExecutionNotFound:
            break
    return ident


def _paused_roots(store: Any) -> set[str]:
    """The families a pause is requested in (one query; usually none).  A cancelled
    execution's request (what stops its engine) pauses no family: its parent's other
    branches run on (:mod:`.machine_cancels`)."""
    pending = store.pause_requests.pending()
    cancelled = store.cancels.of(pending) if pending else {}
    return {_root(store, ident) for ident in pending if ident not in cancelled}


#: An engine that stopped (TaskFlow's SUSPENDED) before its process wrote why: one a
#: pause was asked of reads PAUSED from then on, not SUSPENDED for a moment (a
#: conductor records its pause after its engine stopped).
_STOPPED = "SUSPENDED"


def shown(store: Any, records: Iterable[Execution]) -> list[Execution]:
    """``records`` (of ``store``) as readers see them: PAUSED, ``pausing``, where a
    pause was requested in the family of one still running; PAUSED where its engine
    stopped for it."""
    records = list(records)
    if not any(r.state in _STILL_RUNNING or r.state == _STOPPED for r in records):
        return records
    roots = _paused_roots(store)
    if not roots:
        return records

    def view(r: Execution) -> Execution:
        if r.state not in _STILL_RUNNING and r.state != _STOPPED:
            return r
        if _root(store, r.id, r.parent_id) not in roots:
            return r
        return dataclasses.replace(r, state=PAUSED, pausing=r.state in _STILL_RUNNING)

    return [view(r) for r in records]


def shown_one(store: Any, record: Execution) -> Execution:
    """One record as readers see it (:func:`shown`)."""
    return shown(store, [record])[0]


def shown_tasks(store: Any, execution: Execution, tasks: list[TaskRecord]
                ) -> list[TaskRecord]:
    """The task records of ``execution`` (as :func:`shown` gives it) as readers see
    them: a RUNNING task whose child execution is PAUSED reads PAUSED."""
    if execution.state != PAUSED or not any(t.state == "RUNNING" for t in tasks):
        return tasks
    children = shown(store, [to_execution(fd) for fd in store.children(execution.id)])
    paused = {c.parent_task for c in children if c.state == PAUSED}
    return [dataclasses.replace(t, state=PAUSED) if t.state == "RUNNING" and t.name in paused
            else t for t in tasks]


__all__ = ["shown", "shown_one", "shown_tasks"]
