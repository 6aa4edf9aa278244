"""A plan's files as an export a reader may have: every environment's secrets left out.

What the HTTP API hands out (``GET /v1/plans/{name}/export`` and the
``export_deployment_plan`` workflow started over HTTP): the plan-environment
without its ``passwords`` section, and each environment file (plan-environment
included) without its secret parameters (:func:`tripleo_flow.core.plan.secrets.without_secrets`).
Heat templates are left as they are: their ``parameters`` declare, they hold no
values.  Files that do not parse are left as they are too.  Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import planenv, secrets

#: What a file must contain for it to be read at all (most of a tree is templates).
_SECTIONS = (b"passwords", b"parameter_defaults", b"parameters")


def _environment(name: str, data: bytes) -> dict[str, Any] | None:
    if not name.endswith((".yaml", ".yml")) or name.endswith((".j2.yaml", ".j2.yml")):
        return None
    if not any(section in data for section in _SECTIONS) or b"heat_template_version" in data:
        return None
    try:
        loaded = safe_yaml.load_yaml(data, name)
    except exceptions.TripleoFlowError:
        return None
    return loaded if isinstance(loaded, dict) else None


def without_secrets(files: dict[str, bytes]) -> dict[str, bytes]:
    """``files`` (path -> content) with the secrets of each environment left out."""
    plan_env = _environment(planenv.PLAN_ENVIRONMENT, files.get(planenv.PLAN_ENVIRONMENT, b""))
    known = sorted(secrets.environment_secrets(plan_env or {}))
    result = dict(files)
    for name, data in files.items():
        env = _environment(name, data)
        stripped = secrets.without_secrets(env, known) if env is not None else None
        if stripped is not None:
            result[name] = safe_yaml.dump_yaml(stripped)
    return result
