"""The plan environment (``plan-environment.yaml``) and YAML helpers.

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

Everything here is pure: bytes in, Python objects out, and back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from tripleo_flow import exceptions

#: Name of the plan environment file at the root of a plan.
PLAN_ENVIRONMENT = "plan-environment.yaml"
#: The resource registry every TripleO plan starts with (rendered from its ``.j2.yaml``).
DEFAULT_REGISTRY = "overcloud-resource-registry-puppet.yaml"
#: The root template of a plan.
DEFAULT_TEMPLATE = "overcloud.yaml"

_CLoader: type[yaml.SafeLoader] | None = getattr(yaml, "CSafeLoader", None)


class _BlockDumper(yaml.SafeDumper):
    """Block style, no anchors, multi-line strings as literal blocks."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        # Literal blocks cannot keep trailing spaces on a line; fall back to quotes.
        if not any(line != line.rstrip(" ") for line in value.splitlines()):
            return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_BlockDumper.add_representer(str, _represent_str)


def load_yaml(data: bytes | str, path: str) -> Any:
    """Parse YAML ``data`` read from ``path``.

    :raises InvalidTemplate: naming ``path`` and the line of the problem.
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise exceptions.InvalidTemplate(path, f"not UTF-8 text ({exc.reason})") from exc
    else:
        text = data
    try:
        return parse_yaml(text)
    except yaml.YAMLError as exc:
        raise exceptions.InvalidTemplate(path, describe_yaml_error(exc)) from exc


def parse_yaml(text: str) -> Any:
    """Parse ``text`` with libyaml, falling back to PyYAML's own parser.

    libyaml (fast) rejects a few documents PyYAML's pure-Python parser accepts,
    such as ``{get_attr:[Server, name]}`` found in real TripleO templates; a
    document is invalid only when both reject it.

    :raises yaml.YAMLError: from the pure-Python parser.
    """
    if _CLoader is not None:
        try:
            return yaml.load(text, Loader=_CLoader)  # noqa: S506 - a safe loader
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506 - a safe loader


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    """A one-line description of a PyYAML error with its line and column."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    detail = f"{problem} ({context})" if context else str(problem)
    return f"YAML error at {where}{detail}. Fix the file and try again."


def dump_yaml(obj: Any) -> bytes:
    """Serialise ``obj`` as block-style YAML, keys in their insertion order."""
    text = yaml.dump(
        obj,
        Dumper=_BlockDumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=4096,
    )
    return text.encode("utf-8")


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
