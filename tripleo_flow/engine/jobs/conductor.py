"""A TaskFlow conductor that runs workflow executions posted as jobs.

:class:`Conductor` is TaskFlow's
:class:`~taskflow.conductors.backends.impl_nonblocking.NonBlockingConductor`
(claim, dispatch up to ``max_jobs`` jobs at once, consume or abandon) with
three changes:

- the engine of a job is the workbook runner's (:meth:`Runner.load
  <tripleo_flow.engine.compile.runner.Runner.load>`): the flow detail named by the job
  is loaded from the executions database and compiled as an in-process run
  would be; one that already made progress continues from its last completed
  task (the task that was running runs again: at-least-once);
- when a job ends, the execution's record gets its output or its error, as an
  in-process run writes them;
- on a Redis board, a heartbeat renews this conductor's claims every
  ``heartbeat_interval`` s (claims expire after ``claim_expiry`` s otherwise).
  A claim found lost (this process stalled longer than the expiry: seen by the
  heartbeat, when a task ends, or right before a task starts) suspends its
  engine at that task boundary, with its storage moved to memory so that
  nothing it still writes reaches the execution the other conductor now runs;
  the job is not consumed.  Before a task starts the claim is checked again
  (:class:`~tripleo_flow.engine.compile.engine.HeldExecutor`'s guard), so no task starts
  in a conductor that lost its claim, even one its engine had already
  scheduled: it stays as it was, for the other conductor to run.  The loss is
  published (``lost``) only once the engine is fenced and suspended, under the
  engine's storage lock, so the engine thread never sees a lost claim with an
  engine still free to schedule.  (A state-machine run is checked only when its
  tasks end.)

:meth:`stop` (SIGTERM in ``tripleo-flow conductor``) stops claiming and
suspends the running engines once their running tasks end; their jobs are
abandoned, for another conductor (or this one, restarted) to continue.  A
workflow that pauses (``pause-before``) is recorded PAUSED and its job consumed:
``execution resume`` posts a new one.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from taskflow import states
from taskflow.conductors.backends import impl_nonblocking
from taskflow.persistence import base as persistence_base
from taskflow.persistence.backends import impl_memory
from taskflow.types import notifier
from taskflow.types import timing as tt

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import engine as tf_engine
from tripleo_flow.engine.compile.runner import Runner
from tripleo_flow.engine.jobs import jobboard

LOG = logging.getLogger(__name__)


@dataclass
class _Claim:
    job: Any
    engine: Any = None
    fd: Any = None
    lost: bool = False
    backend: FenceableBackend | None = None
    #: When the claim was last known held (claimed, or renewed by the heartbeat).
    held_at: float = field(default_factory=clock.monotonic)
    #: Taken (after the engine's storage lock) to find the claim lost, once.
    lock: Any = field(default_factory=threading.RLock)


class FenceableBackend(persistence_base.Backend):  # type: ignore[misc]
    """The persistence an engine of a claimed job writes through: the shared
    executions database until :meth:`fence`, then memory.

    Chosen when the engine is loaded, so a conductor that lost its claim stops
    writing the execution's records (another conductor owns them now) without
    reaching into TaskFlow's storage.
    """

    def __init__(self, shared: Any) -> None:
        super().__init__({})
        self._shared = shared
        self._memory: impl_memory.MemoryBackend | None = None

    def get_connection(self) -> Any:
        return (self._memory or self._shared).get_connection()

    def fence(self, flow_detail: Any) -> None:
        """From now on write to memory, starting from ``flow_detail`` as it is."""
        memory = impl_memory.MemoryBackend({"deep_copy": False})
        with contextlib.closing(memory.get_connection()) as conn:
            conn.update_flow_details(flow_detail, ignore_missing=True)
        self._memory = memory

    @property
    def fenced(self) -> bool:
        return self._memory is not None

    def close(self) -> None:
        """Nothing: the shared backend belongs to the runner."""


class _Poll(tt.Timeout):  # type: ignore[misc]
    """TaskFlow's wait between looks at the board, also ended by a job that ends (its
    slot is filled at once, not at the next look)."""

    def __init__(self, value: float) -> None:
        super().__init__(value)
        self._wake = threading.Event()

    def wake(self) -> None:
        self._wake.set()

    def interrupt(self) -> None:
        super().interrupt()
        self._wake.set()

    def wait(self) -> None:
        clock.wait(self._wake, self.value)
        self._wake.clear()


class Conductor(impl_nonblocking.NonBlockingConductor):  # type: ignore[misc]
    """Claims execution jobs from ``board`` and runs them with ``runner``."""

    def __init__(self, name: str, board: Any, runner: Runner, concurrency: int,
                 settings: jobboard.BoardSettings, max_jobs: int | None = None) -> None:
        """:param concurrency: jobs run at the same time
        :param max_jobs: stop once this many jobs were claimed and have ended (None:
            run until stopped); TaskFlow's own ``run(max_dispatches=N)`` runs N + 1
        """
        super().__init__(name, board, persistence=runner.store.backend, engine="parallel",
                         wait_timeout=_Poll(settings.poll_interval),
                         max_simultaneous_jobs=concurrency)
        self._max_jobs = max_jobs
        self._ended = 0
        self._runner = runner
        self._settings = settings
        self._claims: dict[str, _Claim] = {}
        self._claims_lock = threading.Lock()
        self._heart_stop = threading.Event()

    # -- claims ------------------------------------------------------------------

    def _heartbeat(self) -> None:
        renew = getattr(self._jobboard, "renew", None)
        if renew is None:  # ZooKeeper: the session keeps the claims
            return
        interval, expiry = self._settings.heartbeat_interval, self._settings.claim_expiry
        while not clock.wait(self._heart_stop, interval):
            with self._claims_lock:
                claims = [c for c in self._claims.values() if not c.lost]
            for claim in claims:
                try:
                    kept = renew(claim.job, self._name, expiry)
                except Exception:
                    LOG.warning("Renewing the claim on %s failed; trying again in %g s",
                                claim.job, interval, exc_info=True)
                    continue
                if not kept:
                    self._lose(claim)
                else:
                    claim.held_at = clock.monotonic()

    def _lose(self, claim: _Claim) -> None:
        """The job is no longer ours: suspend its engine at the next task boundary,
        keeping whatever it still writes out of the executions database (the
        conductor that took the job over owns the execution's records now).

        From the heartbeat or the engine's thread: under the engine's storage lock
        (the one TaskFlow schedules under, taken first), and ``lost`` is set last,
        so whoever sees it lost sees the engine fenced and suspended."""
        with _storage_lock(claim.engine), claim.lock:
            if claim.lost:
                return
            if claim.engine is not None and claim.backend is not None:
                claim.backend.fence(claim.fd)
                claim.engine.suspend()
            claim.lost = True
        LOG.error("Conductor %s lost its claim on %s (it stalled longer than claim_expiry); "
                  "suspended its engine", self._name, claim.job)

    def _may_start(self, claim: _Claim) -> bool:
        """The guard of the job's engine, right before it starts tasks: whether this
        conductor still holds the claim (see :meth:`_check_claim`).  A check that
        fails unexpectedly lets the tasks start, as they would without the guard (an
        error here would fail the run)."""
        try:
            self._check_claim(claim)
        except Exception:
            LOG.warning("Could not check the claim on %s before starting tasks", claim.job,
                        exc_info=True)
        return not claim.lost

    def _check_claim(self, claim: _Claim) -> None:
        """At the end of each task (before the engine schedules the next) and before
        tasks start: on a Redis board, stop unless this conductor still owns the job
        (a heartbeat may not have run yet when the process comes back from a stall):
        a claim not renewed for longer than ``claim_expiry`` is lost whatever the
        board answers, or fails to answer."""
        if claim.lost or getattr(self._jobboard, "renew", None) is None:
            return
        if clock.monotonic() - claim.held_at > self._settings.claim_expiry:
            # Not renewed for longer than a claim lasts (this process stalled, or the
            # board did not answer): it may be another's already; the board need not say.
            self._lose(claim)
            return
        try:
            owner = self._jobboard.find_owner(claim.job)
        except Exception:  # the board is unreachable: the heartbeat decides
            LOG.warning("Could not look up the owner of %s", claim.job, exc_info=True)
            return
        if owner != self._name:
            self._lose(claim)

    def run(self, max_dispatches: int | None = None) -> None:
        self._heart_stop.clear()
        heart = threading.Thread(target=self._heartbeat, name=f"heartbeat-{self._name}",
                                 daemon=True)
        heart.start()
        try:
            super().run(max_dispatches=max_dispatches)
        finally:
            self._heart_stop.set()
            heart.join()

    # -- jobs --------------------------------------------------------------------

    def _can_claim_more_jobs(self, job: Any) -> bool:
        # Counted in this (the claiming) thread: jobs ended plus jobs dispatched.
        if self._max_jobs is not None and self._ended + len(self._dispatched) >= self._max_jobs:
            return False
        return bool(super()._can_claim_more_jobs(job))

    def _on_job_done(self, job: Any, fut: Any) -> None:
        with self._claims_lock:
            self._ended += 1
        try:
            super()._on_job_done(job, fut)
        finally:
            if self._max_jobs is not None and self._ended >= self._max_jobs:
                self._wait_timeout.interrupt()  # every job has ended: this suspends nothing
            else:
                self._wait_timeout.wake()

    def _engine_from_job(self, job: Any) -> Any:
        claim = self._claims[job.uuid]
        claim.fd = self._runner.store.flow_detail(jobboard.execution_of(job))
        backend = FenceableBackend(self._runner.store.backend)
        engine, _workflow = self._runner.load(claim.fd, backend=backend,
                                              guard=lambda: self._may_start(claim))

        def on_atom(event_type: str, details: Any) -> None:
            if event_type in _ATOM_ENDS:
                self._check_claim(claim)

        engine.atom_notifier.register(notifier.Notifier.ANY, on_atom)
        with _storage_lock(engine), claim.lock:  # the order _lose takes them in
            claim.engine, claim.backend = engine, backend
            if claim.lost:  # lost while it loaded
                backend.fence(claim.fd)
                engine.suspend()
        return engine

    def _dispatch_job(self, job: Any) -> bool:
        claim = _Claim(job)
        with self._claims_lock:
            self._claims[job.uuid] = claim
        try:
            ran = self._runner.store.flow_detail(jobboard.execution_of(job), lazy=True)
            if self._runner.recorded_unrecorded_failure(ran):
                return True  # it failed before a kill: its end is recorded, not run again
            with tf_engine.fewer_collections():
                consume = bool(super()._dispatch_job(job))
        except exceptions.ExecutionNotFound:
            LOG.error("Job %s names an execution that does not exist; dropping it", job)
            return True
        except Exception as exc:  # the engine could not be built: the run fails
            if claim.fd is None:
                raise
            self._record(claim, states.FAILURE, exc)
            return True
        finally:
            with self._claims_lock:
                self._claims.pop(job.uuid, None)
        if claim.lost:
            return False
        state = claim.engine.storage.get_flow_state() if claim.engine is not None else None
        if state == states.SUSPENDED and not self._wait_timeout.is_stopped():
            # Neither a stop nor a lost claim: the workflow paused (pause-before).  It
            # stays PAUSED, its job done, until ``execution resume`` posts another.
            self._runner.succeeded(claim.fd, claim.engine)
            return True
        if state == states.SUCCESS:
            self._runner.succeeded(claim.fd, claim.engine)
        elif state in (states.FAILURE, states.REVERTED):
            self._record(claim, state, RuntimeError(f"the workflow ended {state}"))
        return consume

    def _record(self, claim: _Claim, state: str, exc: BaseException) -> None:
        try:
            self._runner.record_failure(claim.fd, exc)
            if claim.engine is None:  # it never ran: its flow detail is still PENDING
                claim.fd.state = state
                self._runner.store.update_meta(claim.fd)
        except exceptions.TripleoFlowError:
            LOG.warning("Could not record the end of execution %s", claim.fd.uuid,
                        exc_info=True)

    def stop(self) -> None:
        """Stop claiming jobs; running engines suspend after their running tasks."""
        super().stop()


#: The atom states that end a task (or its revert): where a lost claim is looked for.
_ATOM_ENDS = frozenset({states.SUCCESS, states.FAILURE, states.REVERTED})


def _storage_lock(engine: Any) -> Any:
    """The write lock TaskFlow's engine holds while it completes and schedules atoms
    (reentrant in its thread); nothing for a state-machine run or no engine yet."""
    lock = getattr(getattr(engine, "storage", None), "lock", None)
    write_lock = getattr(lock, "write_lock", None)
    return write_lock() if write_lock is not None else contextlib.nullcontext()


__all__ = ["Conductor", "FenceableBackend"]
