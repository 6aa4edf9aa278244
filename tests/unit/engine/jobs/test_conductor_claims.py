"""A conductor's check of its claim at the end of each task and before tasks start
(the Redis board is a stand-in that cannot answer; the engines are real TaskFlow
engines on a memory backend standing for the executions database; the whole race is
``test_a_conductor_that_lost_its_claim_stops_and_the_other_takes_over`` in
tests/functional/test_jobboard.py).
"""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent import futures
from types import SimpleNamespace
from typing import Any

from taskflow import states, task
from taskflow.patterns import linear_flow
from taskflow.persistence.backends import impl_memory
from taskflow.types import notifier
from taskflow.utils import persistence_utils

from tripleo_flow.engine.compile import engine as tf_engine
from tripleo_flow.engine.jobs.conductor import _ATOM_ENDS, Conductor, FenceableBackend, _Claim


class _Unreachable:
    """A Redis board (it renews claims) that does not answer."""

    def renew(self, *args: Any) -> bool:
        raise ConnectionError("board down")

    def find_owner(self, job: Any) -> str:
        raise ConnectionError("board down")


def _conductor() -> Any:
    conductor = Conductor.__new__(Conductor)
    conductor._jobboard = _Unreachable()
    conductor._settings = SimpleNamespace(claim_expiry=5.0, heartbeat_interval=1.0)
    conductor._name = "c1"
    conductor._claims_lock = threading.Lock()
    return conductor


def test_a_claim_not_renewed_for_longer_than_it_lasts_is_lost_without_the_board() -> None:
    claim = _Claim(job="job-1", held_at=time.monotonic() - 6.0)  # stalled 6 s > 5 s
    _conductor()._check_claim(claim)
    assert claim.lost


def test_a_fresh_claim_is_kept_when_the_board_does_not_answer() -> None:
    claim = _Claim(job="job-1")
    _conductor()._check_claim(claim)
    assert not claim.lost


class _Step(task.Task):  # type: ignore[misc]
    """Notes that it ran; ``then`` runs inside it (a stall while it runs)."""

    def __init__(self, name: str, ran: list[str], then: Any = None) -> None:
        super().__init__(name=name)
        self.ran, self.then = ran, then

    def execute(self) -> None:
        self.ran.append(self.name)
        if self.then is not None:
            self.then()


def _claimed_run(conductor: Any, claim: _Claim, shared: Any, steps: list[Any],
                 then: Any = None) -> Any:
    """Run ``steps`` in a chain as the conductor runs a job's engine (the claim checked
    when a task ends, and by the engine's guard before tasks start; ``then`` told of
    atom events after that check); the engine."""
    with contextlib.closing(shared.get_connection()) as conn:
        book = next(iter(conn.get_logbooks()), None)
    if book is None:
        book, claim.fd = persistence_utils.temporary_flow_detail(shared)
    else:
        claim.fd = next(iter(book))
    claim.backend = FenceableBackend(shared)
    with futures.ThreadPoolExecutor(2) as pool:
        claim.engine = tf_engine.load(
            linear_flow.Flow("chain").add(*steps), flow_detail=claim.fd, book=book,
            backend=claim.backend, engine="parallel", executor=pool,
            guard=lambda _names: conductor._may_start(claim))
        claim.engine.atom_notifier.register(
            notifier.Notifier.ANY,
            lambda event, details: conductor._check_claim(claim) if event in _ATOM_ENDS
            else None)
        if then is not None:
            claim.engine.atom_notifier.register(notifier.Notifier.ANY, then)
        claim.engine.run()
    return claim.engine


def _shared_states(shared: Any) -> dict[str, str]:
    with contextlib.closing(shared.get_connection()) as conn:
        flow_detail = next(iter(next(iter(conn.get_logbooks()))))
    return {atom.name: atom.state for atom in flow_detail}


def _stall(claim: _Claim) -> None:
    claim.held_at = time.monotonic() - 6.0  # as if stopped longer than the claim lasts


def test_a_claim_found_lost_when_a_task_ends_stops_the_next_from_starting() -> None:
    shared = impl_memory.MemoryBackend({})
    conductor, claim = _conductor(), _Claim(job="job-1")
    ran: list[str] = []
    _claimed_run(conductor, claim, shared, [
        _Step("a", ran, then=lambda: _stall(claim)), _Step("b", ran), _Step("c", ran)])
    assert ran == ["a"] and claim.lost and claim.backend is not None and claim.backend.fenced
    assert _shared_states(shared) == {"a": states.SUCCESS, "b": states.PENDING,
                                      "c": states.PENDING}
    # Whoever takes the job over continues from b; each step runs once in all.
    _claimed_run(conductor, _Claim(job="job-1"), shared,
                 [_Step("a", ran), _Step("b", ran), _Step("c", ran)])
    assert ran == ["a", "b", "c"]
    assert set(_shared_states(shared).values()) == {states.SUCCESS}


def test_a_task_already_scheduled_does_not_start_once_the_claim_is_lost() -> None:
    """The stall comes after a's end was checked (the claim still held then) and
    before b starts: the guard refuses b, which stays as it was for a resumed run."""
    shared = impl_memory.MemoryBackend({})
    conductor, claim = _conductor(), _Claim(job="job-1")
    ran: list[str] = []
    steps = [_Step("a", ran), _Step("b", ran), _Step("c", ran)]

    def stall_after_the_check(event: str, details: Any) -> None:
        if details.get("task_name") == "a" and event == states.SUCCESS:
            _stall(claim)

    _claimed_run(conductor, claim, shared, steps, then=stall_after_the_check)
    assert ran == ["a"] and claim.lost
    assert _shared_states(shared)["a"] == states.SUCCESS
    assert _shared_states(shared)["b"] == states.RUNNING  # started while held: never FAILURE
    _claimed_run(conductor, _Claim(job="job-1"), shared,
                 [_Step("a", ran), _Step("b", ran), _Step("c", ran)])
    assert ran == ["a", "b", "c"]
