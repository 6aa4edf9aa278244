"""Pause requests kept in the executions database, for executions run elsewhere.

Mistral lets any client pause a running execution; here the engine of an
execution lives in whichever process runs it (a CLI runner, the API server, a
jobboard conductor).  A process that does not run it writes a row in this
table; the engine that does reads it right before it starts its next tasks
(:class:`PauseCheck`: a TaskFlow engine's guard, the state machine's check), and
then starts nothing more: its running tasks end and it stops PAUSED, as an
in-process pause leaves it.  A request names one execution, and the check of an
execution also reads those of its ancestors, so a sub-workflow pauses with its
parent (and a paused child pauses its parent: :mod:`.subworkflow`).  Resuming an
execution, or its ending, removes its request.

Reads are rare: a check that found nothing is trusted for
:data:`CHECK_INTERVAL` seconds, so a chain of short tasks does not query the
database once per task.  Not where the run would end: before a TaskFlow engine
starts the workflow's last atom (its output) or an undo (a failure reverts it),
and before the state machine ends or applies a ``fail`` or ``succeed`` command,
the check reads the database (``fresh``), so a request that arrived as the last
task ended keeps the run PAUSED, as Mistral's paused workflow does not complete.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.store import side_tables

#: How long a check that found no request is trusted (s).
CHECK_INTERVAL = 0.25

_METADATA = sa.MetaData()
TABLE = sa.Table(
    "tripleo_flow_pause_requests", _METADATA,
    sa.Column("execution_id", sa.String(36), primary_key=True),
    sa.Column("requested_at", sa.Double, nullable=False),
)


def create_table(engine: sa.engine.Engine) -> None:
    """Create the table when the database has none (the executions backend calls
    this with its own tables)."""
    side_tables.create_missing(TABLE, engine)


class PauseRequests:
    """The pause requests of one executions database."""

    def __init__(self, engine: sa.engine.Engine) -> None:
        self._engine = engine

    def request(self, execution_id: str) -> None:
        """Ask the engine running ``execution_id`` to pause (idempotent)."""
        try:
            with self._engine.begin() as conn:
                found = conn.execute(sa.select(TABLE.c.execution_id).where(
                    TABLE.c.execution_id == execution_id)).first()
                if found is None:
                    conn.execute(sa.insert(TABLE).values(execution_id=execution_id,
                                                         requested_at=clock.time()))
        except sa.exc.IntegrityError:
            pass  # another client asked between the look and the insert: asked already

    def asked(self, execution_ids: Sequence[str]) -> set[str]:
        """Those of ``execution_ids`` a pause is asked of."""
        if not execution_ids:
            return set()
        with self._engine.connect() as conn:
            return {row[0] for row in conn.execute(sa.select(TABLE.c.execution_id).where(
                TABLE.c.execution_id.in_(list(execution_ids))))}

    def requested(self, execution_ids: Sequence[str]) -> bool:
        """Whether a pause is asked of one of ``execution_ids``."""
        if not execution_ids:
            return False
        with self._engine.connect() as conn:
            return conn.execute(sa.select(TABLE.c.execution_id).where(
                TABLE.c.execution_id.in_(list(execution_ids))).limit(1)).first() is not None

    def clear(self, execution_id: str) -> None:
        """Forget the request of ``execution_id`` (resumed, or ended)."""
        with self._engine.begin() as conn:
            conn.execute(sa.delete(TABLE).where(TABLE.c.execution_id == execution_id))

    def pending(self) -> list[str]:
        """The executions a pause is asked of (tests, diagnostics)."""
        with self._engine.connect() as conn:
            return [row[0] for row in conn.execute(
                sa.select(TABLE.c.execution_id).order_by(TABLE.c.requested_at))]


def lineage(fd: Any, flow_detail: Callable[[str], Any]) -> list[str]:
    """The id of the execution of flow detail ``fd`` and its ancestors', nearest first
    (``flow_detail`` gives an execution's flow detail; an ancestor it cannot find
    ends the chain)."""
    chain = [fd.uuid]
    parent = (fd.meta or {}).get("parent_id")
    while isinstance(parent, str) and parent not in chain:
        chain.append(parent)
        try:
            parent = (flow_detail(parent).meta or {}).get("parent_id")
        except exceptions.ExecutionNotFound:
            break
    return chain


def check_for(store: Any, fd: Any) -> PauseCheck:
    """The pause check of the engine about to run (or continue) flow detail ``fd`` of
    ``store`` (an :class:`~.executions.ExecutionStore`); a request of its own is
    forgotten when it is being resumed, kept when it starts (a PENDING execution
    paused before it was claimed: it stops before its first tasks, as Mistral's), and
    asked again of a cancelled one (:mod:`.cancels`), which then starts nothing."""
    if store.cancels.of([fd.uuid]):
        store.pause_requests.request(fd.uuid)  # cancelled: it starts nothing
    elif fd.state != "PENDING":
        store.pause_requests.clear(fd.uuid)

    def stopped_alone(ids: list[str]) -> set[str]:
        return {ident for ident, found in store.cancels.of(ids).items()
                if found.state != "CANCELLED"}

    return PauseCheck(store.pause_requests,
                      lineage(fd, lambda ident: store.flow_detail(ident, lazy=True)),
                      CHECK_INTERVAL, stopped_alone)


def ask(store: Any, execution_id: str) -> Any:
    """Ask the process running ``execution_id`` (of ``store``) to pause it: its record
    (still RUNNING, or PENDING, as the engine wrote it: its running tasks end first;
    readers show it PAUSED at once, :mod:`.pause_views`).

    A PAUSED execution is left as it is and its record returned, as Mistral's pause of a
    paused workflow does nothing.

    :raises Conflict: it is not running (:func:`check_pausable`); nothing is written
    """
    record = store.get(execution_id)
    if record.state == "PAUSED":
        return record  # Mistral's pause of a paused workflow: nothing to do
    check_pausable(record)
    return note(store, execution_id)


def note(store: Any, execution_id: str) -> Any:
    """Record a pause of ``execution_id`` (of ``store``) that is asked (or, in the
    process running it, done already): its record.  Nothing is kept once it ended."""
    store.pause_requests.request(execution_id)
    record = store.get(execution_id)
    if record.state in ("SUCCESS", "ERROR"):
        store.pause_requests.clear(execution_id)  # it ended meanwhile: nothing to pause
    return record


class PauseCheck:
    """Whether the engine of an execution must pause before it starts tasks: a
    request for it or one of its ancestors (``ids``).  Once true it stays true
    (:attr:`fired`), so the run that saw it knows it paused on a request.

    An ancestor stopped with SUCCESS or ERROR (``stopped_alone`` names those of the ids
    it is given) stops alone: its request does not reach its descendants, which run
    on to their ends, as Mistral's ``stop_workflow`` cancels sub-workflows only for
    CANCELLED (:mod:`.cancels`)."""

    def __init__(self, requests: PauseRequests, ids: Iterable[str],
                 interval: float = CHECK_INTERVAL,
                 stopped_alone: Callable[[list[str]], set[str]] | None = None) -> None:
        self._requests = requests
        self._ids = list(ids)
        self._interval = interval
        self._stopped_alone = stopped_alone
        self._next = 0.0
        self._lock = threading.Lock()
        self.fired = False

    def __call__(self, fresh: bool = False) -> bool:
        """Whether a pause is asked; ``fresh``: read now, not trusting a recent
        "no" (before a run ends: it then stays PAUSED instead)."""
        with self._lock:
            if self.fired:
                return True
            now = clock.monotonic()
            if now < self._next and not fresh:
                return False
            self._next = now + self._interval
            self.fired = self._requests.requested(self._ids)
            if self.fired and self._stopped_alone is not None and len(self._ids) > 1:
                asked = self._requests.asked(self._ids)  # whose: an ancestor's stop?
                above = sorted(asked - {self._ids[0]})
                self.fired = bool(asked - (self._stopped_alone(above) if above else set()))
            return self.fired

    def guard(self, suspend: Callable[[], None], other: Callable[[], bool] | None = None,
              ends: Callable[[list[str]], bool] | None = None
              ) -> Callable[[list[str]], bool]:
        """A TaskFlow engine's guard (:class:`~.engine.HeldExecutor`, given the names of
        the atoms about to start): ``other``'s answer, and on a request, ``suspend``
        the engine and start nothing.  Where ``ends`` says these atoms end the run,
        the request is read fresh (:meth:`__call__`)."""

        def may_start(names: list[str]) -> bool:
            if other is not None and not other():
                return False
            if self(fresh=ends is not None and ends(names)):
                suspend()
                return False
            return True

        return may_start

    def unstarted(self, engine: Any, names: list[str]) -> None:
        """The guard of TaskFlow ``engine`` kept the atoms ``names`` from starting:
        after a pause request, put them back to PENDING (TaskFlow marked them RUNNING
        before it submitted them), which is what they are, so the engine sees work
        left and stops SUSPENDED, and their records do not read as started.  An undo
        kept from starting (TaskFlow marked it REVERTING) goes back to what its atom
        was, FAILURE or SUCCESS: the resumed engine reverts it then."""
        if not self.fired:
            return
        storage = engine.storage
        failed = storage.get_execute_failures()
        for name in names:
            if not name:
                continue
            if storage.get_atom_intention(name) != "REVERT":
                storage.set_atom_state(name, "PENDING")
            else:
                storage.set_atom_state(name, "FAILURE" if name in failed else "SUCCESS")


def ends_run(engine: Callable[[], Any], last: str) -> Callable[[list[str]], bool]:
    """Whether the atoms (names) the TaskFlow engine ``engine()`` is about to start end
    its run: its last atom ``last`` (the workflow's output), or undos (a failure
    reverts it)."""

    def ends(names: list[str]) -> bool:
        storage = engine().storage
        return last in names or any(
            storage.get_atom_intention(name) == "REVERT" for name in names if name)

    return ends


def check_origin(store: Any, execution_id: str, origin: str | None,
                 verb: str = "pause") -> None:
    """Raise Conflict when ``origin`` is given and ``execution_id`` (of ``store``) was
    not started from there (an HTTP API user pauses, or resumes: ``verb``, only what
    API users started)."""
    if origin is not None and (store.flow_detail(execution_id, lazy=True).meta or {}).get(
            "origin") != origin:
        raise exceptions.Conflict(
            f"Execution {execution_id!r} was not started through the HTTP API;",
            hints=[exceptions.Hint(f"{verb} it where it was started, with",
                                   "execution.change_where_started",
                                   {"verb": verb, "execution": execution_id})])


def check_pausable(record: Any) -> None:
    """Raise Conflict unless the execution ``record`` (an
    :class:`~.executions.Execution`) runs, waits to be claimed (PENDING: Mistral
    shows an execution RUNNING from its start) or is paused already (nothing to do,
    as Mistral's), as Mistral refuses to pause an execution that ended."""
    ident, state = record.id, record.state
    if state in ("RUNNING", "PENDING", "PAUSED"):  # Mistral shows a started one RUNNING
        return
    if state in ("SUSPENDED", "INTERRUPTED"):
        why = {"SUSPENDED": "is suspended",
               "INTERRUPTED": "was interrupted (its process stopped)"}[state]
        raise exceptions.Conflict(
            f"Execution {ident!r} {why}; only a running execution can be paused.",
            hints=[exceptions.Hint("Continue it with", "execution.resume",
                                   {"execution": ident})])
    raise exceptions.Conflict(
        f"Execution {ident!r} has already ended ({state}); only a running execution can "
        "be paused.")


__all__ = ["CHECK_INTERVAL", "TABLE", "PauseCheck", "PauseRequests", "ask", "check_for",
           "check_origin", "check_pausable", "create_table", "ends_run", "lineage",
           "note"]
