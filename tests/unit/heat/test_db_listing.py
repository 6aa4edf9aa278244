"""Heat's nested listing of one resource name rebuilt from its database
(:mod:`tripleo_flow.heat.db_listing`), on a SQLite file holding the columns of Heat's
tables it reads; the same list as Heat's API on a real THT 18.0.0 stack is checked in
tests/functional/overcloud/test_stub_listing.py."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.heat import db_listing
from tripleo_flow.heat.db_sqlite import SqliteDatabase

NAME = "TripleODeployment"
SCHEMA = """
CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, raw_template_id INTEGER,
                    parent_resource_name VARCHAR(255), deleted_at DATETIME);
CREATE TABLE resource (id INTEGER PRIMARY KEY, stack_id VARCHAR(36), name VARCHAR(255),
                       nova_instance VARCHAR(255), current_template_id INTEGER,
                       root_stack_id VARCHAR(36), created_at DATETIME,
                       rsrc_prop_data_id INTEGER, attr_data_id INTEGER);
CREATE TABLE resource_properties_data (id INTEGER PRIMARY KEY, data TEXT, encrypted BOOLEAN);
"""


class Tree:
    """A Heat database: stacks (template id = position) and their resources."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = sqlite3.connect(path)
        self.conn.executescript(SCHEMA)
        self.templates: dict[str, int] = {}

    def stack(self, stack_id: str, parent: str | None = None, deleted: bool = False) -> str:
        self.templates[stack_id] = len(self.templates) + 1
        self.conn.execute("INSERT INTO stack VALUES (?, ?, ?, ?)",
                          (stack_id, self.templates[stack_id], parent,
                           "2026-11-29 10:00:00" if deleted else None))
        return stack_id

    def resource(self, rid: int, stack_id: str, name: str, physical: str | None = None,
                 value: Any = None, created: str = "2026-11-29 14:00:05.250000",
                 template: int | None = -1, properties: dict[str, Any] | None = None,
                 encrypted: bool = False, cached: dict[str, Any] | None = None) -> None:
        props = None
        if properties is not None or value is not None:
            props = self._data(properties if properties is not None
                               else {"value": value, "type": None}, encrypted)
        self.conn.execute(
            "INSERT INTO resource VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (rid, stack_id, name, physical,
             self.templates[stack_id] if template == -1 else template, "root", created,
             props, self._data(cached, False) if cached is not None else None))

    def _data(self, data: dict[str, Any], encrypted: bool) -> int:
        cur = self.conn.execute("INSERT INTO resource_properties_data (data, encrypted) "
                                "VALUES (?, ?)", (json.dumps(data), encrypted))
        return int(cur.lastrowid or 0)

    def listing(self, depth: int = 7, name: str = NAME) -> list[dict[str, Any]] | None:
        self.conn.commit()
        return db_listing.resources_named(SqliteDatabase(self.path), "root", name, depth)


def _stub(server: str, deployment: str) -> dict[str, Any]:
    return {"name": f"deploy-{server}", "server": server, "config": "c",
            "input_values": {}, "deployment": deployment}


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    """root -> One (s1: a stub, and Deep -> s3 with a stub of its own), Two (s2: a stub
    with a lower id than s1's), Three (s4 -> s5 -> s6, a stub two levels down)."""
    t = Tree(tmp_path / "heat.sqlite")
    t.stack("root")
    for sid, parent in (("s1", "One"), ("s2", "Two"), ("s3", "Deep"), ("s4", "Three"),
                        ("s5", "Inner"), ("s6", "Innermost")):
        t.stack(sid, parent)
    t.resource(1, "root", "One", "s1")
    t.resource(2, "root", "Two", "s2")
    t.resource(3, "s2", NAME, "oc-Two-stub", _stub("srv-b", "dep-b"))
    t.resource(4, "s1", "Deep", "s3")
    t.resource(5, "s3", NAME, "oc-Deep-stub", _stub("srv-c", "dep-c"))
    t.resource(6, "s1", NAME, "oc-One-stub", _stub("srv-a", "dep-a"),
               created="2026-11-29T14:00:07")
    t.resource(7, "root", "Three", "s4")
    t.resource(8, "s4", "Inner", "s5")
    t.resource(9, "s5", "Innermost", "s6")
    t.resource(10, "s6", NAME, "oc-Innermost-stub", _stub("srv-d", "dep-d"))
    t.resource(11, "s4", "NotAStack", "a-physical-name")
    return t


def test_the_walk_is_heats_a_stack_first_then_its_nested_stacks_in_turn(tree: Tree) -> None:
    """Stacks in the order of their parents' resources (not the stubs' ids); a stack
    holding a stub is listed from Heat's request cache, so the stub of the stack below
    it (s3) is not listed, as Heat does not list it."""
    found = tree.listing()
    assert found is not None
    assert [r["attributes"]["value"]["deployment"] for r in found] == ["dep-a", "dep-b", "dep-d"]
    assert found[0] == {"resource_name": NAME, "creation_time": "2026-11-29T14:00:07Z",
                        "physical_resource_id": "oc-One-stub", "parent_resource": "One",
                        "attributes": {"value": _stub("srv-a", "dep-a")}}
    assert found[1]["creation_time"] == "2026-11-29T14:00:05Z"  # to the second, as Heat


def test_the_depth_limits_the_walk_as_heats_nested_depth(tree: Tree) -> None:
    """s6 is three levels below the root: listed at depth 3, not at 2."""
    assert [r["physical_resource_id"] for r in tree.listing(depth=3) or []][-1] == \
        "oc-Innermost-stub"
    assert [r["physical_resource_id"] for r in tree.listing(depth=2) or []] == \
        ["oc-One-stub", "oc-Two-stub"]
    assert tree.listing(depth=0) == []


def test_the_value_heat_cached_wins_over_the_stored_property(tree: Tree) -> None:
    tree.resource(12, "root", NAME, "oc-root-stub", _stub("srv-e", "stale"),
                  cached={"value": _stub("srv-e", "cached")})
    found = tree.listing()
    assert found is not None
    assert [r["attributes"]["value"]["deployment"] for r in found] == ["cached"]
    assert "parent_resource" not in found[0]  # the root stack has no parent resource


@pytest.mark.parametrize("change", [
    "deleted nested stack", "repeated name", "other template", "encrypted",
    "no stored properties", "no value property", "stub of another tree", "no root"])
def test_a_tree_heat_would_load_otherwise_is_left_to_heat(tree: Tree, change: str) -> None:
    """Anything that would make Heat's own loading differ: None (ask Heat)."""
    if change == "deleted nested stack":
        tree.stack("s7", "Gone", deleted=True)
        tree.resource(20, "s4", "Gone", "s7")
    elif change == "repeated name":
        tree.resource(20, "s4", "Inner", "s5")
    elif change == "other template":
        tree.resource(20, "s4", "Old", "x", template=99)
    elif change == "encrypted":
        tree.resource(20, "s5", NAME, "x", _stub("srv-f", "dep-f"), encrypted=True)
    elif change == "no stored properties":
        tree.resource(20, "s5", NAME, "x")
    elif change == "no value property":
        tree.resource(20, "s5", NAME, "x", properties={"type": None})
    elif change == "stub of another tree":
        tree.conn.execute("UPDATE resource SET root_stack_id = 'other' WHERE id = 10")
    else:
        tree.conn.execute("DELETE FROM stack WHERE id = 'root'")
    assert tree.listing() is None


def test_an_unreadable_database_raises_heat_error(tmp_path: Path) -> None:
    with pytest.raises(exceptions.HeatError, match="Cannot read Heat's database"):
        db_listing.resources_named(SqliteDatabase(tmp_path / "missing.sqlite"), "root",
                                   NAME, 7)


class _Client:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def resources(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        self.calls.append((*args, kwargs))
        return [{"resource_name": NAME, "from": "api"}]


@pytest.mark.parametrize("source", ["database", "no database", "unsure", "unreadable",
                                    "not found"])
def test_save_outputs_reads_the_database_and_asks_heat_otherwise(
        tree: Tree, tmp_path: Path, source: str) -> None:
    from tripleo_flow.actions.deploy_outputs import _stubs

    client = _Client()
    db: SqliteDatabase | None = SqliteDatabase(tree.path)
    if source == "unsure":
        tree.resource(20, "s4", "Old", "x", template=99)
    tree.conn.commit()
    if source == "no database":
        db = None
    elif source == "unreadable":
        db = SqliteDatabase(tmp_path / "missing.sqlite")

    def database() -> SqliteDatabase | None:
        if source == "not found":  # e.g. the run record names another heat type
            raise exceptions.InvalidInput("The Heat of work was launched with --heat-type pod")
        return db

    found = _stubs(client, database, "oc", "root")  # type: ignore[arg-type]
    if source == "database":
        assert [r["physical_resource_id"] for r in found] == \
            ["oc-One-stub", "oc-Two-stub", "oc-Innermost-stub"]
        assert client.calls == []
    else:
        assert found == [{"resource_name": NAME, "from": "api"}]
        assert client.calls == [("oc", "root", 7, {"with_detail": True,
                                                   "resource_name": NAME})]
