"""SIGINT and SIGTERM as a failure of the running task, so a flow reverts.

Python turns Ctrl-C into ``KeyboardInterrupt``, which TaskFlow does not catch
(it captures ``Exception`` only): the engine stops dead, nothing reverts.
:class:`Interruption` instead raises :class:`~tripleo_flow.exceptions.Interrupted`
(an ``Exception``) *inside the task that is running*, where TaskFlow records it
as that task's failure and reverts the flow.  A signal that arrives between two
tasks is kept and raised when the next task starts; signals that arrive once
the error was raised (while the flow reverts) are noted and ignored, so a
second Ctrl-C cannot cut a revert short.  Handlers are installed only in the
main thread (the only one Python delivers signals to) and restored after.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import signal
import threading
from collections.abc import Iterable, Iterator
from types import FrameType
from typing import Any

from tripleo_flow import exceptions

LOG = logging.getLogger(__name__)
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interruption:
    """Turns SIGINT/SIGTERM into :class:`Interrupted` in the running task of a flow.

    :param what: what is interrupted, for the message ("Deployment of plan 'oc'").
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self.received: int | None = None
        self._task: str | None = None
        self._raised = False

    def _error(self) -> exceptions.Interrupted:
        self._raised = True
        name = signal.Signals(self.received or signal.SIGINT).name
        return exceptions.Interrupted(self.what, name, self._task)

    def task_started(self, name: str) -> None:
        """Called as a task starts: raise a signal that arrived between tasks."""
        self._task = name
        if self.received is not None and not self._raised:
            raise self._error()

    def task_ended(self) -> None:
        self._task = None

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
        if self._raised:
            LOG.warning("%s received: still reverting, please wait.",
                        signal.Signals(signum).name)
            return
        if self._task is not None:
            raise self._error()

    def guard(self, atoms: Iterable[Any]) -> None:
        """Hook the tasks of a flow (TaskFlow's ``pre_execute``/``post_execute``)."""
        for atom in atoms:
            atom.pre_execute = functools.partial(self.task_started, atom.name)
            atom.post_execute = self.task_ended

    @contextlib.contextmanager
    def installed(self) -> Iterator[Interruption]:
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


__all__ = ["Interruption"]
