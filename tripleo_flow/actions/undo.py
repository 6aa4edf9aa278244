"""Putting a plan's objects back from an action's persisted result.

Actions that overwrite or add objects return ``{"backup": {name: base64},
"created": [names]}``; their revert calls :func:`restore_objects`, which
writes the backed-up content back and removes what the action added.  It does
nothing when the plan is gone or the result holds no backup, so running it
twice is safe.
"""

from __future__ import annotations

from typing import Any

from tripleo_flow.actions.base import ActionContext, decode_blobs
from tripleo_flow.plans.plan import PlanRepository


def restore_objects(context: ActionContext, plan: str, result: Any) -> None:
    if not isinstance(result, dict) or "backup" not in result:
        return
    if not PlanRepository(context.store).exists(plan):
        return
    with context.locks.hold(plan):
        backup = decode_blobs(result["backup"])
        if backup:
            context.store.put_objects(plan, backup)
        context.store.delete_objects(plan, result.get("created", []))
