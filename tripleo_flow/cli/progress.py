"""Progress of long work: a bar on a terminal, plain lines otherwise.

Commands hand :class:`Progress` counts (``update``) and messages (``note``);
whether a person or a log reads them decides the look, never the command.
"""

from __future__ import annotations

import shutil
from typing import TextIO

BAR_WIDTH = 24


def step_of(done: int, total: int, step: int) -> int:
    """Which ``step``-percent step ``done`` of ``total`` has reached (the last one when
    done, or when there is nothing to do)."""
    if total <= 0 or done >= total:
        return 100 // step
    return max(0, done) * 100 // total // step


def render_bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    """``[#########---------------]`` for ``done`` of ``total`` (an empty bar for 0 of 0)."""
    filled = 0 if total <= 0 else min(width, max(0, done) * width // total)
    return "[" + "#" * filled + "-" * (width - filled) + "]"


class Progress:
    """One line that redraws itself on a terminal; one line per change elsewhere."""

    def __init__(self, stream: TextIO, label: str, tty: bool | None = None,
                 plain_step: int = 0) -> None:
        """:param plain_step: without a terminal, print a line only each time another
            ``plain_step`` percent is done (and at the end); 0 prints every change."""
        self.stream = stream
        self.label = label
        self.tty = stream.isatty() if tty is None else tty
        self.plain_step = plain_step
        self._line = ""
        self._last_plain = ""
        self._last_step = -1

    def _columns(self) -> int:
        return shutil.get_terminal_size((80, 24)).columns

    def update(self, done: int, total: int, status: str = "",
               share: float | None = None) -> None:
        """Show ``done`` of ``total`` with a short status; the bar is drawn from
        ``share`` (0..1) when given (a total that grows would draw it backwards)."""
        text = f"{self.label} {done}/{total}" + (f" {status}" if status else "")
        if share is not None:
            text = f"{share:.0%} " + text
        if self.tty:
            bar = (render_bar(done, total) if share is None
                   else render_bar(round(share * 1000), 1000))
            line = f"{bar} {text}"[: self._columns() - 1]
            self.stream.write("\r" + line.ljust(len(self._line)))
            self._line = line
        elif text != self._last_plain and self._plain_due(done, total):
            self.stream.write(text + "\n")
            self._last_plain = text
        self.stream.flush()

    def _plain_due(self, done: int, total: int) -> bool:
        if self.plain_step <= 0:
            return True
        step = step_of(done, total, self.plain_step)
        if step <= self._last_step:
            return False
        self._last_step = step
        return True

    def note(self, message: str) -> None:
        """A message above the bar (an event, a warning)."""
        if self.tty and self._line:
            self.stream.write("\r" + " " * len(self._line) + "\r")
        self.stream.write(message + "\n")
        if self.tty and self._line:
            self.stream.write(self._line)
        self.stream.flush()

    def finish(self) -> None:
        """Leave the last bar on screen and end its line."""
        if self.tty and self._line:
            self.stream.write("\n")
            self._line = ""
        self.stream.flush()
