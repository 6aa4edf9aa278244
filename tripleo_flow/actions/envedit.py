"""Read-modify-write of a plan-environment under the plan's lock.

The actions that change ``plan-environment.yaml`` record, per changed key of one
section (``parameter_defaults``, ``passwords`` ...), the value it had before or
that it was absent; their revert puts exactly those keys back, so a revert
never undoes a concurrent writer's change to other keys.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from tripleo_flow.actions.base import ActionContext
from tripleo_flow.plans.plan import PlanRepository


def edit_section(
    context: ActionContext,
    plan: str,
    section: str,
    change: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """Apply ``change`` to ``env[section]`` and save; return the undo record.

    ``change`` gets a copy of the section and returns its new content.
    The undo record is ``{"section", "previous": {key: old}, "absent": [keys]}``.
    """
    repo = PlanRepository(context.store)
    repo.require(plan)
    with context.locks.hold(plan):
        env = repo.environment(plan)
        old = dict(env.get(section) or {})
        new = change(copy.deepcopy(old))
        changed = {k for k in set(old) | set(new) if old.get(k, _ABSENT) != new.get(k, _ABSENT)}
        if changed:
            env[section] = new
            repo.save_environment(plan, env)
    return {
        "section": section,
        "previous": {k: old[k] for k in sorted(changed) if k in old},
        "absent": sorted(k for k in changed if k not in old),
    }


def undo_section(context: ActionContext, plan: str, undo: Mapping[str, Any]) -> None:
    """Put back the keys an :func:`edit_section` changed. Safe to run twice."""
    repo = PlanRepository(context.store)
    if not repo.exists(plan):
        return
    with context.locks.hold(plan):
        env = repo.environment(plan)
        section = dict(env.get(undo["section"]) or {})
        section.update(undo["previous"])
        for key in undo["absent"]:
            section.pop(key, None)
        env[undo["section"]] = section
        repo.save_environment(plan, env)


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()
