"""Merging a user's plan-environment into the one of new templates (plan update)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Set
from typing import Any

from tripleo_flow.core.plan import planenv, userenvs

#: Keys whose values are the user's and always survive an update.
USER_KEYS = ("parameter_defaults", "passwords")


def _path(entry: Any) -> str | None:
    return entry.get("path") if isinstance(entry, Mapping) else None


def merge_for_update(
    old_env: Mapping[str, Any],
    new_env_data: bytes | None,
    plan: str,
    available: Set[str],
) -> tuple[dict[str, Any], list[str]]:
    """The plan-environment after an update, and the environments dropped.

    The new templates' plan-environment (or the old one when the templates have
    none) gives the structure; the user's parameter values and passwords win.
    ``available`` holds every file the plan has after the update, the files its
    j2 templates render to included (:func:`planenv.available_files`).

    Environments keep their order: first the templates' own (those of the new
    plan-environment or, when the templates have none, the default resource
    registry), in the templates' order, then the others of the user's selection
    in the user's order; ``{data: ...}`` entries are kept as they are. A path
    that no longer exists is dropped.
    """
    if new_env_data is None:
        env = copy.deepcopy(dict(old_env))
        base = planenv.default_plan_environment(plan, plan_files=available)["environments"]
    else:
        env = planenv.parse_plan_environment(new_env_data, "plan-environment.yaml")
        base = env.get("environments") or []
    env["name"] = plan
    for key in USER_KEYS:
        merged = dict(env.get(key) or {})
        merged.update(old_env.get(key) or {})
        env[key] = merged
    kept: list[Any] = []
    seen: set[str] = set()
    for entry in base:
        path = _path(entry)
        if path is not None and path in available and path not in seen:
            kept.append({"path": path})
            seen.add(path)
    dropped: list[str] = []
    for entry in old_env.get("environments") or []:
        path = _path(entry)
        if path is None:
            kept.append(copy.deepcopy(entry))
        elif path in seen:
            continue
        elif path in available:
            kept.append({"path": path})
            seen.add(path)
        else:
            dropped.append(path)
    env["environments"] = userenvs.user_last(kept)
    return env, dropped
