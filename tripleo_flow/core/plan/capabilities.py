"""Capabilities: which environments a plan offers, and selecting them.

``capabilities-map.yaml`` groups a plan's environment files::

    topics:
      - title: Network Configuration
        environment_groups:
          - title: Network Isolation
            mutually_exclusive: true
            environments:
              - file: environments/network-isolation.yaml
                title: Network Isolation
                requires: [overcloud-resource-registry-puppet.yaml]

:func:`get_capabilities` returns the map keyed by topic title with each
environment marked ``enabled`` when the plan environment lists it, plus an
``Other`` topic for environment files the map does not mention.
:func:`update_environments` turns a selection into a new plan environment.
Both check the map's shape first (:func:`check_capabilities_map`).
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.core.plan import userenvs
from tripleo_flow.core.plan.planenv import available_files

CAPABILITIES_MAP = "capabilities-map.yaml"
OTHER_TOPIC = "Other"
#: Files offered in the Other topic: the plan's environments/ tree and user environments.
OTHER_PATTERNS = ("environments/*.yaml", "*user-environment.yaml")


def _shape_error(where: str, expected: str, value: Any) -> exceptions.InvalidTemplate:
    return exceptions.InvalidTemplate(
        CAPABILITIES_MAP, f"{where} must be {expected}, not {type(value).__name__}; see the "
        "layout in tripleo-heat-templates' capabilities-map.yaml.")


def _list_of_mappings(parent: Mapping[str, Any], key: str, where: str) -> list[Any]:
    """``parent[key]`` (absent or null: empty) checked as a list of mappings."""
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _shape_error(f"{where}{key}", "a list of mappings", value)
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise _shape_error(f"{where}{key}[{index}]", "a mapping", item)
    return value


def check_capabilities_map(capabilities_map: Any) -> Mapping[str, Any] | None:
    """Return the parsed ``capabilities-map.yaml`` when its shape is usable.

    ``topics`` is a list of mappings, each with an optional list of mapping
    ``environment_groups``, each with an optional list of mapping
    ``environments``; an environment's ``file`` is a string and its
    ``requires`` a list of strings.  An empty file (``None``) is no map.

    :raises InvalidTemplate: naming the file and the first bad entry, as a path
        like ``topics[1].environment_groups[0].environments``.
    """
    if capabilities_map is None:
        return None
    if not isinstance(capabilities_map, Mapping):
        raise _shape_error("the document", "a mapping with a 'topics' list", capabilities_map)
    for t, topic in enumerate(_list_of_mappings(capabilities_map, "topics", "")):
        if topic.get("title") is not None and not isinstance(topic["title"], str):
            raise _shape_error(f"topics[{t}].title", "a string", topic["title"])
        for g, group in enumerate(_list_of_mappings(topic, "environment_groups",
                                                    f"topics[{t}].")):
            where = f"topics[{t}].environment_groups[{g}]."
            for e, env in enumerate(_list_of_mappings(group, "environments", where)):
                entry = f"{where}environments[{e}]."
                if env.get("file") is not None and not isinstance(env["file"], str):
                    raise _shape_error(f"{entry}file", "a file name", env["file"])
                requires = env.get("requires")
                if requires is not None and not (
                        isinstance(requires, list) and all(isinstance(r, str) for r in requires)):
                    raise _shape_error(f"{entry}requires", "a list of file names", requires)
    return capabilities_map


def _map_environments(capabilities_map: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Every environment entry of the map that names a file, in map order."""
    found = []
    for topic in (check_capabilities_map(capabilities_map) or {}).get("topics") or []:
        for group in topic.get("environment_groups") or []:
            for env in group.get("environments") or []:
                if isinstance(env, Mapping) and env.get("file"):
                    found.append(dict(env))
    return found


def requirements(capabilities_map: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """``file -> files it requires`` according to the map."""
    rules: dict[str, list[str]] = {}
    for env in _map_environments(capabilities_map):
        rules.setdefault(env["file"], [])
        for required in env.get("requires") or []:
            if required not in rules[env["file"]]:
                rules[env["file"]].append(required)
    return rules


def _selected(plan_env: Mapping[str, Any]) -> list[str]:
    return [
        entry["path"]
        for entry in plan_env.get("environments") or []
        if isinstance(entry, Mapping) and "path" in entry
    ]


def _environment(env: Mapping[str, Any], enabled: bool) -> dict[str, Any]:
    result = copy.deepcopy(dict(env))
    result["file"] = env["file"]
    result["title"] = env.get("title") or env["file"]
    result["description"] = env.get("description") or ""
    result["requires"] = list(env.get("requires") or [])
    result["enabled"] = enabled
    return result


def _environment_files(paths: Iterable[str]) -> set[str]:
    return {
        path
        for path in paths
        if not path.endswith(".j2.yaml")
        and any(fnmatch.fnmatch(path, pattern) for pattern in OTHER_PATTERNS)
    }


def get_capabilities(
    capabilities_map: Mapping[str, Any] | None,
    plan_env: Mapping[str, Any],
    plan_files: Iterable[str],
) -> dict[str, Any]:
    """The plan's environments by topic, each marked ``enabled`` or not.

    :param capabilities_map: the parsed ``capabilities-map.yaml`` (``None`` if
        the plan has none).
    :param plan_env: the plan environment.
    :param plan_files: every file of the plan (j2 templates count as the file
        they render to).
    :returns: ``{topic title: {title, description, environment_groups: [{title,
        description, environments: [{file, title, description, requires,
        enabled}]}]}}``, with an ``Other`` topic last; a map's environment whose
        file the plan does not have is left out unless it is selected.
    """
    selected = set(_selected(plan_env))
    available = available_files(plan_files)
    result: dict[str, Any] = {}
    for topic in (check_capabilities_map(capabilities_map) or {}).get("topics") or []:
        groups = []
        for group in topic.get("environment_groups") or []:
            out_group = {k: copy.deepcopy(v) for k, v in group.items() if k != "environments"}
            out_group.setdefault("title", group.get("name") or "")
            out_group["description"] = group.get("description") or ""
            # A map can name files its tree does not ship (12.1.0's
            # containers-default-parameters.yaml): those are not offered.
            out_group["environments"] = [
                _environment(env, env["file"] in selected)
                for env in group.get("environments") or []
                if isinstance(env, Mapping) and env.get("file")
                and (env["file"] in available or env["file"] in selected)
            ]
            if out_group["environments"]:
                groups.append(out_group)
        title = topic.get("title") or "Untitled"
        result[title] = {
            "title": title,
            "description": topic.get("description") or "",
            "environment_groups": groups,
        }
    mentioned = {env["file"] for env in _map_environments(capabilities_map)}
    others = (_environment_files(available) | selected) - mentioned
    other_groups = [
        {
            "title": path,
            "description": "",
            "environments": [
                _environment(
                    {"file": path, "description": f"Enable {path} environment"},
                    path in selected,
                )
            ],
        }
        for path in sorted(others)
    ]
    other = result.setdefault(
        OTHER_TOPIC, {"title": OTHER_TOPIC, "description": "", "environment_groups": []}
    )
    other["environment_groups"].extend(other_groups)
    return result


def _closure(
    paths: Iterable[str], rules: Mapping[str, list[str]], check: Any
) -> list[str]:
    """``paths`` and everything they require, requirements first."""
    ordered: list[str] = []
    visiting: list[str] = []

    def visit(path: str) -> None:
        if path in ordered:
            return
        if path in visiting:
            cycle = " -> ".join(visiting[visiting.index(path):] + [path])
            raise exceptions.InvalidTemplate(CAPABILITIES_MAP, f"requires loop: {cycle}.")
        check(path)
        visiting.append(path)
        for required in rules.get(path, []):
            visit(required)
        visiting.pop()
        ordered.append(path)

    for path in paths:
        visit(path)
    return ordered


def order_environments(
    entries: list[dict[str, Any]], rules: Mapping[str, list[str]]
) -> list[dict[str, Any]]:
    """Move each environment's requirements (when listed) before it; otherwise keep order."""
    by_path = {entry["path"]: entry for entry in entries if "path" in entry}
    ordered: list[dict[str, Any]] = []
    emitted: set[str] = set()

    def emit_path(path: str, chain: tuple[str, ...]) -> None:
        if path in emitted:
            return
        if path in chain:
            cycle = " -> ".join(chain[chain.index(path):] + (path,))
            raise exceptions.InvalidTemplate(CAPABILITIES_MAP, f"requires loop: {cycle}.")
        for required in rules.get(path, []):
            if required in by_path:
                emit_path(required, chain + (path,))
        emitted.add(path)
        ordered.append(by_path[path])

    for entry in entries:
        if "path" in entry:
            emit_path(entry["path"], ())
        else:
            ordered.append(entry)
    return ordered


def update_environments(
    plan_env: Mapping[str, Any],
    capabilities_map: Mapping[str, Any] | None,
    plan_files: Iterable[str],
    selections: Mapping[str, bool],
    purge: bool = False,
) -> dict[str, Any]:
    """A new plan environment with the ``selections`` applied.

    Selected paths (``True``) are added with everything they require, each
    requirement before the environment needing it; deselected ones
    (``False``) are removed.  With ``purge`` the path entries become exactly
    the selected ones (and their requirements).  ``{data: ...}`` entries are
    kept untouched.  ``plan_env`` is not modified.

    :raises UnknownEnvironment: for a selected or required path that is not in
        the plan.
    :raises InvalidParameter: when a deselected environment is required by one
        that stays enabled.
    :raises InvalidTemplate: when the map's ``requires`` form a loop.
    """
    plan_name = str(plan_env.get("name") or "overcloud")
    available = available_files(plan_files)
    rules = requirements(capabilities_map)
    env = copy.deepcopy(dict(plan_env))
    entries: list[dict[str, Any]] = list(env.get("environments") or [])
    current = _selected(env)

    def check(path: str) -> None:
        if path not in available and path not in current:
            raise exceptions.UnknownEnvironment(plan_name, path)

    for selected in selections:
        check(selected)
    wanted = _closure([p for p, on in selections.items() if on], rules, check)
    removed = {p for p, on in selections.items() if not on}

    kept: list[dict[str, Any]] = []
    seen: set[str] = set()
    for entry in entries:
        entry_path = entry.get("path") if isinstance(entry, Mapping) else None
        if entry_path is None:
            kept.append(entry)
        elif entry_path not in seen and entry_path not in removed and (
            not purge or entry_path in wanted or userenvs.is_user_environment(entry_path)
        ):
            kept.append(entry)
            seen.add(entry_path)
    kept.extend({"path": path} for path in wanted if path not in seen)

    remaining = [e["path"] for e in kept if isinstance(e, Mapping) and "path" in e]
    for path in remaining:
        clash = sorted(set(rules.get(path, [])) & removed)
        if clash:
            raise exceptions.InvalidParameter(
                f"Cannot disable {', '.join(clash)}: environment {path} of plan "
                f"{plan_name!r} requires it. Disable {path} too, or keep it enabled."
            )
    # The user's own environments (``-e``) stay last, whatever is enabled.
    env["environments"] = userenvs.user_last(order_environments(kept, rules))
    return env
