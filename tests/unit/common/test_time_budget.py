"""The per-thread deadline that bounds rendering and expressions."""

from __future__ import annotations

import threading
import time

import pytest

from tripleo_flow.common import time_budget


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time_budget.check()


def test_check_raises_once_the_deadline_has_passed_and_names_the_option() -> None:
    with time_budget.limit(0.05, "[limits] x"):
        with pytest.raises(time_budget.TimeLimitExceeded, match=r"over 0\.05 s \(\[limits\] x\)"):
            _spin(5)
    _spin(0.1)  # no limit outside the block


@pytest.mark.parametrize("outer, inner, stops_after", [
    (0.05, 5.0, 0.05),  # an inner limit never extends the outer one
    (5.0, 0.05, 0.05),
    (0.05, 0, 0.05),    # 0: no limit of its own
    (None, 0.05, 0.05),
])
def test_the_nearest_deadline_holds(outer: float | None, inner: float,
                                    stops_after: float) -> None:
    started = time.monotonic()
    with time_budget.limit(outer, "outer"), time_budget.limit(inner, "inner"):
        with pytest.raises(time_budget.TimeLimitExceeded):
            _spin(5)
    assert time.monotonic() - started < stops_after + 2


def test_the_deadline_is_the_threads_own() -> None:
    other: list[BaseException] = []

    def unlimited() -> None:
        try:
            _spin(0.2)
        except BaseException as exc:  # noqa: BLE001 (reported below)
            other.append(exc)

    with time_budget.limit(0.05, "mine"):
        thread = threading.Thread(target=unlimited)
        thread.start()
        thread.join()
    assert other == []


def test_checked_iter_stops_a_loop() -> None:
    with time_budget.limit(0.05, "loop"), pytest.raises(time_budget.TimeLimitExceeded):
        for _ in time_budget.checked_iter(iter(int, 1)):  # never ends by itself
            pass
