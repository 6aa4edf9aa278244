"""The Heat stack request of a plan, and the checks made before a deployment.

Pure: from the plan's files (rendered ones included) and its
plan-environment, build the body of Heat's ``POST /stacks`` (template, files,
environment files in order, the user's parameter values last), list required
parameters left unset, and compare against the last deployment's saved
environment.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.core import planenv

USER_ENVIRONMENT = ".tripleo-flow/user-parameters.yaml"
#: Parameters that must not change between deployments (changing them breaks the cloud).
IMMUTABLE_PARAMETERS = ("CephClusterFSID",)


def _text(files: Mapping[str, bytes], path: str) -> str:
    try:
        return files[path].decode("utf-8")
    except KeyError:
        raise exceptions.InvalidTemplate(
            path, "the plan-environment names it but the plan has no such file; "
            "fix the environments of plan-environment.yaml") from None
    except UnicodeDecodeError as exc:
        raise exceptions.InvalidTemplate(path, f"not UTF-8 ({exc})") from exc


def _normalise_registry(env: dict[str, Any], env_path: str) -> dict[str, Any]:
    """Resource registry paths made relative to the plan's root (as Heat's files keys)."""
    registry = env.get("resource_registry")
    if not isinstance(registry, dict):
        return env
    base = posixpath.dirname(env_path)
    fixed: dict[str, Any] = {}
    for key, value in registry.items():
        if (isinstance(value, str) and value.endswith((".yaml", ".yml"))
                and "://" not in value and not value.startswith("/")):
            value = posixpath.normpath(posixpath.join(base, value))
        fixed[key] = value
    return {**env, "resource_registry": fixed}


def stack_request(stack: str, files: Mapping[str, bytes],
                  plan_env: Mapping[str, Any]) -> dict[str, Any]:
    """The body of ``POST /stacks`` (or ``PUT`` for an update) for a plan.

    :param stack: the stack name (the plan's name).
    :param files: every file of the plan, rendered ones included.
    :param plan_env: the parsed plan-environment.
    :raises InvalidTemplate: when the template or an environment is missing or bad.
    """
    template_path = str(plan_env.get("template") or "overcloud.yaml")
    template = planenv.load_yaml(_text(files, template_path), template_path)
    heat_files: dict[str, str] = {}
    for path, data in files.items():
        if path.endswith((".yaml", ".yml")) and not path.startswith(".tripleo-flow/"):
            try:
                heat_files[path] = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
    env_files: list[str] = []
    for index, entry in enumerate(plan_env.get("environments") or []):
        if "path" in entry:
            path = str(entry["path"])
            env = planenv.load_yaml(_text(files, path), path) or {}
        else:
            path = f".tripleo-flow/environment-{index}.yaml"
            env = dict(entry.get("data") or {})
        heat_files[path] = planenv.dump_yaml(_normalise_registry(env, path)).decode()
        env_files.append(path)
    # Generated passwords first: a value the user set explicitly wins (as in TripleO).
    user = {"parameter_defaults": {**(plan_env.get("passwords") or {}),
                                   **(plan_env.get("parameter_defaults") or {})}}
    heat_files[USER_ENVIRONMENT] = planenv.dump_yaml(user).decode()
    env_files.append(USER_ENVIRONMENT)
    return {"stack_name": stack, "template": template, "files": heat_files,
            "environment_files": env_files, "environment": {}, "timeout_mins": 240}


def effective_parameters(request: Mapping[str, Any]) -> dict[str, Any]:
    """Parameter values the request sets, environment files merged in order."""
    values: dict[str, Any] = {}
    for path in request["environment_files"]:
        env = planenv.load_yaml(request["files"][path], path) or {}
        for key in ("parameters", "parameter_defaults"):
            values.update(env.get(key) or {})
    return values


def missing_parameters(request: Mapping[str, Any]) -> list[str]:
    """Root template parameters with no default and no value set."""
    params = (request["template"] or {}).get("parameters") or {}
    values = effective_parameters(request)
    return sorted(name for name, schema in params.items()
                  if isinstance(schema, dict) and "default" not in schema and name not in values)


def check_against_last(request: Mapping[str, Any],
                       last_env: Mapping[str, Any] | None) -> list[str]:
    """Compare with the last deployment's saved environment; return warnings.

    :raises InvalidInput: when an immutable parameter (CephClusterFSID) changed.
    """
    if not last_env:
        return []
    now = effective_parameters(request)
    before = last_env.get("parameters") or {}
    for name in IMMUTABLE_PARAMETERS:
        if name in before and now.get(name) != before[name]:
            raise exceptions.InvalidInput(
                f"Parameter {name} changed since the last deployment ({before[name]!r} -> "
                f"{now.get(name)!r}); it cannot change on a deployed cloud. Set it back with: "
                f"tripleo-flow parameters set --plan {request['stack_name']} {name}=...")
    gone = [p for p in last_env.get("environment_files") or []
            if p not in request["environment_files"]]
    return [f"Environment {p} was used by the last deployment and is not used now."
            for p in gone]
