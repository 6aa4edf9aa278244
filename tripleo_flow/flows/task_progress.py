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
from typing import Any

from tripleo_flow.actions.base import ActionContext
from tripleo_flow.core.progress import (
    NodeProgress,
    PlanProgress,
    Progress,
    StackProgress,
    ValidationProgress,
)

Report = Callable[[dict[str, Any], Progress], None]


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
    if isinstance(progress, PlanProgress):
        return details(progress.stage, progress.done, progress.total)
    if isinstance(progress, StackProgress):
        return {**details("stack", progress.complete, progress.total, progress.status),
                "share": round(progress.fraction(), 4)}
    if isinstance(progress, NodeProgress):
        # One node of a with-items task changed provision state.
        return details("node", 0, 1, f"{progress.node}: {progress.state}")
    if isinstance(progress, ValidationProgress):
        # One validation of a with-items task started or ended (status per host).
        return details("validation", 0, 1, f"{progress.validation}: {progress.status}")
    raise TypeError(f"not a progress report: {progress!r}")


def with_progress(context: Any, report: Report) -> Any:
    """``context`` with a reporter calling ``report`` (other contexts as given)."""
    if not isinstance(context, ActionContext):
        return context

    def reporter(progress: Progress) -> None:
        report(stored(progress), progress)

    return dataclasses.replace(context, reporter=reporter)
