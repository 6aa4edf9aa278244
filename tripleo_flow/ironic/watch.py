"""One poller per Ironic for every node this process waits on.

A node workflow waits on many nodes at once (``with-items``).  Each waiter
polling its own node costs Ironic one request per node per tick, and a
single-process Ironic serves them one after the other, so the waits slow each
other down.  A :class:`NodeWatcher` polls instead: one ``GET /v1/nodes/{id}``
when one node is awaited, one listing of every node (a few fields) when
several are, then wakes the waiters whose node changed.  The delay starts short
(fake and virtual hardware finish in well under a second), grows to
``max_interval`` (real hardware takes minutes), and starts short again when a
new waiter arrives.  :meth:`NodeWatcher.read` asks for a node's fields as the next
poll finds them, at once: concurrent reads (a ``with-items`` task over nodes already
in the state it wants) share one listing.

No poll goes out while a state change this process asked for is on its way
(:meth:`NodeWatcher.requesting`, up to ``max_interval``): a single-process Ironic
would serve the poll instead of that request, and find that node still moving.  The
waiters of a ``with-items`` task then share one poll per batch of its requests: at
the short delay (every new waiter resets it) they took one listing every ~80 ms, a
fifth of Ironic's time, throughout the task.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.ironic.client import FAILED_STATES, IronicClient

#: The fields a poll reads: enough to decide, and the node's result afterwards.
FIELDS = ("uuid", "name", "provision_state", "target_provision_state", "last_error",
          "power_state", "properties", "inspection_finished_at")


@dataclass
class _Waiter:
    ident: str
    node: dict[str, Any] | None = None
    error: BaseException | None = None
    seen: int = 0
    polls: int = 0


class NodeWatcher:
    """Waits for nodes of one Ironic (see the module docstring); thread-safe."""

    def __init__(self, client: IronicClient, min_interval: float = 0.02,
                 max_interval: float = 2.0) -> None:
        self.client = client
        self.min_interval = min_interval
        self.max_interval = max_interval
        self._cond = threading.Condition()
        self._waiters: list[_Waiter] = []
        self._poller: threading.Thread | None = None
        self._delay = min_interval
        self._kick = False  # a read awaits the next poll: no sleep before it
        self._asking = 0  # state changes of this process on their way to Ironic

    @contextlib.contextmanager
    def requesting(self) -> Iterator[None]:
        """Around a request that moves a node: no poll goes out meanwhile."""
        with self._cond:
            self._asking += 1
        try:
            yield
        finally:
            with self._cond:
                self._asking -= 1
                self._cond.notify_all()

    def wait_for(self, ident: str, wanted: str, timeout: float,
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Block until node ``ident`` rests in ``wanted``; return its :data:`FIELDS`.

        :raises IronicError: it ended in a failed state (with Ironic's last_error), or
            was still moving after ``timeout`` seconds.
        """
        waiter = _Waiter(ident)
        deadline = time.monotonic() + timeout
        reported = None
        with self._cond:
            self._waiters.append(waiter)
            self._kick = self._kick or not wanted  # a read: the next poll at once
            self._delay = self.min_interval
            self._cond.notify_all()  # a poller asleep for a read (``_kick``) starts now
            if self._poller is None:
                self._poller = threading.Thread(target=self._poll, name="ironic-watch",
                                                daemon=True)
                self._poller.start()
            try:
                while True:
                    self._cond.wait_for(lambda: waiter.polls > waiter.seen,
                                        timeout=max(0.0, deadline - time.monotonic()))
                    waiter.seen = waiter.polls
                    if waiter.error is not None:
                        raise waiter.error
                    node = waiter.node
                    if node is not None:
                        state = node.get("provision_state")
                        if state != reported and progress is not None:
                            progress(str(state))
                        reported = state
                        if not wanted or _done(ident, node, wanted):
                            return node
                    if time.monotonic() >= deadline:
                        raise exceptions.IronicError(
                            f"Node {ident!r} is still {reported!r} after {timeout:g} s "
                            f"(waiting for {wanted!r}); raise [ironic] wait_timeout if "
                            "the hardware is just slow.")
            finally:
                self._waiters.remove(waiter)

    def read(self, ident: str, timeout: float) -> dict[str, Any]:
        """Node ``ident``'s :data:`FIELDS` as the next poll finds them (asked for now):
        reads made at the same time share that poll's one listing.

        :raises NodeNotFound: when Ironic has no such node.
        """
        return self.wait_for(ident, "", timeout)

    def _poll(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: not self._asking, timeout=self.max_interval)
                waiting = list(self._waiters)
                self._kick = False  # this poll serves the reads asked for so far
                if not waiting:
                    self._poller = None
                    return
            found: dict[str, dict[str, Any]] = {}
            errors: dict[str, BaseException] = {}
            try:
                if len(waiting) == 1:
                    node = self.client.get_node(waiting[0].ident, FIELDS)
                    found = {waiting[0].ident: node}
                else:
                    for node in self.client.list_nodes(FIELDS):
                        found[node["uuid"]] = node
                        if node.get("name"):
                            found[node["name"]] = node
                    errors = {w.ident: exceptions.NodeNotFound(w.ident)
                              for w in waiting if w.ident not in found}
            except exceptions.TripleoFlowError as exc:
                errors = {w.ident: exc for w in waiting}
            with self._cond:
                for waiter in waiting:
                    waiter.node = found.get(waiter.ident, waiter.node)
                    waiter.error = errors.get(waiter.ident)
                    waiter.polls += 1
                self._cond.notify_all()
                delay = self._delay
                self._delay = min(self._delay * 1.6, self.max_interval)
                self._cond.wait_for(lambda: self._kick, timeout=delay)


def _done(ident: str, node: dict[str, Any], wanted: str) -> bool:
    """Whether ``node`` rests in ``wanted``; raises when it rests in a failed state."""
    state, target = node.get("provision_state"), node.get("target_provision_state")
    if state == wanted and not target:
        return True
    # A failed state keeps its target ('clean failed' -> manageable); enroll is a
    # failure only when nothing moves the node any more.
    if state in FAILED_STATES and (state != "enroll" or not target):
        raise exceptions.IronicError(
            f"Node {ident!r} ended in {state!r} instead of {wanted!r}: "
            f"{node.get('last_error') or 'Ironic gave no reason'}.")
    return False


_WATCHERS: dict[str, NodeWatcher] = {}
_LOCK = threading.Lock()


def watcher(endpoint: str) -> NodeWatcher:
    """The process' watcher of the Ironic at ``endpoint``."""
    with _LOCK:
        found = _WATCHERS.get(endpoint)
        if found is None:
            found = _WATCHERS[endpoint] = NodeWatcher(IronicClient(endpoint))
        return found
