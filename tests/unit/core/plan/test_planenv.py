"""Table-driven tests of tripleo_flow.core.plan.planenv."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import planenv


@pytest.mark.parametrize(
    ("plan_files", "environments"),
    [
        ([], []),
        (["overcloud.yaml"], []),
        (["overcloud-resource-registry-puppet.yaml"],
         [{"path": "overcloud-resource-registry-puppet.yaml"}]),
        (["overcloud-resource-registry-puppet.j2.yaml"],
         [{"path": "overcloud-resource-registry-puppet.yaml"}]),
    ],
)
def test_default_plan_environment(plan_files: list[str], environments: list) -> None:
    env = planenv.default_plan_environment("mine", "A plan", plan_files=plan_files)
    assert env == {
        "version": 1.0,
        "name": "mine",
        "description": "A plan",
        "template": "overcloud.yaml",
        "environments": environments,
        "parameter_defaults": {},
        "passwords": {},
    }
    assert list(env) == ["version", "name", "description", "template", "environments",
                         "parameter_defaults", "passwords"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"version: 1.0\nname: p\ntemplate: overcloud.yaml\n"
         b"environments:\n  - path: a.yaml\n  - data: {parameter_defaults: {X: 1}}\n",
         {"version": 1.0, "name": "p", "template": "overcloud.yaml",
          "environments": [{"path": "a.yaml"}, {"data": {"parameter_defaults": {"X": 1}}}],
          "parameter_defaults": {}, "passwords": {}}),
        (b"", {"environments": [], "parameter_defaults": {}, "passwords": {}}),
        (b"name: p\nparameter_defaults: {A: 1}\npasswords: {B: c}\n",
         {"name": "p", "environments": [], "parameter_defaults": {"A": 1},
          "passwords": {"B": "c"}}),
    ],
)
def test_parse_plan_environment(data: bytes, expected: dict) -> None:
    assert planenv.parse_plan_environment(data, "plan-environment.yaml") == expected


@pytest.mark.parametrize(
    ("data", "fragments"),
    [
        (b"name: [p\n", ["line 2"]),
        (b"- a\n- b\n", ["mapping", "list"]),
        (b"environments: a.yaml\n", ["'environments' must be a list"]),
        (b"environments:\n  - a.yaml\n", ["entry 1", "{path"]),
        (b"environments:\n  - {path: a.yaml, data: {}}\n", ["entry 1"]),
        (b"environments:\n  - path: a.yaml\n  - {file: b.yaml}\n", ["entry 2"]),
        (b"environments:\n  - {path: ''}\n", ["entry 1"]),
        (b"environments:\n  - {data: [1]}\n", ["entry 1"]),
        (b"parameter_defaults: [1]\n", ["parameter_defaults", "mapping"]),
        (b"passwords: x\n", ["passwords"]),
        (b"template: [a]\n", ["template"]),
        (b"name: \xff\n", ["UTF-8"]),
    ],
)
def test_parse_plan_environment_errors(data: bytes, fragments: list[str]) -> None:
    with pytest.raises(exceptions.InvalidTemplate) as info:
        planenv.parse_plan_environment(data, "plans/p/plan-environment.yaml")
    assert info.value.path == "plans/p/plan-environment.yaml"
    for fragment in fragments:
        assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("data", "line", "column"),
    [
        (b"a: 1\nb: [\n", 3, 1),
        (b"a: 1\n  b: 2\n", 2, 4),
        (b"a: {x: 1\n", 2, 1),
    ],
)
def test_load_yaml_error_names_line(data: bytes, line: int, column: int) -> None:
    with pytest.raises(exceptions.InvalidTemplate) as info:
        safe_yaml.load_yaml(data, "x.yaml")
    assert "'x.yaml'" in str(info.value)
    assert f"line {line}, column {column}" in str(info.value)


@pytest.mark.parametrize(
    "obj",
    [
        {"version": 1.0, "name": "p", "environments": [{"path": "a.yaml"}]},
        {"z": 1, "a": {"nested": [1, "two", None, True]}},
        {"key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"},
        {"trailing": "line with space \nnext"},
        [],
        {"unicode": "héllo"},
    ],
)
def test_dump_yaml_round_trips(obj: Any) -> None:
    data = safe_yaml.dump_yaml(obj)
    assert isinstance(data, bytes)
    assert safe_yaml.load_yaml(data, "x.yaml") == obj


def test_dump_yaml_style() -> None:
    shared = {"a": 1}
    text = safe_yaml.dump_yaml({"z": [shared, shared], "a": "x\ny\n", "m": {"k": "v"}}).decode()
    assert text == "z:\n- a: 1\n- a: 1\na: |\n  x\n  y\nm:\n  k: v\n"
    assert "&" not in text and "{" not in text


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (["a.j2.yaml", "b.yaml"], {"a.j2.yaml", "a.yaml", "b.yaml"}),
        (["p/role.role.j2.yaml", "n/network.network.j2.yaml"],
         {"p/role.role.j2.yaml", "n/network.network.j2.yaml"}),
    ],
)
def test_available_files(files: list[str], expected: set[str]) -> None:
    assert planenv.available_files(files) == expected


def test_yaml_parser_fallback() -> None:
    assert yaml.safe_load("a: {b:[c, d]}") == safe_yaml.load_yaml(b"a: {b:[c, d]}", "x")
