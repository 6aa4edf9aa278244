"""The engine's clock seam (:mod:`tripleo_flow.common.clock`) and the unit tests' virtual
clock (:mod:`tests.virtual_clock`): waits end in the order their deadlines give, never
before what a running thread still does, and as soon as what they wait for happened."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures

import pytest

from tests.virtual_clock import VirtualClock
from tripleo_flow.common import clock


@pytest.fixture
def virtual() -> Iterator[VirtualClock]:
    fake = VirtualClock()
    with clock.use(fake):
        fake.start()
        yield fake
        fake.stop()


def test_use_installs_a_clock_until_the_block_ends() -> None:
    class Fixed(clock.RealClock):
        def time(self) -> float:
            return 42.0

    with clock.use(Fixed()):
        assert clock.time() == 42.0
    assert clock.time() != 42.0
    assert isinstance(clock._clock, clock.RealClock) and not isinstance(clock._clock, Fixed)


def test_the_real_clock_waits_as_its_counterparts() -> None:
    event = threading.Event()
    assert clock.wait(event, 0) is False
    event.set()
    assert clock.wait(event, None) is True
    done: futures.Future[int] = futures.Future()
    assert clock.wait_futures([done], 0).not_done == {done}
    done.set_result(1)
    assert clock.wait_futures([done], None).done == {done}
    thread = threading.Thread(target=lambda: None)
    thread.start()
    clock.join(thread, None)
    assert not thread.is_alive()


def _in_thread(target: object) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


def test_sleepers_wake_in_the_order_of_their_deadlines(virtual: VirtualClock) -> None:
    woke: list[float] = []
    threads = [_in_thread(lambda s=s: (clock.sleep(s), woke.append(s))) for s in (3, 1, 2)]
    for thread in threads:
        clock.join(thread, None)
    assert woke == [1, 2, 3]
    assert virtual.skipped > 2  # waited on the clock, not on the real time


def test_a_running_thread_holds_the_time_back(virtual: VirtualClock) -> None:
    """A thread that computes (it waits on nothing) ends its work before a sleeper's
    deadline is reached, however long the sleep and however short the work."""
    order: list[str] = []

    def spin() -> None:
        total = 0
        for i in range(3_000_000):
            total += i
        order.append("spun")

    spinner = _in_thread(spin)
    clock.sleep(60)
    order.append("slept")
    clock.join(spinner, None)
    assert order == ["spun", "slept"]


def test_a_wait_answered_before_its_deadline_ends_without_skipping(
        virtual: VirtualClock) -> None:
    event = threading.Event()

    def work_then_set() -> None:
        sum(range(1_000_000))
        event.set()

    _in_thread(work_then_set)
    assert clock.wait(event, 30) is True
    assert virtual.skipped == 0


def test_a_timeout_fires_before_a_longer_sleep_ends(virtual: VirtualClock) -> None:
    """A 1 s wait for an action that sleeps 5 s times out, and the action ends only
    after: the order of a task's timeout and its action's end, as on the real clock."""
    order: list[str] = []
    pool = futures.ThreadPoolExecutor(1)
    try:
        action = pool.submit(lambda: (clock.sleep(5), order.append("action ended")))
        waited = clock.wait_futures([action], 1)
        order.append("timed out" if waited.not_done else "done")
        clock.wait_futures([action], None)
    finally:
        pool.shutdown()
    assert order == ["timed out", "action ended"]
    assert virtual.skipped > 4  # neither wait took its seconds



def test_a_thread_being_started_holds_the_time_back(virtual: VirtualClock) -> None:
    """A thread that is starting (threading keeps it in ``_limbo``, with no ident yet,
    while the thread that starts it waits with no timeout) counts as running: the
    time does not jump meanwhile, so the wait here ends by the real clock."""
    starting = threading.Thread(target=lambda: None)
    threading._limbo[starting] = starting  # type: ignore[attr-defined]
    try:
        assert clock.wait(threading.Event(), 0.05) is False
    finally:
        del threading._limbo[starting]  # type: ignore[attr-defined]
    assert virtual.jumps == 0
