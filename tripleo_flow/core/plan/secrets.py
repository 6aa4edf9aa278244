"""What counts as a secret of a plan, and what readers of its parameters see.

A secret is a value of a plan-environment's ``passwords`` section, or of a
parameter whose name TripleO or Heat treats as secret (the rule of
:mod:`tripleo_flow.common.secret_masking`, which every TripleO password name,
:data:`~tripleo_flow.core.plan.passwords.PASSWORD_NAMES`, satisfies).  Configuration
options marked ``secret=True`` are masked by oslo.config itself.  Pure functions,
no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml, value_limits
from tripleo_flow.common.secret_masking import (
    MASK,
    Needles,
    is_secret_name,
    leaves,
    needles,
    redact_sorted,
)

#: Sections of a plan-environment whose every value is secret.
SECRET_SECTIONS = frozenset({"passwords"})


def environment_secrets(env: Any) -> set[str]:
    """The secret values of a plan-environment: its passwords and secret-named parameters."""
    found: set[str] = set()
    if not isinstance(env, Mapping):
        return found
    for section in SECRET_SECTIONS:
        found.update(leaves(env.get(section) or {}))
    for section in ("parameter_defaults", "parameters"):
        params = env.get(section)
        if isinstance(params, Mapping):
            for name, value in params.items():
                if is_secret_name(name):
                    found.update(leaves(value))
    return {v for v in found if v}


def environment_file_secrets(inputs: Mapping[str, Any],
                             max_nodes: int = safe_yaml.DEFAULT_MAX_NODES,
                             max_depth: int = safe_yaml.DEFAULT_MAX_DEPTH,
                             max_items: int | None = None) -> set[str]:
    """The secret values in the environment files an execution's inputs carry as text
    (``user_environments``: ``[{"name", "files": {path: text}}]``), so the record of
    that text is masked as the plan's own secrets are.  A file that does not parse
    (within the YAML limits) holds none: the action refuses it.

    :raises InvalidInput: a file with a mapping or list of over ``max_items`` entries
        (``[limits] input_max_items``), before it is built: the execution is refused."""
    found: set[str] = set()
    environments = inputs.get("user_environments")
    for env in environments if isinstance(environments, list) else ():
        files = env.get("files") if isinstance(env, Mapping) else None
        for path, text in files.items() if isinstance(files, Mapping) else ():
            if not isinstance(text, str):
                continue
            if max_items is not None:
                value_limits.check_yaml_entries(text, max_items, f"Environment file {path!r}")
            try:
                parsed = safe_yaml.load_yaml(text, str(path), max_nodes=max_nodes,
                                           max_depth=max_depth)
            except exceptions.TripleoFlowError:
                continue
            found |= environment_secrets(parsed)
    return found


# -- what readers of parameters see (the HTTP API) ----------------------------

def _shown(name: str, value: Any, hidden: bool, known: Needles, mask: Any = MASK) -> Any:
    """``value`` as a reader may see it: ``mask`` for a hidden or secret-named
    parameter, otherwise with ``mask`` for every secret inside it.  The one rule of
    what a reader sees of a parameter: masked for the API, left out of exports."""
    if value is None:
        return None
    if hidden or is_secret_name(name):
        return mask
    return redact_sorted(value, known, mask=mask)[0]


def mask_parameters(values: dict[str, Any], known: list[str]) -> dict[str, Any]:
    """Parameter values without secrets (the names stay: a client sees what is set)."""
    looked_for = needles(known)
    return {k: _shown(k, v, False, looked_for) for k, v in values.items()}


def mask_schema(schema: dict[str, Any], known: list[str]) -> dict[str, Any]:
    """The parameter schema without secret values or defaults (``NoEcho`` parameters
    and secret-named ones show :data:`MASK`)."""
    entries = {}
    looked_for = needles(known)
    for name, entry in (schema.get("parameters") or {}).items():
        hidden = bool(entry.get("hidden"))
        entries[name] = {**entry, **{key: _shown(name, entry.get(key), hidden, looked_for)
                                     for key in ("value", "default")}}
    return {**schema, "parameters": entries}


# -- what an export for a reader holds (the HTTP API) -------------------------

#: Where a secret was, in a parameter an export is about to leave it out of.
_LEFT_OUT = object()


def _left_out(value: Any) -> Any:
    """``value`` without the keys and items that were secrets (:data:`_LEFT_OUT`)."""
    if isinstance(value, Mapping):
        return {key: _left_out(item) for key, item in value.items() if item is not _LEFT_OUT}
    if isinstance(value, list):
        return [_left_out(item) for item in value if item is not _LEFT_OUT]
    return value


def without_secrets(env: Any, known: Iterable[str] = ()) -> dict[str, Any] | None:
    """A copy of environment ``env`` with its secrets left out, or None when it holds
    none: secret sections (``passwords``) go, and so does every value
    :func:`mask_parameters` masks (the same rule): a parameter whose name is secret
    or whose value is a string holding one of the ``known`` secrets (or one of its
    own), and inside other values each key or item that holds one.
    Left out, not masked: a plan made from the copy generates its passwords afresh
    and takes the templates' defaults, where a mask would be taken as the value.
    """
    if not isinstance(env, Mapping):
        return None
    looked_for = needles((*known, *environment_secrets(env)))
    kept: dict[str, Any] = {}
    dropped = False
    for section, value in env.items():
        if section in SECRET_SECTIONS:
            dropped = True
            continue
        if section in ("parameter_defaults", "parameters") and isinstance(value, Mapping):
            params = {}
            for name, item in value.items():
                shown = _shown(name, item, False, looked_for, _LEFT_OUT)
                if shown is not _LEFT_OUT:
                    params[name] = _left_out(shown)
            dropped = dropped or params != value
            kept[section] = params
        else:
            kept[section] = value
    return kept if dropped else None
