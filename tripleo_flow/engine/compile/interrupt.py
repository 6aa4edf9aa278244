"""SIGINT and SIGTERM as a request to stop a workflow run, so that it reverts.

Python turns Ctrl-C into ``KeyboardInterrupt`` in the main thread, which
TaskFlow does not catch (it captures ``Exception`` only), and a workflow's
tasks run in threads of a pool while the main thread waits for them (or, a
task running alone, in the main thread itself, where the exception would cut
the action short).
:class:`StopRequest` therefore only notes a signal; the next task to start
fails with :class:`~tripleo_flow.exceptions.Interrupted` (an ``Exception``),
as does a running task at its next look (a stack's follower calls
:meth:`StopRequest.check` through :meth:`ActionContext.check_stop`), and
TaskFlow reverts the workflow like after any failure.  Once raised, later
signals are noted and ignored, so a second Ctrl-C cannot cut the revert short.
Handlers are installed only in the main thread (the only one Python delivers
signals to) and restored after.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from tripleo_flow import exceptions

LOG = logging.getLogger(__name__)
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """Set by SIGINT/SIGTERM; checked by the tasks of a workflow run.

    :param what: what is stopped, for the message ("Deployment of plan 'oc'").
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self.received: int | None = None
        self._task: str | None = None
        self._raised = False
        self._lock = threading.Lock()

    def check(self, task: str | None = None) -> None:
        """Raise :class:`Interrupted` if a signal arrived (once per run); ``task`` is
        the task starting (else the last one that started)."""
        with self._lock:
            if task is not None:
                self._task = task
            if self.received is None or self._raised:
                return
            self._raised = True
            name = signal.Signals(self.received).name
        raise exceptions.Interrupted(self.what, name, self._task)

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
            LOG.warning("%s received: stopping at the next step, then reverting.",
                        signal.Signals(signum).name)
        elif self._raised:
            LOG.warning("%s received: still reverting, please wait.",
                        signal.Signals(signum).name)

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopRequest]:
        """Handle SIGINT and SIGTERM in this block (a no-op outside the main thread)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {sig: signal.signal(sig, self._handler) for sig in SIGNALS}
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


__all__ = ["StopRequest"]
