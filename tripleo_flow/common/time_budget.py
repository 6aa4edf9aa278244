"""A wall-clock budget for work whose cost a hostile input sets: template rendering
and workflow expressions.

A plan template or a workbook comes from whoever can write to the HTTP API, and
``{% for i in range(100000) %}{% for j in range(100000) %}`` builds nothing large
(the size limits never trip) yet runs for hours in a server thread.  The code that
evaluates such input calls :func:`check` at every step that can repeat (a loop
iteration, a call, a filter, a YAQL function), and :func:`limit` gives the steps
of one render a deadline: the first step after it raises :class:`TimeLimitExceeded`,
which frees the thread.  The deadline is per thread, so one shared evaluator (the
workflow expressions' sandbox) serves every thread; an inner :func:`limit` never
extends an outer one.  Outside :func:`limit`, :func:`check` does nothing.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator

_local = threading.local()


class TimeLimitExceeded(Exception):
    """The work ran past its deadline; ``str()`` names the limit and its option.

    A signal inside the core, like jinja2's ``SecurityError``: the renderer and the
    expression evaluator translate it into their own error
    (:class:`~tripleo_flow.exceptions.InvalidTemplate`,
    :class:`~tripleo_flow.exceptions.ExpressionError`)."""

    def __init__(self, seconds: float, option: str) -> None:
        super().__init__(f"it ran for over {seconds:g} s ({option})")
        self.seconds = seconds
        self.option = option


@contextlib.contextmanager
def limit(seconds: float | None, option: str) -> Iterator[None]:
    """Give the steps run by this thread inside the block ``seconds`` (None or 0: no
    limit of its own, an outer one still holds).

    :param option: the option that sets ``seconds``, named in the error.
    """
    outer = getattr(_local, "deadline", None)
    if not seconds:
        yield
        return
    own = (time.monotonic() + seconds, seconds, option)
    _local.deadline = outer if outer is not None and outer[0] <= own[0] else own
    try:
        yield
    finally:
        _local.deadline = outer


def check() -> None:
    """Raise :class:`TimeLimitExceeded` when this thread's deadline has passed."""
    deadline = getattr(_local, "deadline", None)
    if deadline is not None and time.monotonic() > deadline[0]:
        raise TimeLimitExceeded(deadline[1], deadline[2])


def checked_iter(items: Iterable[object]) -> Iterator[object]:
    """``items``, calling :func:`check` before each one."""
    for item in items:
        check()
        yield item


__all__ = ["TimeLimitExceeded", "check", "checked_iter", "limit"]
