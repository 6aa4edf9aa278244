"""Cancelling workflow executions, as Mistral's ``execution-update -s CANCELLED``.

Mistral sets a RUNNING or PAUSED workflow execution to CANCELLED at once
(``Workflow._cancel_workflow``): its ``state_info`` is the message given, its
output ``{"result": message}``; the tasks that run end, no new one starts
(a task whose transition fires meanwhile creates nothing), and its sub-workflow
executions that have not ended are cancelled with the same message
(``workflow_handler.stop_workflow``).  A cancelled execution has ended: a later
resume returns it unchanged, a pause is refused (``set_state`` allows no move
from CANCELLED), and a cancel of an execution that ended does nothing.

Here a cancel is a row in the executions database (:data:`TABLE`), written by
whichever process is asked, with a pause request beside it
(:mod:`.pause_requests`): the engine that runs the execution (here, in another
process or on a conductor) starts nothing more and stops as it does for a
pause; its runner then records the end (:func:`finish`).  An execution no
process runs (PAUSED, SUSPENDED, INTERRUPTED by a crash) ends at once.  A cancel
of an execution another process runs returns once every engine reads the request
before it starts a task (:data:`~.pause_requests.CHECK_INTERVAL`), so no task
starts after the cancel returned.  Readers
of the store see CANCELLED from the moment the row is written
(:func:`shown`); the row is never removed, so no resume, conductor claim or
crash-resume runs the execution again (its pause request is kept:
:func:`~.pause_requests.check_for`).

A cancelled sub-workflow lets its parent's other branches run to their ends, then
the parent ends CANCELLED with ``state_info`` ``"Cancelled tasks: TASK"``, as
Mistral's (:mod:`.machine_cancels`; a compiled graph's, a reverse workflow's:
:mod:`.graph_cancels`).

A stop with another end state (Mistral's ``execution-update -s ERROR|SUCCESS``,
``stop_workflow``) is the same row with that state (:data:`FAILURE`, Mistral's
ERROR, or :data:`SUCCESS`) and the output evaluated when it was asked, as Mistral's
``Workflow.stop`` (:mod:`.workflow_outputs`: SUCCESS its ``output``, ERROR
``{"result": message}`` with ``output-on-error`` merged over it, both over the final
context at that moment): the running tasks end, no new one starts, readers see the
state at once with the message as its ``state_info`` (ERROR: its error too).
Mistral refuses SUCCESS for an execution that is PAUSED or has ended (no such
transition) and leaves one that is PAUSED or has ended as it is when asked ERROR.
Unlike a cancel, a stop leaves the execution's sub-workflows running (Mistral's
``stop_workflow`` cancels them for CANCELLED only): each runs to its end, which
completes its parent's task and starts nothing more.  A stopped sub-workflow's parent
task ends as with any sub-workflow's end: ERROR fails it with the message, SUCCESS
completes it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.store import pause_requests, side_tables, stopped_completions
from tripleo_flow.engine.store.cancel_views import (
    FAILURE,
    STOP_STATES,
    SUCCESS,
    Cancel,
    output_of,
    shown,
)
from tripleo_flow.engine.store.states import CANCELLED, ENDED, PAUSED

_METADATA = sa.MetaData()
TABLE = sa.Table(
    "tripleo_flow_cancels", _METADATA,
    sa.Column("execution_id", sa.String(36), primary_key=True),
    sa.Column("state_info", sa.Text, nullable=True),
    sa.Column("cancelled_at", sa.Double, nullable=False),
    #: The end state: CANCELLED (NULL, as rows written before stops had states),
    #: FAILURE or SUCCESS.
    sa.Column("state", sa.String(16), nullable=True),
    #: The output a stop evaluated (JSON, masked): NULL for a cancel (and rows written
    #: before stops evaluated one), read as Mistral's ``{"result": state_info}``.
    sa.Column("output", sa.Text, nullable=True),
)


def create_table(engine: sa.engine.Engine) -> None:
    """Create the table when the database has none (the executions backend calls
    this with its own tables)."""
    side_tables.create_missing(TABLE, engine)
    side_tables.add_missing_columns(TABLE, engine)


class Cancels:
    """The cancels of one executions database."""

    def __init__(self, engine: sa.engine.Engine) -> None:
        self._engine = engine

    def record(self, execution_id: str, state_info: str | None,
               state: str = CANCELLED, output: Any = None) -> bool:
        """Cancel ``execution_id`` (stop it in ``state``, ``output`` its output) with
        message ``state_info``; False when it was cancelled or stopped already (the
        first one stays, as Mistral's)."""
        try:
            with self._engine.begin() as conn:
                if conn.execute(sa.select(TABLE.c.execution_id).where(
                        TABLE.c.execution_id == execution_id)).first() is not None:
                    return False
                conn.execute(sa.insert(TABLE).values(execution_id=execution_id,
                                                     state_info=state_info,
                                                     cancelled_at=clock.time(),
                                                     state=state,
                                                     output=None if output is None
                                                     else json.dumps(output)))
        except sa.exc.IntegrityError:
            return False  # another client cancelled it between the look and the insert
        return True

    def forget(self, execution_id: str) -> None:
        """Remove the cancel of ``execution_id`` (it had ended before it was asked)."""
        with self._engine.begin() as conn:
            conn.execute(sa.delete(TABLE).where(TABLE.c.execution_id == execution_id))

    def of(self, execution_ids: Sequence[str]) -> dict[str, Cancel]:
        """The cancels of those of ``execution_ids`` that were cancelled."""
        if not execution_ids:
            return {}
        found: dict[str, Cancel] = {}
        ids = list(dict.fromkeys(execution_ids))
        with self._engine.connect() as conn:
            for start in range(0, len(ids), 500):
                for row in conn.execute(sa.select(TABLE).where(
                        TABLE.c.execution_id.in_(ids[start:start + 500]))):
                    found[row.execution_id] = Cancel(
                        row.state_info, row.cancelled_at, row.state or CANCELLED,
                        None if row.output is None else json.loads(row.output))
        return found


def shown_tasks(store: Any, fd: Any, records: list[Any]) -> list[Any]:
    """The task records (:class:`~.executions.TaskRecord`) of the execution of flow
    detail ``fd`` (of ``store``) as readers see them once it was cancelled, as
    Mistral's: a task still RUNNING reads CANCELLED, with Mistral's ``state_info``,

    * at once when it runs sub-workflow executions that were cancelled: the message of
      the one cancelled (of several, ``with-items``: how many were), as Mistral's task
      takes its cancelled sub-workflow's end;
    * once the execution's engine stopped, whatever it was left doing (an asynchronous
      action a client no longer may complete, a task a crash interrupted): the
      execution's message.  Until then its running action ends as it does.

    A stopped one (SUCCESS or ERROR) shows a task whose asynchronous action a client
    may still complete RUNNING, then as the completion left it, with what it published
    (:func:`~.stopped_completions.view`).

    The stored records stay as the engine wrote them; only RUNNING ones are looked
    at, so an execution with none costs no query."""
    if not any(r.state == "RUNNING" for r in records):
        return records
    cancelled = store.cancels.of([fd.uuid]).get(fd.uuid)
    if cancelled is None:
        return records
    ended = (fd.meta or {}).get("finished_at") is not None
    kids: dict[str, list[str]] = {}
    for child in store.children(fd.uuid):
        kids.setdefault(str((child.meta or {}).get("parent_task")), []).append(child.uuid)
    found = store.cancels.of([ident for ids in kids.values() for ident in ids])
    actions: dict[str, list[Any]] = {}
    kept: dict[str, Any] = {}
    if cancelled.state != CANCELLED:  # stopped: its async tasks a client may complete
        for action in store.async_actions.of_execution(fd.uuid):
            actions.setdefault(action.task, []).append(action)
        kept = {ad.name: ad.meta for ad in fd if ad.name in actions}

    def view(r: Any) -> Any:
        if r.state != "RUNNING":
            return r
        completed = stopped_completions.view(r, actions.get(r.name, []), kept.get(r.name))
        if completed is not None:
            return completed
        mine = kids.get(r.name, [])
        hit = [found[ident] for ident in mine if ident in found]
        if len(mine) > 1 and hit:
            info: str | None = (f"{len(hit)} of {len(mine)} sub-workflow executions were "
                                f"cancelled: {hit[0].state_info}")
        elif hit:
            info = hit[0].state_info
        elif ended:
            info = cancelled.state_info
        else:
            return r
        return dataclasses.replace(r, state=CANCELLED, state_info=info, waiting=[],
                                   progress=None)

    return [view(r) for r in records]


def finish(store: Any, fd: Any, journal: Any = None) -> bool:
    """Record the end of cancelled execution ``fd`` (of ``store``, an
    :class:`~.executions.ExecutionStore`), whose engine stopped or which no process
    runs: its end time; its waiting asynchronous actions are cancelled (a completion
    is then refused; a stop with SUCCESS or ERROR leaves them to a client, as Mistral's:
    :mod:`.stopped_completions`), its undo ``journal`` (given) forgotten: no task of it runs
    again.  A sub-workflow whose ancestor was cancelled (it started meanwhile, and
    stopped on its ancestor's request) is cancelled with it.  False (nothing
    written) when neither was cancelled."""
    ids = pause_requests.lineage(fd, lambda ident: store.flow_detail(ident, lazy=True))
    cancelled = store.cancels.of(ids)
    found = cancelled.get(fd.uuid)
    if found is None:  # a sub-workflow started as its ancestor was cancelled: with it
        above = next((cancelled[ident] for ident in ids[1:] if ident in cancelled
                      and cancelled[ident].state == CANCELLED), None)
        if above is None:
            return False
        store.cancels.record(fd.uuid, above.state_info)
        found = store.cancels.of([fd.uuid])[fd.uuid]
    store.update_meta(fd, finished_at=clock.time(), paused_at=None,
                      state_info=found.state_info,
                      error=found.state_info if found.state == FAILURE else None,
                      output=output_of(found))
    if found.state == CANCELLED:  # a stop leaves them to a client (Mistral's)
        store.async_actions.cancel_execution(fd.uuid,
                                             "cancelled: the execution was cancelled")
    if journal is not None:
        journal.forget()
    return True


def ended(store: Any, execution_id: str, origin: str | None = None) -> Any:
    """The record of ``execution_id`` (of ``store``) when it has ended (succeeded,
    failed, reverted, cancelled), else None: a resume returns it unchanged, as
    Mistral's ``resume_workflow`` of a workflow that is not paused.

    :raises Conflict: ``origin`` is given and it was not started from there
    """
    record = store.get(execution_id)
    pause_requests.check_origin(store, execution_id, origin, "resume")
    return record if record.state in ENDED else None


def cancel(store: Any, execution_id: str, message: str | None, live: Any,
           state: str = CANCELLED, output: Callable[[], Any] | None = None) -> Any:
    """Cancel ``execution_id`` (of ``store``) and its sub-workflow executions that
    have not ended, with ``message``; its record as readers see it then.  With
    ``state`` FAILURE or SUCCESS it is stopped in that state instead, alone, its output
    what ``output`` evaluates then (:func:`stoppable`; as Mistral's ``stop_workflow``:
    its sub-workflows run on, their ends complete its tasks and start nothing more;
    its ancestors are left running).

    An execution that ended is returned unchanged (Mistral's cancel does nothing then).
    One this process runs is suspended (``live``: the running engines by id), one
    another process runs gets a pause request, which its engine reads before it
    starts tasks; either records its end once its running tasks ended.

    Its parent is left running, as Mistral's: its task reads CANCELLED once the child
    ended, its other branches run to their ends, then it ends CANCELLED with
    ``"Cancelled tasks: TASK"`` (:mod:`.machine_cancels`, :mod:`.graph_cancels`).
    """
    record = store.get(execution_id)
    if state != CANCELLED:  # one asked to pause reads PAUSED already, as Mistral's
        from tripleo_flow.engine.store import pause_views

        record = pause_views.shown_one(store, record)
    if not stoppable(record, state):
        return record
    evaluated = output() if output is not None and state != CANCELLED else None
    family = [execution_id]
    for ident in family:  # breadth first: children, grandchildren... (a cancel's)
        family.extend(fd.uuid for fd in store.children(ident)
                      if fd.uuid not in family and state == CANCELLED)
    for ident in family:
        if store.get(ident).state not in ENDED:
            store.cancels.record(ident, message,
                                 state if ident == execution_id else CANCELLED,
                                 evaluated if ident == execution_id else None)
            store.pause_requests.request(ident)
    for ident in reversed(family):  # the deepest first: each parent sees its child stop
        engine = live.get(ident)
        if engine is not None:
            engine.suspend()
    elsewhere = False
    for ident in family:
        elsewhere = _end_if_idle(store, ident, live) or elsewhere
    if elsewhere:
        # An engine trusts a look that found no request for CHECK_INTERVAL s: once that
        # passed, each of them reads the request before it starts another task.
        clock.sleep(pause_requests.CHECK_INTERVAL + 0.05)
    return store.get(execution_id)


def verb(state: str) -> str:
    """The command that stops an execution in ``state`` (``execution VERB ID``)."""
    return "cancel" if state == CANCELLED else "update"


def stoppable(record: Any, state: str) -> bool:
    """Whether execution ``record`` (as readers see it) is stopped in ``state``, as
    Mistral's ``stop_workflow``: False (left as it is) when it has ended, or is PAUSED
    and ``state`` is FAILURE (a PAUSED one is cancelled).

    :raises InvalidInput: ``state`` is none of :data:`STOP_STATES`
    :raises InvalidInput: SUCCESS asked of one that is PAUSED or has ended (no
        transition of Mistral's: its ``set_state`` raises a WorkflowException, a 400)
    """
    if state not in STOP_STATES:
        raise exceptions.InvalidInput(
            f"An execution is stopped in state CANCELLED, FAILURE (ERROR) or SUCCESS, "
            f"not {str(state)[:40]!r}.")
    if record.state not in ENDED and (record.state != PAUSED or state == CANCELLED):
        return True
    if state == SUCCESS:
        raise exceptions.InvalidInput(
            f"Execution {record.id!r} is {record.state}: it cannot be stopped with "
            "state SUCCESS (only a running execution can).")
    return False


def _end_if_idle(store: Any, ident: str, live: Any) -> bool:
    """Record the end of cancelled ``ident`` now when no engine runs it (paused,
    suspended, interrupted by a crash); an engine that runs it records it itself.
    True when another process's engine may run it (it reads the request)."""
    if ident in live:
        return False
    fd = store.flow_detail(ident, lazy=True)
    meta = fd.meta or {}
    if fd.state in ("SUCCESS", "FAILURE", "REVERTED"):
        cancelled = store.cancels.of([ident]).get(ident)
        if cancelled is not None and (meta.get("finished_at") or 0.0) <= \
                cancelled.cancelled_at:
            store.cancels.forget(ident)  # it ended before the cancel: left as it ended
            store.pause_requests.clear(ident)
        return False
    if store.raw(ident).state in ("PAUSED", "SUSPENDED", "INTERRUPTED"):
        finish(store, fd)
        return False
    return True


__all__ = ["CANCELLED", "ENDED", "FAILURE", "STOP_STATES", "SUCCESS", "TABLE", "Cancel",
           "Cancels", "cancel", "create_table", "ended", "finish", "output_of", "shown",
           "shown_tasks",
           "stoppable", "verb"]
