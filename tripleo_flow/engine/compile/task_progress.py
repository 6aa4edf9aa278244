"""What a workbook task's action reports while it runs, as progress details.

Actions report typed values through their :class:`ActionContext`'s reporter (a
plan's check and upload, a stack's resources and events, a node's state, a
validation); :func:`with_progress` gives an action a context whose reporter
turns each one into one stored shape, ``{"stage", "done", "total", "status"}`` (a
stack's with its ``share`` of the work done, 0..1, which never goes down),
and hands both to ``report``: the details are persisted with the task, the
typed value reaches listeners in this process (the CLI's stack events).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol, cast


class Progress(Protocol):
    """A typed progress report: each type owns its stored details (the layer above
    defines the types, the engine only stores what :meth:`stored` gives)."""

    def stored(self) -> dict[str, Any]: ...


Report = Callable[[dict[str, Any], Any], None]


def details(stage: str, done: int, total: int, status: str = "") -> dict[str, Any]:
    return {"stage": stage, "done": done, "total": total, "status": status}


def fraction(report: dict[str, Any]) -> float:
    """``share`` when the report has one (a stack's), else ``done / total``, clamped to
    0..1 (1 when there is nothing to do)."""
    if isinstance(report.get("share"), (int, float)):
        return min(1.0, max(0.0, float(report["share"])))
    total = report["total"]
    return 1.0 if total <= 0 else min(1.0, max(0.0, report["done"] / total))


def stored(progress: Progress) -> dict[str, Any]:
    """The details stored for one typed report."""
    if not callable(getattr(progress, "stored", None)):
        raise TypeError(f"not a progress report: {progress!r}")
    return progress.stored()


def with_progress(context: Any, report: Report) -> Any:
    """``context`` with a reporter calling ``report`` (other contexts as given)."""
    if isinstance(context, type) or not (dataclasses.is_dataclass(context)
                                         and hasattr(context, "reporter")):
        return context

    def reporter(progress: Any) -> None:
        report(stored(progress), progress)

    return dataclasses.replace(cast(Any, context), reporter=reporter)
