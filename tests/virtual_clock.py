"""A clock for the unit tests whose waits end as soon as nothing could happen first.

:class:`VirtualClock` reads the real time plus an offset, so its time never runs slower
than the real one.  When every thread the test started waits (on this clock, or blocked
with no timeout) and none of the waits on this clock is already answered (its event
set, its future done), the offset jumps to the nearest deadline of those waits: that
wait ends as if the time had passed, after everything that could have happened before
it.  A 1 s ``timeout`` still fires, a ``wait-before`` still comes before its task, a
retry's ``delay`` still comes between its attempts, in the order the real clock gives;
none of them takes its seconds.

A thread counts as waiting only when it is seen blocked twice, :data:`SETTLE` apart,
without having run in between (its CPU time, from ``/proc``, unchanged) and not ready to
run: a thread just woken, or one blocked anywhere else (a lock, a socket, a real
``time.sleep``), holds the time back, so the clock then runs as the real one.  Threads
that were alive before the clock was made (another test's, pytest's own) are not
watched.
"""

from __future__ import annotations

import concurrent.futures.thread
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent import futures
from pathlib import Path
from typing import Any

#: Real seconds a waiting thread sleeps between looks at what it waits for.
SLICE = 0.005
#: Real seconds every watched thread must stay blocked before the time jumps.
SETTLE = 0.002

#: Python functions in which a thread blocked with no timeout is waiting for another.
_BLOCKING = {threading.Condition.wait.__code__, threading.Thread._wait_for_tstate_lock.__code__,
             concurrent.futures.thread._worker.__code__}


class VirtualClock:
    """The real clocks plus an offset that jumps while every thread waits.

    Install it with :func:`tripleo_flow.common.clock.use`, then :meth:`start` it
    (:meth:`stop` at the end); :attr:`jumps` counts the jumps, :attr:`skipped` the
    seconds they skipped.
    """

    def __init__(self) -> None:
        self._offset = 0.0
        self._lock = threading.Lock()
        #: The waits on this clock, by thread: (deadline on :meth:`monotonic`, answered).
        self._waits: dict[int, tuple[float | None, Callable[[], bool]]] = {}
        main = threading.main_thread()
        self._unwatched = {t for t in threading.enumerate() if t is not main}
        #: Notified at each jump: a sleeping thread wakes at once.
        self._jumped = threading.Condition()
        self._stopping = threading.Event()
        self._runner = threading.Thread(target=self._advance, name="virtual-clock",
                                        daemon=True)
        self.jumps = 0
        self.skipped = 0.0

    def start(self) -> None:
        self._runner.start()

    def stop(self) -> None:
        self._stopping.set()
        self._runner.join()

    # The clock (tripleo_flow.common.clock.Clock).

    def time(self) -> float:
        return time.time() + self._offset

    def monotonic(self) -> float:
        return time.monotonic() + self._offset

    def sleep(self, seconds: float) -> None:
        self._block(lambda: False, max(0.0, seconds), self._nap)

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        self._block(event.is_set, timeout, event.wait)
        return event.is_set()

    def wait_futures(self, fs: Iterable[futures.Future[Any]], timeout: float | None,
                     return_when: str) -> futures._base.DoneAndNotDoneFutures[Any]:
        fs = list(fs)

        def answered() -> bool:  # FIRST_COMPLETED (the engine's) or ALL_COMPLETED
            done = sum(1 for f in fs if f.done())
            return done == len(fs) or (done > 0 and return_when == futures.FIRST_COMPLETED)

        self._block(answered, timeout, lambda t: futures.wait(fs, t, return_when))
        return futures.wait(fs, 0, return_when)

    def join(self, thread: threading.Thread, timeout: float | None) -> None:
        self._block(lambda: not thread.is_alive(), timeout, thread.join)

    def _nap(self, seconds: float) -> None:
        with self._jumped:
            self._jumped.wait(seconds)

    def _block(self, answered: Callable[[], bool], timeout: float | None,
               block: Callable[[float], Any]) -> None:
        """Wait until ``answered()`` or ``timeout`` s of this clock passed, looking again
        every :data:`SLICE` s (``block``: the real wait for that long)."""
        me = threading.get_ident()
        deadline = None if timeout is None else self.monotonic() + max(0.0, timeout)
        with self._lock:
            self._waits[me] = (deadline, answered)
        try:
            while not answered():
                left = SLICE if deadline is None else deadline - self.monotonic()
                if left <= 0:
                    return
                block(min(left, SLICE))
        finally:
            with self._lock:
                del self._waits[me]

    # The jumps.

    def _advance(self) -> None:
        while not self._stopping.wait(SETTLE):
            target = self._next_deadline()
            if target is None:
                continue
            seen = self._blocked()
            if seen is None:
                continue
            time.sleep(SETTLE)
            if self._next_deadline() != target or self._blocked() != seen:
                continue
            with self._lock:
                skip = target - self.monotonic()
                if skip > 0:
                    self._offset += skip
                    self.jumps += 1
                    self.skipped += skip
            with self._jumped:
                self._jumped.notify_all()

    def _next_deadline(self) -> float | None:
        """The nearest deadline of the waits on this clock, unless one is answered."""
        with self._lock:
            waits = list(self._waits.values())
        if any(answered() for _deadline, answered in waits):
            return None
        return min((d for d, _answered in waits if d is not None), default=None)

    def _blocked(self) -> tuple[Any, ...] | None:
        """What each watched thread waits in and its CPU time, when every one is blocked
        (on this clock, or with no timeout) and not ready to run; None otherwise."""
        with self._lock:
            on_clock = set(self._waits)
        frames = sys._current_frames()
        seen = []
        for thread in threading.enumerate():
            if thread is self._runner or thread in self._unwatched:
                continue
            frame = None if thread.ident is None else frames.get(thread.ident)
            if frame is None:  # starting (its starter waits for it) or ending
                return None
            if thread.ident in on_clock:  # it looks again every SLICE: answered() tells
                seen.append((thread.ident, "clock"))
                continue
            if not _blocked_for_good(frame):
                return None
            cpu = _cpu(thread.native_id)
            if cpu is None:
                return None
            seen.append((thread.ident, id(frame), frame.f_lineno, cpu))
        return tuple(seen)


def _blocked_for_good(frame: Any) -> bool:
    """Whether a thread's innermost Python frame blocks it until another thread acts."""
    if frame.f_code not in _BLOCKING:
        return False
    timeout = frame.f_locals.get("timeout")
    return timeout is None or timeout == -1  # Condition.wait, a join: no timeout


def _cpu(native_id: int | None) -> tuple[str, str] | None:
    """A thread's scheduler state and CPU time (None: it is running or ready to run)."""
    task = Path(f"/proc/self/task/{native_id}")
    try:
        stat = (task / "stat").read_text()
        used = (task / "schedstat").read_text().split()[0]
    except OSError:
        return ("gone", "")
    state = stat[stat.rindex(")") + 2]
    if state == "R":
        return None
    return state, used
