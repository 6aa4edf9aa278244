"""Server-sent events of an execution, built by following its stored state.

:func:`follow` polls the execution and its tasks through the Python API and
yields one ``task`` event per task state change or undo (and per progress its action
reports while it runs: ``progress``, e.g. stack resources complete of total)
and a last ``execution`` event when the execution has ended, so it works for executions run by any
process.  :func:`format_event` is the SSE wire format (pure).

A stream holds a request thread of the server until its execution ends, so
:class:`StreamSlots` keeps ``[api] max_event_streams`` of them at most (always
fewer than the threads), and a stream sends a keepalive comment every
:data:`STREAM_KEEPALIVE` seconds: once its client has left, a write fails within
two of them and the stream ends (:func:`follow` also stops when ``gone()``, which
is waitress's ``waitress.client_disconnected``, says so), freeing the thread.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.http import media

if TYPE_CHECKING:
    from tripleo_flow.client import Client

#: Seconds between keepalive comments of an HTTP event stream.
STREAM_KEEPALIVE = 1.0
ENDED = frozenset({"SUCCESS", "ERROR", "CANCELLED", "INTERRUPTED", "PAUSED"})
#: States that stop without a recorded end: the process died, or a ``pause`` command
#: stopped the execution until it is resumed.
STOPPED = frozenset({"INTERRUPTED", "PAUSED"})


def format_event(event: str, data: Any, event_id: int | None = None,
                 redact: Callable[[bytes], bytes] = lambda data: data) -> bytes:
    """One SSE message: ``id``, ``event`` and a one-line JSON ``data`` field (passed
    through ``redact``)."""
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append(f"event: {event}")
    head = ("\n".join(lines) + "\ndata: ").encode()
    return head + redact(media.dumps(data, sort_keys=True)) + b"\n\n"


def ended(execution: Any, tasks: Any = ()) -> bool:
    """Whether an execution is over (its end was recorded, its process died, or it is
    paused until resumed: not while its running tasks still end, ``pausing``, nor while
    one of ``tasks`` still runs in a paused execution: an asynchronous action's
    completion can still come, and makes that task end, as in Mistral)."""
    if getattr(execution, "pausing", False):
        return False
    if execution.state == "PAUSED" and any(task.state == "RUNNING" for task in tasks):
        return False
    return execution.state in ENDED and (execution.finished_at is not None
                                         or execution.state in STOPPED)


class StreamSlots:
    """At most ``limit`` event streams open at once."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._free = threading.BoundedSemaphore(limit)

    def open(self, messages: Iterator[bytes]) -> _Stream:
        """``messages`` as a WSGI body that holds a slot until it is closed.

        :raises TooManyEventStreams: every slot is taken
        """
        if not self._free.acquire(blocking=False):
            raise exceptions.TooManyEventStreams(self.limit)
        return _Stream(messages, self._free.release)


class _Stream:
    """An iterable WSGI body whose ``close()`` (called by the server when the response
    ends or the client leaves, even before the first message) frees its slot once."""

    def __init__(self, messages: Iterator[bytes], release: Callable[[], None]) -> None:
        self._messages = messages
        self._release: Callable[[], None] | None = release

    def __iter__(self) -> Iterator[bytes]:
        return self._messages

    def close(self) -> None:
        close = getattr(self._messages, "close", None)
        if close is not None:
            close()
        release, self._release = self._release, None
        if release is not None:
            release()


def follow(client: Client, execution_id: str, interval: float = 0.2, keepalive: float = 15.0,
           sleep: Callable[[float], None] = time.sleep,
           redact: Callable[[bytes], bytes] = lambda data: data,
           gone: Callable[[], bool] = lambda: False) -> Iterator[bytes]:
    """SSE messages for ``execution_id`` until it ends (call get_execution first for 404),
    or until ``gone()`` says the client has left."""
    seen: dict[str, tuple[Any, ...]] = {}
    sequence = 0
    quiet = 0.0
    while not gone():
        execution = client.executions.get(execution_id)
        tasks = client.tasks.list(execution_id)
        for task in tasks:
            key = (task.state, task.started_at, task.finished_at,
                   json.dumps(task.progress, sort_keys=True), task.reverted)
            if seen.get(task.name) == key:
                continue
            seen[task.name] = key
            sequence += 1
            quiet = 0.0
            yield format_event("task", {"execution_id": execution_id,
                                        **media.task(task)}, sequence, redact)
        if ended(execution, tasks):
            sequence += 1
            yield format_event("execution", media.execution(execution), sequence, redact)
            return
        if quiet >= keepalive:
            quiet = 0.0
            yield b": keepalive\n\n"
        sleep(interval)
        quiet += interval
