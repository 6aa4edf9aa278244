"""Bytes sent by a many-object upload, for a ``(done, total)`` progress callback.

An upload in parallel parts (tar chunks on Swift) gives each part a
:class:`CountingReader`; the reader tells the :class:`TransferMeter` how far
into its part the request body has been read.  A part that is sent again (a
retried request) starts again from zero, so no byte is counted twice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from tripleo_flow.common import crashpoints
from tripleo_flow.core.deploy.progress import CountListener


class TransferMeter:
    """Bytes done of ``total`` over parts that report their own position.

    A meter made ``held`` tells its listener nothing until :meth:`release`.
    """

    def __init__(self, total: int, listener: CountListener | None,
                 held: bool = False) -> None:
        self.total = total
        self._listener = listener
        self._held = held
        self._lock = threading.Lock()
        self._positions: dict[Hashable, int] = {}

    @property
    def done(self) -> int:
        with self._lock:
            return sum(self._positions.values())

    def at(self, part: Hashable, position: int) -> None:
        """Part ``part`` has sent ``position`` bytes of its body."""
        with self._lock:
            self._positions[part] = position
            done = sum(self._positions.values())
        self._report(done)

    def add(self, size: int) -> None:
        """``size`` more bytes were written as whole objects (outside any part)."""
        with self._lock:
            self._positions[None] = self._positions.get(None, 0) + size
            done = sum(self._positions.values())
        self._report(done)

    def release(self) -> None:
        """Start telling the listener, first the bytes done so far."""
        with self._lock:
            self._held = False
            done = sum(self._positions.values())
        self._report(done)

    def _report(self, done: int) -> None:
        crashpoints.uploaded(done, self.total)
        if self._listener is not None and not self._held:
            self._listener(min(done, self.total), self.total)

    def part(self, part: Hashable) -> Callable[[int], None]:
        """The position callback of one part."""
        return lambda position: self.at(part, position)


class CountingReader:
    """A file-like view of ``data`` that reports how much of it has been read
    (``http.client`` sends a body with ``read`` in blocks)."""

    def __init__(self, data: bytes, on_read: Callable[[int], None] | None = None) -> None:
        self._data = memoryview(data)
        self._position = 0
        self._on_read = on_read

    def __len__(self) -> int:
        return len(self._data)

    def read(self, size: int = -1) -> bytes:
        end = len(self._data) if size is None or size < 0 else self._position + size
        chunk = bytes(self._data[self._position:end])
        self._position += len(chunk)
        if self._on_read is not None and chunk:
            self._on_read(self._position)
        return chunk
