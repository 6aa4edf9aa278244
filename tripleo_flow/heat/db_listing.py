"""Heat's nested resource listing of one resource name, read from the database of a
Heat we launched (one read-only transaction) instead of asked of heat-engine.

``GET /stacks/<stack>/resources?nested_depth=N&name=X&with_detail=true`` makes one
heat-engine worker load every nested stack of the tree (several seconds of one core on
THT 18.0.0), whatever the filter. :func:`resources_named` gives the same list from three
queries in one read-only transaction (the tree's stacks, their resources, the named ones
with their stored data): the resources in the order heat-engine lists them (its walk is
rebuilt here: a stack's resources of that name first, then each of its resources' nested
stacks in turn, down to ``N`` levels; Heat keeps the named resources of the whole tree
in its request cache, and a stack that holds one is listed from that cache: only those
resources, so the walk does not go below it) with the fields a listing with details
gives that :mod:`~tripleo_flow.core.deploy.deployments` reads: ``resource_name``,
``creation_time`` (Heat's ISO format, to the second), ``physical_resource_id``,
``parent_resource`` and the ``value`` attribute of an ``OS::Heat::Value`` (its stored
``value`` property: Heat's ANY-typed property comes back as stored).

Only a tree in the state a finished create or update leaves is read here: the answer
is None (ask Heat) as soon as anything would make Heat's own loading differ: a
resource of another template than its stack's, two rows of one name in a stack, a
named resource whose properties are not stored, or stored encrypted.
"""

from __future__ import annotations

import datetime
import json
import logging
from collections import defaultdict
from typing import Any

from tripleo_flow.heat.database import HeatDatabase

LOG = logging.getLogger(__name__)

_STACKS = "SELECT id, raw_template_id, parent_resource_name, deleted_at FROM stack"
_RESOURCES = ("SELECT id, stack_id, name, nova_instance, current_template_id FROM resource "
              "ORDER BY id")
_NAMED = ("SELECT r.id, r.stack_id, r.created_at, p.data, p.encrypted, a.data, a.encrypted "
          "FROM resource r "
          "LEFT JOIN resource_properties_data p ON p.id = r.rsrc_prop_data_id "
          "LEFT JOIN resource_properties_data a ON a.id = r.attr_data_id "
          "WHERE r.root_stack_id = ? AND r.name = ? ORDER BY r.id")


class _Unsure(Exception):
    """The tree is in a state this reading does not reproduce: ask Heat."""


def _isotime(value: Any) -> str:
    """Heat's ``isotime`` of a stored DATETIME (a datetime, or SQLite's text)."""
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value)
    if not isinstance(value, datetime.datetime):
        raise _Unsure(f"creation time {value!r}")
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _stored(data: Any, encrypted: Any) -> dict[str, Any] | None:
    """A ``resource_properties_data`` row's data (None: no row)."""
    if data is None:
        return None
    if encrypted:
        raise _Unsure("data stored encrypted")
    stored = json.loads(data) if isinstance(data, (str, bytes)) else data
    if not isinstance(stored, dict):
        raise _Unsure("data that is no map")
    return stored


def _value(detail: tuple[Any, ...]) -> Any:
    """The ``value`` attribute: as Heat cached it (attribute data), else the stored
    ``value`` property (Heat resolves the attribute to it)."""
    cached = _stored(detail[5], detail[6])
    if cached is not None and "value" in cached:
        return cached["value"]
    properties = _stored(detail[3], detail[4])
    if properties is None or "value" not in properties:
        raise _Unsure("no stored value property")
    return properties["value"]


def resources_named(db: HeatDatabase, root_stack_id: str, name: str,
                    nested_depth: int) -> list[dict[str, Any]] | None:
    """The resources called ``name`` in the stack ``root_stack_id`` and its nested
    stacks to ``nested_depth`` levels, as Heat's listing with details orders and shows
    them (see the module docstring); None when the tree's state is one this reading
    does not reproduce (then ask Heat).

    :raises HeatError: the database cannot be read
    """
    stacks_rows, resource_rows, named_rows = db.read(
        (_STACKS, ()), (_RESOURCES, ()), (_NAMED, (root_stack_id, name)))
    stacks = {str(row[0]): row for row in stacks_rows}
    if root_stack_id not in stacks:
        return None
    # Each stack's resources by name, in the order Heat's dict of them has (first
    # place, last row of a name: a repeated name is a replacement Heat resolves).
    by_stack: dict[str, dict[str, tuple[Any, ...]]] = defaultdict(dict)
    seen: set[tuple[str, str]] = set()
    for row in resource_rows:
        key = (str(row[1]), str(row[2]))
        if key in seen:
            return None
        seen.add(key)
        by_stack[key[0]][key[1]] = row
    named: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for row in named_rows:
        named[str(row[1])].append(row)
    details = {int(row[0]): row for row in named_rows}
    found: list[dict[str, Any]] = []

    def loaded(stack_id: str, row: tuple[Any, ...]) -> None:
        template = row[4]
        if template is not None and str(template) != str(stacks[stack_id][1]):
            raise _Unsure("a resource of another template than its stack's")

    def walk(stack_id: str, depth: int) -> None:
        if stacks[stack_id][3] is not None:
            raise _Unsure("a deleted stack in the tree")
        # Heat's request cache holds the named resources of the tree: a stack that has
        # one is listed from it (that resource only), filtered or not.
        cached = bool(named.get(stack_id))
        if not cached and name in by_stack.get(stack_id, {}):
            raise _Unsure("a named resource of another tree")
        if cached:
            row = by_stack[stack_id][name]
            loaded(stack_id, row)
            detail = details[int(row[0])]
            found.append({
                "resource_name": str(row[2]),
                "creation_time": _isotime(detail[2]),
                "physical_resource_id": str(row[3] or ""),
                **({"parent_resource": str(stacks[stack_id][2])}
                   if stacks[stack_id][2] else {}),
                "attributes": {"value": _value(detail)},
            })
            return
        if depth == 0:
            return
        for row in by_stack.get(stack_id, {}).values():
            loaded(stack_id, row)
            nested = str(row[3] or "")
            if nested in stacks:
                walk(nested, depth - 1)

    try:
        walk(root_stack_id, nested_depth)
    except _Unsure as why:
        LOG.debug("Heat lists %s of %s itself: %s", name, root_stack_id, why)
        return None
    return found


__all__ = ["resources_named"]
