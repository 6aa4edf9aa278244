"""The clock the workflow engine and its actions read and wait on.

Everything that reads the time (a deadline, a record's timestamp) or waits for some of it
to pass (``wait-before``, a retry's ``delay``, a ``timeout``, a poll) does so through the
module functions here, which ask the installed clock: the process's real one
(:class:`RealClock`: :func:`time.time`, :func:`time.monotonic`, :func:`time.sleep`,
:meth:`threading.Event.wait`...), unless a test installed another with :func:`use`
(the unit tests' virtual clock, which ends a wait as soon as nothing else could happen
before it ends).

A wait names what it waits for (an event, futures, a thread) and its timeout, so a clock
can tell a wait that ended from one that timed out; each returns as its real
counterpart does.
"""

from __future__ import annotations

import contextlib
import threading
import time as _time
from collections.abc import Iterable, Iterator
from concurrent import futures
from typing import Any, Protocol


class Clock(Protocol):
    """What the engine reads and waits on time through."""

    def time(self) -> float:
        """Seconds since the epoch (as :func:`time.time`)."""

    def monotonic(self) -> float:
        """A clock that never goes back (as :func:`time.monotonic`)."""

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (as :func:`time.sleep`)."""

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        """Wait until ``event`` is set or ``timeout`` s passed; whether it is set."""

    def wait_futures(self, fs: Iterable[futures.Future[Any]], timeout: float | None,
                     return_when: str) -> futures._base.DoneAndNotDoneFutures[Any]:
        """As :func:`concurrent.futures.wait`."""

    def join(self, thread: threading.Thread, timeout: float | None) -> None:
        """As :meth:`threading.Thread.join`."""


class RealClock:
    """The process's own clocks: a wait lasts as long as it says."""

    def time(self) -> float:
        return _time.time()

    def monotonic(self) -> float:
        return _time.monotonic()

    def sleep(self, seconds: float) -> None:
        _time.sleep(seconds)

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        return event.wait(timeout)

    def wait_futures(self, fs: Iterable[futures.Future[Any]], timeout: float | None,
                     return_when: str) -> futures._base.DoneAndNotDoneFutures[Any]:
        return futures.wait(fs, timeout, return_when)

    def join(self, thread: threading.Thread, timeout: float | None) -> None:
        thread.join(timeout)


_clock: Clock = RealClock()


def time() -> float:
    """Seconds since the epoch, on the installed clock."""
    return _clock.time()


def monotonic() -> float:
    """The installed clock's monotonic reading (for deadlines within this process)."""
    return _clock.monotonic()


def sleep(seconds: float) -> None:
    """Wait ``seconds`` on the installed clock."""
    _clock.sleep(seconds)


def wait(event: threading.Event, timeout: float | None) -> bool:
    """Wait until ``event`` is set, ``timeout`` s at most (None: as long as it takes);
    whether it is set."""
    return _clock.wait(event, timeout)


def wait_futures(fs: Iterable[futures.Future[Any]], timeout: float | None,
                 return_when: str = futures.FIRST_COMPLETED
                 ) -> futures._base.DoneAndNotDoneFutures[Any]:
    """Wait for ``fs`` as :func:`concurrent.futures.wait` (the first one by default):
    ``(done, not_done)``."""
    return _clock.wait_futures(fs, timeout, return_when)


def join(thread: threading.Thread, timeout: float | None) -> None:
    """Wait until ``thread`` ends, ``timeout`` s at most (see ``is_alive`` after)."""
    _clock.join(thread, timeout)


@contextlib.contextmanager
def use(clock: Clock) -> Iterator[Clock]:
    """Install ``clock`` for the process until the block ends (tests)."""
    global _clock
    before, _clock = _clock, clock
    try:
        yield clock
    finally:
        _clock = before


__all__ = ["Clock", "RealClock", "join", "monotonic", "sleep", "time", "use", "wait",
           "wait_futures"]
