"""Read-modify-write of a plan-environment under the plan's lock.

The actions that change ``plan-environment.yaml`` record, per changed key of one
section (``parameter_defaults``, ``passwords`` ...), the value it had before or
that it was absent; their revert puts exactly those keys back, so a revert
never undoes a concurrent writer's change to other keys.

Secret values (every value of ``passwords``, parameters with secret names:
:func:`tripleo_flow.common.secret_masking.is_secret_name`) are not copied into the
record, which is persisted in the executions database: a *sealed* record names
the changed keys and the plan-environment version that holds their old values
(plan containers keep versions), and the revert reads them from there.  Every
action that replaces the plan-environment points at a version the same way
(:func:`previous_version`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.common import secret_masking
from tripleo_flow.core.plan import planenv, secrets
from tripleo_flow.plans.plan import PLAN_ENV, PlanRepository


def edit_section(
    context: ActionContext,
    plan: str,
    section: str,
    change: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """Apply ``change`` to ``env[section]`` and save; return the undo record.

    ``change`` gets a copy of the section and returns its new content.
    The undo record is ``{"section", "previous": {key: old}, "absent": [keys]}``;
    the old values of secret keys stay in the plan store: ``sealed`` lists them
    and ``version`` names the plan-environment version holding them.
    """
    repo = PlanRepository(context.store)
    repo.require(plan)
    with context.hold_plan(plan):
        env = repo.environment(plan)
        old = dict(env.get(section) or {})
        new = change(copy.deepcopy(old))
        changed = {k for k in set(old) | set(new) if old.get(k, _ABSENT) != new.get(k, _ABSENT)}

        def make_record() -> dict[str, Any]:
            had = sorted(k for k in changed if k in old)
            sealed = [k for k in had if _secret(section, k)]
            made: dict[str, Any] = {
                "section": section, "previous": {k: old[k] for k in had if k not in sealed},
                "absent": sorted(k for k in changed if k not in old)}
            if sealed:
                made["sealed"] = sealed
            return made

        # Kept before the write: a re-run (the task resumed after a crash) finds the
        # section changed already and gets this record, not one made from the new values.
        record = context.undo_record(make_record)
        if changed:
            env[section] = new
            repo.save_environment(plan, env)
        if record.get("sealed") and "version" not in record:
            sealed = record["sealed"]

            def holds(data: bytes) -> bool:
                held = dict(planenv.parse_plan_environment(data, PLAN_ENV).get(section) or {})
                return all(held.get(k, _ABSENT) == old[k] for k in sealed)

            def find() -> str:
                try:
                    return previous_version(repo, plan, holds)
                except exceptions.PlanStoreError:
                    if changed:
                        env[section] = old
                        repo.save_environment(plan, env)
                    raise

            record = {**record, "version": context.undo_record(find, part="version")}
    return record


def _secret(section: str, key: str) -> bool:
    return section in secrets.SECRET_SECTIONS or secret_masking.is_secret_name(key)


def previous_version(repo: PlanRepository, plan: str, holds: Callable[[bytes], bool]) -> str:
    """The id of the plan-environment version just before the newest one (the content
    a write, under the plan's lock, just replaced), checked with ``holds``.

    An undo record names this version instead of copying secrets.  Raises
    :class:`~tripleo_flow.exceptions.PlanStoreError` when no stored version holds
    it (the caller then puts the content back itself).
    """
    versions = repo.environment_versions(plan)
    if len(versions) >= 2 and versions[0].is_latest:
        candidate = versions[1].version_id
        if holds(repo.environment_version(plan, candidate)):
            return candidate
    raise exceptions.PlanStoreError(
        f"No stored version of plan {plan!r}'s {PLAN_ENV} holds its content before this "
        "change, so it could not be undone without copying secrets into the executions "
        "database; nothing was changed. Check that the plan store keeps versions.")


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
