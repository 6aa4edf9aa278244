"""JSON-like values that every JSON encoder can write, and limits on their shape.

:func:`check_value` refuses what would break a later answer once stored: a lone
UTF-16 surrogate (``"\\ud800"``, which no UTF-8 encoder writes), non-finite
numbers, nesting deeper or values more numerous than a limit.  :func:`dumps`
never fails on what is already stored: only when the plain encoding fails, it
encodes a copy where non-finite numbers are ``null``, lone surrogates U+FFFD and
values nested past the limit a short note.  Every walk is iterative, so no depth
exhausts Python's recursion limit.  Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
from typing import Any

from tripleo_flow import exceptions

_SURROGATE = re.compile("[\ud800-\udfff]")
#: The depth from which :func:`dumps` replaces a value by a note (an answer's own
#: wrapping, e.g. an execution around its input, adds a few levels to a stored value).
ANSWER_DEPTH_SLACK = 8


def reject_constant(name: str) -> Any:
    """``json.loads``'s ``parse_constant``: refuse NaN, Infinity and -Infinity."""
    raise exceptions.InvalidInput(
        f"The request body is not valid JSON: {name} is not a JSON number. Send a finite "
        "number, or the value as a string.")


def check_value(value: Any, max_depth: int = 100, max_nodes: int = 1_000_000,
                what: str = "The request body") -> None:
    """Refuse ``value`` (JSON-like) when it nests deeper than ``max_depth``, holds more
    than ``max_nodes`` values, a non-finite number, or a string (or key) with a lone
    surrogate.

    :raises InvalidInput: naming the limit and its option
    """
    todo: list[tuple[Any, int]] = [(value, 1)]
    nodes = 0
    while todo:
        item, depth = todo.pop()
        nodes += 1
        if nodes > max_nodes:
            raise exceptions.InvalidInput(
                f"{what} holds more than {max_nodes} values ([limits] "
                "yaml_max_nodes); send less at once.")
        if depth > max_depth:
            raise exceptions.InvalidInput(
                f"{what} nests deeper than {max_depth} levels ([limits] "
                "yaml_max_depth); flatten it.")
        if isinstance(item, float) and not math.isfinite(item):
            raise exceptions.InvalidInput(
                f"{what} holds {item}, which is not a JSON number; send a finite number.")
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise exceptions.InvalidInput(
                    f"{what} holds a lone UTF-16 surrogate (such as \"\\ud800\"), "
                    "which is not a character; send valid Unicode text.")
        elif isinstance(item, dict):
            todo.extend((k, depth + 1) for k in item)
            todo.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            todo.extend((v, depth + 1) for v in item)


def loads(text: str, max_depth: int = 100, max_nodes: int = 1_000_000) -> Any:
    """Parse JSON text strictly: :func:`check_value` on the result, no NaN/Infinity."""
    try:
        value = json.loads(text, parse_constant=reject_constant)
    except RecursionError:
        raise exceptions.InvalidInput(
            f"The request body nests deeper than {max_depth} levels ([limits] "
            "yaml_max_depth); flatten it.") from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # Python's own limit on int("...")
            raise exceptions.InvalidInput(
                f"The request body holds an integer of more than "
                f"{sys.get_int_max_str_digits()} digits, too long to read as a number; "
                "send it as a JSON string.") from None
        raise exceptions.InvalidInput(f"The request body is not valid JSON: {exc}") from None
    check_value(value, max_depth, max_nodes)
    return value


def _clean_str(text: str) -> str:
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _clean_scalar(value: Any) -> Any:
    if isinstance(value, str):
        return _clean_str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return _clean_str(str(value))


def sanitize(value: Any, max_depth: int = 100) -> Any:
    """A copy of ``value`` that JSON can encode: non-finite floats become null, lone
    surrogates U+FFFD, anything else :func:`str`, and containers nested deeper than
    ``max_depth`` a note saying so."""
    note = f"(value nested deeper than {max_depth} levels, not shown)"
    root: list[Any] = [None]
    # (container to fill, key or index, value, depth)
    todo: list[tuple[Any, Any, Any, int]] = [(root, 0, value, 1)]
    while todo:
        parent, key, item, depth = todo.pop()
        if isinstance(item, (dict, list, tuple)) and depth > max_depth:
            parent[key] = note
        elif isinstance(item, dict):
            copy: dict[str, Any] = {}
            parent[key] = copy
            for k, v in item.items():
                clean_key = _clean_str(k) if isinstance(k, str) else str(_clean_scalar(k))
                copy[clean_key] = None
                todo.append((copy, clean_key, v, depth + 1))
        elif isinstance(item, (list, tuple)):
            items: list[Any] = [None] * len(item)
            parent[key] = items
            todo.extend((items, i, v, depth + 1) for i, v in enumerate(item))
        else:
            parent[key] = _clean_scalar(item)
    return root[0]


def dumps(value: Any, max_depth: int = 100, sort_keys: bool = False) -> bytes:
    """``value`` as UTF-8 JSON text; never raises for what a plan or execution holds."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False,
                          sort_keys=sort_keys).encode("utf-8")
    except (ValueError, TypeError, RecursionError):
        clean = sanitize(value, max_depth + ANSWER_DEPTH_SLACK)
        return json.dumps(clean, ensure_ascii=False, allow_nan=False,
                          sort_keys=sort_keys).encode("utf-8")


def fields(record: Any) -> dict[str, Any]:
    """A dataclass's fields as a dict, values as they are (``dataclasses.asdict``
    copies them recursively, which a deeply nested stored value makes fail)."""
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


