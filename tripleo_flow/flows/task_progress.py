"""What a workbook task's action reports while it runs, as progress details.

Actions report through listeners in their :class:`ActionContext` extras (a plan's
check and upload, a stack's resources); :func:`with_progress` gives an action a
context whose listeners turn those reports into one shape,
``{"stage", "done", "total", "status"}``, handed to ``report``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tripleo_flow.actions.base import ActionContext
from tripleo_flow.actions.deploy import PROGRESS_LISTENER
from tripleo_flow.actions.nodes import NODE_PROGRESS
from tripleo_flow.actions.plan import PLAN_PROGRESS
from tripleo_flow.actions.validations import VALIDATION_PROGRESS
from tripleo_flow.core.progress import PlanProgress, StackProgress

Report = Callable[[dict[str, Any]], None]


def details(stage: str, done: int, total: int, status: str = "") -> dict[str, Any]:
    return {"stage": stage, "done": done, "total": total, "status": status}


def fraction(report: dict[str, Any]) -> float:
    """``done / total`` clamped to 0..1 (1 when there is nothing to do)."""
    total = report["total"]
    return 1.0 if total <= 0 else min(1.0, max(0.0, report["done"] / total))


def with_progress(context: Any, report: Report) -> Any:
    """``context`` with progress listeners calling ``report`` (other contexts as given)."""
    if not isinstance(context, ActionContext):
        return context

    def on_plan(progress: PlanProgress) -> None:
        report(details(progress.stage, progress.done, progress.total))

    def on_stack(progress: StackProgress) -> None:
        report(details("stack", progress.complete, progress.total, progress.status))

    def on_node(node: str, state: str) -> None:
        # One node of a with-items task changed provision state.
        report(details("node", 0, 1, f"{node}: {state}"))

    def on_validation(validation: str, status: str) -> None:
        # One validation of a with-items task started or ended (status per host).
        report(details("validation", 0, 1, f"{validation}: {status}"))

    return dataclasses.replace(context, extras={
        **context.extras, PLAN_PROGRESS: on_plan, PROGRESS_LISTENER: on_stack,
        NODE_PROGRESS: on_node, VALIDATION_PROGRESS: on_validation})
