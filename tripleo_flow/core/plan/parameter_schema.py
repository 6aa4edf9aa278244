"""A plan's parameter schema: Heat's validate answer flattened, values checked (pure).

Heat's ``validate`` with ``show_nested`` answers a tree: ``Parameters`` of the
top-level template and ``NestedParameters`` per resource, recursively.  The
schema is a mapping of parameter name to one entry; a name found in several
stacks lists every path (``""`` is the top-level stack), and its type, default
and description come from the first stack that declares it (top-level first).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from tripleo_flow import exceptions

#: Heat's names in the validate answer -> the template type names.
HEAT_TYPES = {"String": "string", "Number": "number", "Json": "json",
              "CommaDelimitedList": "comma_delimited_list", "Boolean": "boolean"}
_CONSTRAINT_KEYS = ("AllowedValues", "AllowedPattern", "MinLength", "MaxLength", "MinValue",
                    "MaxValue", "CustomConstraint", "ConstraintDescription")
_TRUE = {"true", "yes", "on", "y", "t", "1"}
_FALSE = {"false", "no", "off", "n", "f", "0"}


def cache_key(digests: Mapping[str, str]) -> str:
    """A sha256 over object names and their content digests (order does not matter)."""
    text = json.dumps(sorted(digests.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def _entry(raw: Mapping[str, Any], path: str, value: Any, has_value: bool) -> dict[str, Any]:
    return {
        "type": HEAT_TYPES.get(str(raw.get("Type", "")), str(raw.get("Type", "")).lower()),
        "default": raw.get("Default"),
        "description": raw.get("Description", ""),
        "hidden": str(raw.get("NoEcho", "false")).lower() == "true",
        "constraints": {k: raw[k] for k in _CONSTRAINT_KEYS if k in raw},
        "value": value,
        "value_set": has_value,
        "paths": [path],
    }


def flatten(validated: Mapping[str, Any], user_values: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter of the stack tree in Heat's answer, keyed by name.

    :param validated: Heat's ``validate`` answer (with ``NestedParameters``).
    :param user_values: the plan's ``parameter_defaults`` (the ``value`` of each entry).
    """
    schema: dict[str, Any] = {}
    queue: list[tuple[str, Mapping[str, Any]]] = [("", validated)]
    while queue:  # breadth first: shallower stacks win
        path, node = queue.pop(0)
        for name, raw in sorted((node.get("Parameters") or {}).items()):
            if not isinstance(raw, Mapping):
                continue
            if name in schema:
                if path not in schema[name]["paths"]:
                    schema[name]["paths"].append(path)
                continue
            schema[name] = _entry(raw, path, user_values.get(name), name in user_values)
        for resource, child in sorted((node.get("NestedParameters") or {}).items()):
            if isinstance(child, Mapping):
                queue.append((f"{path}/{resource}" if path else resource, child))
    return schema


def _number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False


def _json(value: Any) -> bool:
    if isinstance(value, (dict, list)):
        return True
    if isinstance(value, str):
        try:
            return isinstance(json.loads(value), (dict, list))
        except ValueError:
            return False
    return False


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return value in (0, 1)
    return isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


_CHECKS = {
    "string": _scalar,
    "number": _number,
    "json": _json,
    "comma_delimited_list": lambda v: isinstance(v, str) or (
        isinstance(v, list) and all(_scalar(i) for i in v)),
    "boolean": _boolean,
}


def check_values(plan: str, schema: Mapping[str, Any], values: Mapping[str, Any]) -> None:
    """Check that each name is a parameter of the plan and its value fits the type.

    :raises InvalidParameter: naming the first parameter that does not fit.
    """
    for name, value in values.items():
        entry = schema.get(name)
        if entry is None:
            raise exceptions.InvalidParameter(
                f"Plan {plan!r} has no parameter {name!r};", hints=[exceptions.Hint(
                    "list them with", "parameter.schema", {"plan": plan})])
        kind = entry.get("type", "")
        check = _CHECKS.get(kind)
        if check is not None and not check(value):
            raise exceptions.InvalidParameter(
                f"Parameter {name!r} of plan {plan!r} is a {kind}; {value!r} is not a valid "
                f"{kind}. Give a value of that type.")
