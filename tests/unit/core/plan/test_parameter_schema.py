"""Pure core of the parameter schema: flattening, value checks, the validate request."""

from __future__ import annotations

import json

import pytest

from tripleo_flow import exceptions
from tripleo_flow.core.plan import heatfiles, parameter_schema

SCHEMA = {n: {"type": t} for n, t in [("S", "string"), ("N", "number"), ("J", "json"),
                                      ("L", "comma_delimited_list"), ("B", "boolean")]}


@pytest.mark.parametrize("name,value", [
    ("S", "x"), ("S", 3), ("N", 3), ("N", 2.5), ("N", "4"), ("J", {"a": 1}), ("J", [1]),
    ("J", '{"a": 1}'), ("L", "a,b"), ("L", ["a", 1]), ("B", True), ("B", "yes"), ("B", 0),
])
def test_values_that_fit(name: str, value: object) -> None:
    parameter_schema.check_values("p", SCHEMA, {name: value})


@pytest.mark.parametrize("name,value", [
    ("S", {"a": 1}), ("N", "many"), ("N", True), ("J", "{bad"), ("J", 3), ("L", {"a": 1}),
    ("L", [[1]]), ("B", "maybe"), ("B", 2), ("Unknown", 1),
])
def test_values_refused_name_the_parameter(name: str, value: object) -> None:
    with pytest.raises(exceptions.InvalidParameter) as err:
        parameter_schema.check_values("p", SCHEMA, {name: value})
    assert repr(name) in str(err.value)


def test_flatten_walks_nested_stacks_breadth_first() -> None:
    answer = {
        "Parameters": {"Count": {"Type": "Number", "Default": 1, "AllowedValues": [1, 2]}},
        "NestedParameters": {"Role": {
            "Parameters": {"Count": {"Type": "String"}, "Extra": {"Type": "Json",
                                                                   "NoEcho": "true"}},
            "NestedParameters": {"Group": {"Parameters": {"Extra": {"Type": "Json"}}}}}},
    }
    flat = parameter_schema.flatten(answer, {"Extra": {"a": 1}})
    assert flat["Count"]["type"] == "number" and flat["Count"]["paths"] == ["", "Role"]
    assert flat["Count"]["constraints"] == {"AllowedValues": [1, 2]}
    assert flat["Count"]["value_set"] is False
    assert flat["Extra"]["paths"] == ["Role", "Role/Group"] and flat["Extra"]["hidden"]
    assert flat["Extra"]["value"] == {"a": 1} and flat["Extra"]["value_set"] is True


def test_cache_key_changes_with_any_digest() -> None:
    key = parameter_schema.cache_key({"a": "1", "b": "2"})
    assert key == parameter_schema.cache_key({"b": "2", "a": "1"})
    assert key != parameter_schema.cache_key({"a": "1", "b": "3"})
    assert key != parameter_schema.cache_key({"a": "1", "c": "2"})


def test_validate_request_resolves_relative_references() -> None:
    files = {
        "top.yaml": b"resources:\n  R: {type: sub/role.yaml}\n",
        "sub/role.yaml": b"resources:\n  N: {type: OS::Node}\n"
                         b"  C: {properties: {config: {get_file: ../scripts/run.sh}}}\n",
        "scripts/run.sh": b"#!/bin/sh\n",
        "env/registry.yaml": b"resource_registry:\n  OS::Node: ../node.yaml\n",
        "node.yaml": b"parameters: {name: {type: string}}\n",
    }
    env = {"template": "top.yaml", "environments": [{"path": "env/registry.yaml"},
                                                    {"data": {"parameter_defaults": {"X": 1}}}],
           "parameter_defaults": {"Y": 2}}
    req = heatfiles.build_request(files, env)
    base = heatfiles.BASE_URL
    assert req["template"]["resources"]["R"]["type"] == base + "sub/role.yaml"
    role = json.loads(req["files"][base + "sub/role.yaml"])
    assert role["resources"]["C"]["properties"]["config"]["get_file"] == base + "scripts/run.sh"
    assert req["files"][base + "scripts/run.sh"] == "#!/bin/sh\n"
    registry = json.loads(req["files"][base + "env/registry.yaml"])
    assert registry["resource_registry"]["OS::Node"] == base + "node.yaml"
    assert base + "node.yaml" in req["files"]
    assert len(req["environment_files"]) == 3
    last = json.loads(req["files"][req["environment_files"][-1]])
    assert last == {"parameter_defaults": {"Y": 2}}


def test_validate_request_names_a_missing_file() -> None:
    with pytest.raises(exceptions.InvalidTemplate) as err:
        heatfiles.build_request({"top.yaml": b"resources: {R: {type: gone.yaml}}\n"},
                                   {"template": "top.yaml"})
    assert "gone.yaml" in str(err.value) and "top.yaml" in str(err.value)


@pytest.mark.parametrize(("reference", "reads"), [
    ("{get_file: plan-environment.yaml}", "plan-environment.yaml"),
    ("{get_file: sub/../plan-environment.yaml}", "plan-environment.yaml"),
    ("{get_file: 'file:///plan/plan-environment.yaml'}", "plan-environment.yaml"),
    ("{get_file: .tripleo-flow/manifest.json}", ".tripleo-flow/manifest.json"),
    ("{get_file: env/mine.yaml}", "env/mine.yaml"),  # a user environment with a password
])
def test_a_template_reading_the_plans_secrets_is_refused(reference: str, reads: str) -> None:
    files = {"top.yaml": f"outputs:\n  Leak:\n    value: {reference}\n".encode(),
             "plan-environment.yaml": b"passwords: {AdminPassword: pw-0123456789}\n",
             ".tripleo-flow/manifest.json": b"{}",
             "env/mine.yaml": b"parameter_defaults: {db_password: pw-9876543210}\n"}
    with pytest.raises(exceptions.InvalidTemplate) as err:
        heatfiles.build_request(files, {"template": "top.yaml"})
    assert f"it reads {reads!r}" in str(err.value) and "pass the values" in str(err.value)
    # As a nested template too.
    files["top.yaml"] = b"resources:\n  R: {type: plan-environment.yaml}\n"
    with pytest.raises(exceptions.InvalidTemplate):
        heatfiles.build_request(files, {"template": "top.yaml"})


def test_a_template_reading_an_environment_without_secrets_is_kept() -> None:
    files = {"top.yaml": b"outputs:\n  Data: {value: {get_file: env/public.yaml}}\n",
             "env/public.yaml": b"parameter_defaults: {ComputeCount: 3, KeyName: mine}\n"}
    req = heatfiles.build_request(files, {"template": "top.yaml"})
    assert "ComputeCount: 3" in req["files"][heatfiles.BASE_URL + "env/public.yaml"]
