"""A conductor's check of its claim at the end of each task (pure logic: the Redis
board is a stand-in that cannot answer; the whole race is
tests/functional/test_jobboard.py::test_a_conductor_that_lost_its_claim_stops_and_the_other_takes_over).
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

from tripleo_flow.flows.conductor import Conductor, _Claim


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
