"""Merging a user's plan-environment into the one of new templates (plan update)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Set
from typing import Any

from tripleo_flow.core import planenv

#: Keys whose values are the user's and always survive an update.
USER_KEYS = ("parameter_defaults", "passwords")


def merge_for_update(
    old_env: Mapping[str, Any],
    new_env_data: bytes | None,
    plan: str,
    available: Set[str],
) -> tuple[dict[str, Any], list[str]]:
    """The plan-environment after an update, and the environments dropped.

    The new templates' plan-environment (or the old one when the templates have
    none) gives the structure; the user's parameter values and passwords win;
    the user's environment selection is kept for every path that still exists
    in ``available``, ``{data: ...}`` entries are kept as they are.
    """
    if new_env_data is None:
        env = copy.deepcopy(dict(old_env))
    else:
        env = planenv.parse_plan_environment(new_env_data, "plan-environment.yaml")
    env["name"] = plan
    for key in USER_KEYS:
        merged = dict(env.get(key) or {})
        merged.update(old_env.get(key) or {})
        env[key] = merged
    kept: list[Any] = []
    dropped: list[str] = []
    seen: set[str] = set()
    for entry in old_env.get("environments") or []:
        path = entry.get("path") if isinstance(entry, Mapping) else None
        if path is None:
            kept.append(copy.deepcopy(entry))
        elif path in available:
            kept.append({"path": path})
            seen.add(path)
        else:
            dropped.append(path)
    for entry in env.get("environments") or []:
        path = entry.get("path") if isinstance(entry, Mapping) else None
        if path is not None and path not in seen and path in available:
            kept.append({"path": path})
            seen.add(path)
    env["environments"] = kept
    return env, dropped
