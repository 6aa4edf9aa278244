"""Per-plan write locks through tooz.

Swift has no compare-and-swap, so writers of one plan are serialised with a
real lock: tooz's file driver by default (one host), Redis or MySQL when
several hosts share the store (``[plan_store] lock_url``).
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions

if TYPE_CHECKING:
    from tooz import coordination


class PlanLocks:
    """Hands out one named lock per plan; starts its coordinator lazily."""

    def __init__(self, url: str, timeout: float = 120.0) -> None:
        self.url = url
        self.timeout = timeout
        self._coordinator: coordination.CoordinationDriver | None = None
        self._guard = threading.Lock()
        self._leases: dict[str, Any] = {}

    def _coord(self) -> coordination.CoordinationDriver:
        # tooz is imported on the first lock taken: a command that only reads never does.
        from tooz import coordination

        with self._guard:
            if self._coordinator is None:
                member = f"tripleo-flow-{uuid.uuid4()}".encode()
                coord = coordination.get_coordinator(self.url, member)
                try:
                    coord.start(start_heart=True)
                except coordination.ToozError as exc:
                    raise exceptions.BackendUnavailable(
                        f"Cannot reach the lock service {self.url!r}: {exc}"
                    ) from exc
                self._coordinator = coord
            return self._coordinator

    @contextlib.contextmanager
    def hold(self, plan: str, timeout: float | None = None) -> Iterator[None]:
        """Hold ``plan``'s write lock; raise LockTimeout after ``timeout`` s."""
        wait = self.timeout if timeout is None else timeout
        with self._held(f"tripleo-flow-plan-{plan}", wait,
                        lambda: exceptions.LockTimeout(plan, wait)):
            yield

    @contextlib.contextmanager
    def hold_execution(self, execution_id: str, timeout: float | None = None) -> Iterator[None]:
        """Hold the lock of execution ``execution_id`` (one resume at a time, across
        processes; a name no plan lock can take); raise ExecutionLockTimeout after
        ``timeout`` s."""
        wait = self.timeout if timeout is None else timeout
        with self._held(f"tripleo-flow-execution-{execution_id}", wait,
                        lambda: exceptions.ExecutionLockTimeout(execution_id, wait)):
            yield

    @contextlib.contextmanager
    def _held(self, name: str, wait: float,
              timed_out: Callable[[], Exception]) -> Iterator[None]:
        lock = self._coord().get_lock(name.encode())
        if not lock.acquire(blocking=wait):  # type: ignore[arg-type]  # tooz takes seconds
            raise timed_out()
        try:
            yield
        finally:
            lock.release()

    def take_lease(self, key: str) -> bool:
        """Take lock ``key`` without waiting and keep it beyond this call: until
        :meth:`end_lease`, or until this process dies (the lock service frees the
        locks of a dead process).  False when anyone holds it, this process included.

        A lease tells other processes that a long operation (a plan create that
        spans several tasks) is alive.
        """
        lock = self._coord().get_lock(f"tripleo-flow-lease-{key}".encode())
        if not lock.acquire(blocking=False):
            return False
        with self._guard:
            self._leases[key] = lock
        return True

    def end_lease(self, key: str) -> None:
        """Release lease ``key`` (nothing when this process does not hold it)."""
        with self._guard:
            lock = self._leases.pop(key, None)
        if lock is not None:
            lock.release()

    def close(self) -> None:
        with self._guard:
            leases, self._leases = list(self._leases.values()), {}
        for lock in leases:
            lock.release()
        with self._guard:
            if self._coordinator is not None:
                self._coordinator.stop()
                self._coordinator = None
