"""The plan environment (``plan-environment.yaml``).

A plan environment is a mapping::

    version: 1.0
    name: overcloud
    description: ...
    template: overcloud.yaml
    environments:                 # applied in order
      - path: overcloud-resource-registry-puppet.yaml
      - data: {parameter_defaults: {...}}
    parameter_defaults: {}
    passwords: {}

Everything here is pure: bytes in, Python objects out.  The YAML itself is read
within limits by :mod:`tripleo_flow.common.safe_yaml`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common.safe_yaml import load_yaml

#: Name of the plan environment file at the root of a plan.
PLAN_ENVIRONMENT = "plan-environment.yaml"
#: The resource registry every TripleO plan starts with (rendered from its ``.j2.yaml``).
DEFAULT_REGISTRY = "overcloud-resource-registry-puppet.yaml"
#: The root template of a plan.
DEFAULT_TEMPLATE = "overcloud.yaml"


def rendered_name(path: str) -> str | None:
    """The file a plain ``*.j2.yaml`` template renders to, else ``None``.

    Role and network templates (``*.role.j2.yaml``, ``*.network.j2.yaml``)
    render to several files and return ``None`` here.
    """
    if not path.endswith(".j2.yaml"):
        return None
    if path.endswith(".role.j2.yaml") or path.endswith(".network.j2.yaml"):
        return None
    return path[: -len(".j2.yaml")] + ".yaml"


def available_files(plan_files: Iterable[str]) -> set[str]:
    """``plan_files`` plus the files plain j2 templates among them render to."""
    available = set(plan_files)
    for path in list(available):
        target = rendered_name(path)
        if target is not None:
            available.add(target)
    return available


def default_plan_environment(
    name: str,
    description: str = "",
    template: str = DEFAULT_TEMPLATE,
    plan_files: Iterable[str] = (),
) -> dict[str, Any]:
    """A new plan environment for plan ``name``.

    The default resource registry is listed in ``environments`` only when it is
    among ``plan_files`` (or will be rendered from its ``.j2.yaml``).
    """
    environments: list[dict[str, Any]] = []
    if DEFAULT_REGISTRY in available_files(plan_files):
        environments.append({"path": DEFAULT_REGISTRY})
    return {
        "version": 1.0,
        "name": name,
        "description": description,
        "template": template,
        "environments": environments,
        "parameter_defaults": {},
        "passwords": {},
    }


def _check_environments(entries: Any, path: str) -> list[dict[str, Any]]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise exceptions.InvalidTemplate(
            path, f"'environments' must be a list, not {type(entries).__name__}."
        )
    for index, entry in enumerate(entries, start=1):
        ok = isinstance(entry, dict) and len(entry) == 1 and (
            (isinstance(entry.get("path"), str) and entry["path"])
            or isinstance(entry.get("data"), dict)
        )
        if not ok:
            raise exceptions.InvalidTemplate(
                path,
                f"environments entry {index} ({entry!r}) must be either "
                "{path: <file in the plan>} or {data: <mapping>}.",
            )
    return entries


def parse_plan_environment(data: bytes | str, path: str = PLAN_ENVIRONMENT) -> dict[str, Any]:
    """Parse and check a plan environment.

    Missing ``environments``, ``parameter_defaults`` and ``passwords`` are
    filled with empty values.

    :raises InvalidTemplate: on bad YAML, a document that is not a mapping, or
        a malformed ``environments`` entry.
    """
    env = load_yaml(data, path)
    if env is None:
        env = {}
    if not isinstance(env, dict):
        raise exceptions.InvalidTemplate(
            path, f"a plan environment must be a mapping, not {type(env).__name__}."
        )
    env["environments"] = _check_environments(env.get("environments"), path)
    for key in ("parameter_defaults", "passwords"):
        value = env.get(key)
        if value is None:
            env[key] = {}
        elif not isinstance(value, Mapping):
            raise exceptions.InvalidTemplate(
                path, f"{key!r} must be a mapping, not {type(value).__name__}."
            )
    template = env.get("template")
    if template is not None and not isinstance(template, str):
        raise exceptions.InvalidTemplate(path, "'template' must be a file name.")
    return env
