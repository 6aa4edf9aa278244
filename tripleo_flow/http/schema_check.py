"""The JSON-schema checks the HTTP API's body schemas use, and no others: a checker in
linear time, so a hostile body of ``[api] max_json_size`` bytes costs about what parsing
it does (``jsonschema`` takes seconds for one: a million values).

Keywords: ``type``, ``properties``, ``required``, ``additionalProperties``, ``items``,
``enum``, ``minLength``, ``maxLength``, ``minItems``, ``maxItems``, ``minimum``,
``maximum``, ``pattern``, ``oneOf``; annotations (``description``, ``default``, ``format``,
``nullable``) are not checked.  A schema using any other keyword is refused when it is
declared (:func:`supported`), so no rule is ever silently skipped.  The semantics are
JSON Schema's (draft 7): a boolean is not an integer, ``pattern`` searches.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

CHECKED = frozenset({"type", "properties", "required", "additionalProperties", "items",
                     "enum", "minLength", "maxLength", "minItems", "maxItems", "minimum",
                     "maximum", "pattern", "oneOf"})
ANNOTATIONS = frozenset({"description", "default", "format", "nullable"})
TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict, "array": list, "string": str, "boolean": bool, "integer": int,
    "number": (int, float), "null": type(None)}
#: A schema that only names a type: checked in a plain loop over many values.
_ONLY_TYPE = frozenset({"type"}) | ANNOTATIONS
_SIZES = {"minLength": (str, 1), "maxLength": (str, -1), "minItems": (list, 1),
          "maxItems": (list, -1)}


@dataclass(frozen=True)
class Problem:
    """A value failing a keyword (named as ``jsonschema``'s errors name them)."""

    path: tuple[str | int, ...]  #: where, from the body's top
    validator: str  #: the keyword
    validator_value: Any  #: the keyword's value
    schema: dict[str, Any]  #: the schema holding the keyword
    instance: Any  #: the value


def supported(schema: Any, where: str = "#") -> None:
    """Refuse (ValueError) a schema with a keyword this checker does not check."""
    if not isinstance(schema, dict):
        raise ValueError(f"{where}: a schema is an object")
    unknown = set(schema) - CHECKED - ANNOTATIONS
    if unknown:
        raise ValueError(f"{where}: unchecked keyword(s) {sorted(unknown)}")
    for name, sub in schema.get("properties", {}).items():
        supported(sub, f"{where}/properties/{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            supported(schema[key], f"{where}/{key}")
    for i, sub in enumerate(schema.get("oneOf", ())):
        supported(sub, f"{where}/oneOf/{i}")


def is_type(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, TYPES[kind])


def _typed(value: Any, schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind is None:
        return True
    return any(is_type(value, k) for k in (kind if isinstance(kind, list) else [kind]))


def problems(schema: dict[str, Any], value: Any,
             path: tuple[str | int, ...] = ()) -> Iterator[Problem]:
    """Every way ``value`` fails ``schema``, outer ones before those inside them."""
    if not _typed(value, schema):
        yield Problem(path, "type", schema["type"], schema, value)
        return
    if "enum" in schema and not any(value == v and type(value) is type(v)
                                    for v in schema["enum"]):
        yield Problem(path, "enum", schema["enum"], schema, value)
    yield from _bounds(schema, value, path)
    if isinstance(value, dict):
        yield from _object(schema, value, path)
    elif isinstance(value, list) and "items" in schema:
        yield from _many(schema["items"], enumerate(value), path)


def _bounds(schema: dict[str, Any], value: Any, path: tuple[str | int, ...]) -> Iterator[Problem]:
    for keyword, (kind, sign) in _SIZES.items():
        if keyword in schema and isinstance(value, kind) \
                and sign * (len(value) - schema[keyword]) < 0:
            yield Problem(path, keyword, schema[keyword], schema, value)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and "minimum" in schema and value < schema["minimum"]:
        yield Problem(path, "minimum", schema["minimum"], schema, value)
    if number and "maximum" in schema and value > schema["maximum"]:
        yield Problem(path, "maximum", schema["maximum"], schema, value)
    if isinstance(value, str) and "pattern" in schema \
            and not re.search(schema["pattern"], value):
        yield Problem(path, "pattern", schema["pattern"], schema, value)


def _object(schema: dict[str, Any], value: dict[str, Any],
            path: tuple[str | int, ...]) -> Iterator[Problem]:
    for name in schema.get("required", ()):
        if name not in value:
            yield Problem(path, "required", schema["required"], schema, value)
            break
    if "oneOf" in schema and sum(
            not any(True for _ in problems(b, value, path)) for b in schema["oneOf"]) != 1:
        yield Problem(path, "oneOf", schema["oneOf"], schema, value)
    properties = schema.get("properties", {})
    yield from _many_named(properties, value, path)
    extra = schema.get("additionalProperties", True)
    if extra is True:
        return
    others = ((k, v) for k, v in value.items() if k not in properties)
    if extra is False:
        if any(True for _ in others):
            yield Problem(path, "additionalProperties", False, schema, value)
        return
    yield from _many(extra, others, path)


def _many_named(properties: dict[str, Any], value: dict[str, Any],
                path: tuple[str | int, ...]) -> Iterator[Problem]:
    for name, sub in properties.items():
        if name in value:
            yield from problems(sub, value[name], (*path, name))


def _many(schema: dict[str, Any], entries: Any, path: tuple[str | int, ...]) -> Iterator[Problem]:
    """Each of ``entries`` (key or index, value) against ``schema``; a plain loop when the
    schema only names a type (a list of a million strings), which stops at the first
    value of the wrong type (the shallowest problem is the one told)."""
    if set(schema) <= _ONLY_TYPE:
        if "type" not in schema:
            return
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        allowed = tuple(TYPES[k] for k in kinds)
        numbers = bool({"integer", "number"} & set(kinds))
        for key, item in entries:  # the first one that fails is enough: a sibling's
            if not isinstance(item, allowed) or (numbers and isinstance(item, bool)
                                                 and "boolean" not in kinds):
                yield Problem((*path, key), "type", schema["type"], schema, item)
                return
        return
    for key, item in entries:
        yield from problems(schema, item, (*path, key))
