"""Read-modify-write of a plan-environment under the plan's lock.

The actions that change ``plan-environment.yaml`` record, per changed key of one
section (``parameter_defaults``, ``passwords`` ...), the value it had before or
that it was absent; their revert puts exactly those keys back, so a revert
never undoes a concurrent writer's change to other keys.

Secret values (passwords) are not copied into the record, which is persisted
in the executions database: a *sealed* record names the changed keys and the
plan-environment version that holds their old values (plan containers keep
versions), and the revert reads them from there.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from typing import Any

from tripleo_flow.actions.base import ActionContext
from tripleo_flow.core import planenv
from tripleo_flow.plans.plan import PLAN_ENV, PlanRepository

LOG = logging.getLogger(__name__)


def edit_section(
    context: ActionContext,
    plan: str,
    section: str,
    change: Callable[[dict[str, Any]], dict[str, Any]],
    secret: bool = False,
) -> dict[str, Any]:
    """Apply ``change`` to ``env[section]`` and save; return the undo record.

    ``change`` gets a copy of the section and returns its new content.
    The undo record is ``{"section", "previous": {key: old}, "absent": [keys]}``;
    with ``secret``, the old values stay in the plan store: ``previous`` is empty,
    ``sealed`` lists the changed keys that had values and ``version`` names the
    plan-environment version holding them.
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
        had = sorted(k for k in changed if k in old)
        record: dict[str, Any] = {"section": section, "previous": {k: old[k] for k in had},
                                  "absent": sorted(k for k in changed if k not in old)}
        if secret and had:
            version = _version_holding(repo, plan, section, record["previous"])
            if version is not None:
                record.update(previous={}, sealed=had, version=version)
            else:
                LOG.warning("No stored version of plan %s's plan-environment holds the old %s "
                            "values: the undo record keeps them.", plan, section)
    return record


def _version_holding(repo: PlanRepository, plan: str, section: str,
                     values: Mapping[str, Any]) -> str | None:
    """The id of the plan-environment version just before the newest one, when it holds
    ``values`` in ``section`` (checked: a listing may lag behind the write)."""
    versions = repo.environment_versions(plan)
    if len(versions) < 2 or not versions[0].is_latest:
        return None
    candidate = versions[1].version_id
    before = planenv.parse_plan_environment(repo.environment_version(plan, candidate), PLAN_ENV)
    held = dict(before.get(section) or {})
    return candidate if all(held.get(k, _ABSENT) == v for k, v in values.items()) else None


def changed_keys(undo: Mapping[str, Any]) -> list[str]:
    """Every key an :func:`edit_section` changed."""
    return sorted([*undo["previous"], *undo.get("sealed", []), *undo["absent"]])


def undo_section(context: ActionContext, plan: str, undo: Mapping[str, Any]) -> None:
    """Put back the keys an :func:`edit_section` changed. Safe to run twice."""
    repo = PlanRepository(context.store)
    if not repo.exists(plan):
        return
    with context.locks.hold(plan):
        env = repo.environment(plan)
        section = dict(env.get(undo["section"]) or {})
        section.update(undo["previous"])
        if undo.get("sealed"):
            before = planenv.parse_plan_environment(
                repo.environment_version(plan, undo["version"]), PLAN_ENV)
            old = dict(before.get(undo["section"]) or {})
            section.update({k: old[k] for k in undo["sealed"] if k in old})
        for key in undo["absent"]:
            section.pop(key, None)
        env[undo["section"]] = section
        repo.save_environment(plan, env)


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()
