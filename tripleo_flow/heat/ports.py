"""The loopback port a launched Heat's API listens on: its own, held until Heat binds it.

By default (``[heat] api_port`` unset) every launch takes a free port of its own,
recorded in the heat-dir's ``run.json``, so any number of Heats run at once (two
plans deployed together, parallel schema reads, a Heat an API user left running).
An operator may fix the port instead (``[heat] api_port = 8006``): a launch then
refuses (:class:`~tripleo_flow.exceptions.PortInUse`) when something uses it.

The bind race (a port found free, then taken by another program before Heat binds
it) is closed in two steps:

- :class:`PortHold` keeps a socket bound to the port, with ``SO_REUSEADDR`` and not
  listening, from the moment it is chosen until Heat answers.  On Linux a socket
  that also sets ``SO_REUSEADDR`` may still bind and listen there (heat-api does:
  eventlet's ``listen``), while the kernel never hands the port to a ``bind`` to
  port 0 (another launch choosing its port, any program asking for a free one) nor
  to a bind without ``SO_REUSEADDR``.
- What is left (a program that binds that very port with ``SO_REUSEADDR`` and
  listens first) is found, not prevented: readiness asks the API that answers for
  its engines (``GET /services``), and an API not listing the engines this launch
  registered is someone else's (:class:`PortTaken`).  The launch then tears down
  and starts again on a new free port, up to :data:`ATTEMPTS` times; on a fixed
  port it refuses.

heat-api listens with ``SO_REUSEPORT`` too (eventlet's default): two Heats started
at once on one fixed port both listen there, and the kernel splits the requests
between them (each launch's readiness may see its own Heat, so both "succeed" and
their clients talk to either database).  A fixed port is therefore also locked
(:data:`LOCK_DIR`, ``flock``) from its check until its Heat is ready: a second
launch on it at the same time is refused; once a Heat listens there, the hold's
bind fails (no ``SO_REUSEPORT`` on it) and later launches are refused too.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import socket
import tempfile
from collections.abc import Callable
from typing import TypeVar

from tripleo_flow import exceptions

LOG = logging.getLogger(__name__)
T = TypeVar("T")

#: Launches on a new free port after the API's port was found taken by another.
ATTEMPTS = 3
#: Where the lock files of fixed ports are (``tripleo-flow-heat-port-<port>.lock``).
LOCK_DIR = tempfile.gettempdir()


class PortTaken(Exception):
    """Another program listens on the port this launch chose for Heat's API."""

    def __init__(self, host: str, port: int, detail: str) -> None:
        super().__init__(f"{host}:{port} is answered by another program ({detail})")
        self.host = host
        self.port = port


class PortHold:
    """A port on ``host`` kept from other programs until :meth:`close` (see the module
    docstring); ``port`` None or 0 chooses a free one, else that port or
    :class:`~tripleo_flow.exceptions.PortInUse`."""

    def __init__(self, host: str, port: int | None = None) -> None:
        self.host = host
        self._lock = _lock_fixed(host, port) if port else None
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port or 0))
        except OSError as exc:
            sock.close()
            self._unlock()
            if exc.errno == errno.EADDRINUSE:
                raise exceptions.PortInUse(host, int(port or 0)) from exc
            raise exceptions.HeatError(f"Cannot take port {host}:{port or 0}: {exc}") from exc
        self._sock: socket.socket | None = sock
        self.port = int(sock.getsockname()[1])

    def close(self) -> None:
        """Let the port go (once Heat listens there, or the launch failed)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def __enter__(self) -> PortHold:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _lock_fixed(host: str, port: int) -> int | None:
    """Lock fixed ``port`` against other launches (the file descriptor), or raise
    :class:`~tripleo_flow.exceptions.PortInUse`; None when the lock file cannot be
    opened (another user's: the bind check still applies)."""
    try:
        fd = os.open(os.path.join(LOCK_DIR, f"tripleo-flow-heat-port-{port}.lock"),
                     os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            raise exceptions.PortInUse(host, port) from exc
        return None
    return fd


class Holds:
    """The ports one launch on ``host`` holds until it ends (:meth:`launching`)."""

    def __init__(self, host: str) -> None:
        self.host = host
        self._held: list[PortHold] | None = None

    def take(self, port: int | None = None) -> int:
        """``port`` (None: a free one), held until the launch in progress ends; outside
        a launch, a port free now."""
        hold = PortHold(self.host, port)
        if self._held is None:
            hold.close()
        else:
            self._held.append(hold)
        return hold.port

    def launching(self, fixed: int | None, launch: Callable[[int], T], what: object) -> T:
        """``launch(port)`` with its API on ``fixed`` or a free port, every port it takes
        held until it returns; again on another free port when the chosen one turns out
        taken (:class:`PortTaken`), up to :data:`ATTEMPTS` times.

        :param what: what is launched, for the log
        :raises PortInUse: ``fixed`` is taken, or every attempt's port was
        """
        for attempt in range(1, ATTEMPTS + 1):
            self._held = []
            try:
                return launch(self.take(fixed))
            except PortTaken as exc:
                if fixed or attempt == ATTEMPTS:
                    raise exceptions.PortInUse(exc.host, exc.port) from exc
                LOG.warning("%s: launching %s again on another port.", exc, what)
            finally:
                for hold in self._held:
                    hold.close()
                self._held = None
        raise AssertionError("unreachable")
