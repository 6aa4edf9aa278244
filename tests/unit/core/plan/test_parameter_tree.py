"""The stack tree walk: which nested parameters get no value (table-driven, no Heat)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tripleo_flow.core.plan import parameter_tree
from tripleo_flow.core.plan import stack_request as sr

CHILD = {"parameters": {"Needed": {"type": "string"}, "Opt": {"type": "string", "default": ""}}}


def _walk(root: dict[str, Any], defaults: dict[str, Any] | None = None,
          registry: dict[str, str] | None = None,
          extra: dict[str, Any] | None = None) -> list[str]:
    files = {"overcloud.yaml": yaml.safe_dump(root).encode(),
             "child.yaml": yaml.safe_dump(CHILD).encode(),
             "env.yaml": yaml.safe_dump({"resource_registry": registry or {}}).encode()}
    for name, body in (extra or {}).items():
        files[name] = yaml.safe_dump(body).encode()
    plan_env = {"template": "overcloud.yaml", "environments": [{"path": "env.yaml"}],
                "parameter_defaults": defaults or {}}
    request = sr.stack_request("oc", files, plan_env)
    return [str(m) for m in parameter_tree.walk(request).missing]


def _res(kind: str, **props: Any) -> dict[str, Any]:
    return {"resources": {"R": {"type": kind, "properties": props}}}


MISSING = ["Needed of child.yaml (reached through R)"]


@pytest.mark.parametrize("root,defaults,expected", [
    # passed as a property by the parent: satisfied, whatever its value
    (_res("child.yaml", Needed={"get_attr": ["X", "y"]}), {}, []),
    # from parameter_defaults (they reach every nested stack)
    (_res("child.yaml"), {"Needed": "v"}, []),
    # neither: missing, named with its template and the resource path
    (_res("child.yaml"), {}, MISSING),
    # a property left out with AWS::NoValue does not count
    (_res("child.yaml", Needed={"get_param": "AWS::NoValue"}), {}, MISSING),
    # the root's own required parameter
    ({"parameters": {"Top": {"type": "string"}}}, {}, ["Top of overcloud.yaml"]),
    ({"parameters": {"Top": {"type": "string"}}}, {"Top": 1}, []),
])
def test_nested_parameter_sources(root: dict[str, Any], defaults: dict[str, Any],
                                  expected: list[str]) -> None:
    assert _walk(root, defaults) == expected


def test_registry_type_is_followed() -> None:
    assert _walk(_res("OS::TripleO::Child"), registry={"OS::TripleO::Child": "child.yaml"}) \
        == MISSING
    assert _walk(_res("OS::TripleO::Child"),
                 registry={"OS::TripleO::Child": "OS::Heat::None"}) == []


COND = {"parameters": {"Enable": {"type": "boolean", "default": False}},
        "conditions": {"on": {"equals": [{"get_param": "Enable"}, True]}},
        "resources": {"R": {"type": "child.yaml", "condition": "on"}}}
UNKNOWN_COND = {"conditions": {"on": {"equals": [{"get_attr": ["A", "b"]}, 1]}},
                "resources": {"R": {"type": "child.yaml", "condition": "on"}}}


@pytest.mark.parametrize("root,defaults,expected", [
    (COND, {}, []),                        # condition false: no such resource
    (COND, {"Enable": True}, MISSING),     # condition true
    (UNKNOWN_COND, {}, MISSING),           # unknown: kept (Heat might create it)
    ({"resources": {"R": {"type": "child.yaml", "condition": {"not": True}}}}, {}, []),
])
def test_conditions(root: dict[str, Any], defaults: dict[str, Any],
                    expected: list[str]) -> None:
    assert _walk(root, defaults) == expected


def _group(count: Any, **props: Any) -> dict[str, Any]:
    return {"parameters": {"Count": {"type": "number", "default": 0}},
            "resources": {"G": {"type": "OS::Heat::ResourceGroup", "properties": {
                "count": count, "resource_def": {"type": "child.yaml", "properties": props}}}}}


@pytest.mark.parametrize("root,defaults,expected", [
    (_group(2), {}, ["Needed of child.yaml (reached through G/0)"]),
    (_group(2, Needed="%index%"), {}, []),
    (_group({"get_param": "Count"}), {}, []),  # count 0: no member stack
    (_group({"get_param": "Count"}), {"Count": 1},
     ["Needed of child.yaml (reached through G/0)"]),
])
def test_resource_group_member(root: dict[str, Any], defaults: dict[str, Any],
                               expected: list[str]) -> None:
    assert _walk(root, defaults) == expected


ROLE = {"parameters": {"Services": {"type": "comma_delimited_list"},
                       "Data": {"type": "json"}},
        "resources": {"Chain": {"type": "OS::Heat::ResourceChain", "properties": {
            "resources": {"get_param": "Services"},
            "resource_properties": {"Data": {"get_param": "Data"}}}}}}
SERVICE = {"parameters": {"Data": {"type": "json"}, "ServiceImage": {"type": "string"}}}


@pytest.mark.parametrize("services,expected", [
    (["OS::TripleO::Services::A"], ["ServiceImage of service.yaml (reached through Role/Chain/0)"]),
    (["OS::TripleO::Services::None"], []),
    ([], []),
])
def test_resource_chain_types_come_from_the_parents_values(
        services: list[str], expected: list[str]) -> None:
    root = {"parameters": {"RoleServices": {"type": "comma_delimited_list", "default": services}},
            "resources": {"Role": {"type": "role.yaml", "properties": {
                "Services": {"get_param": "RoleServices"}, "Data": {}}}}}
    registry = {"OS::TripleO::Services::A": "service.yaml",
                "OS::TripleO::Services::None": "OS::Heat::None"}
    assert _walk(root, registry=registry,
                 extra={"role.yaml": ROLE, "service.yaml": SERVICE}) == expected


def test_root_only_parameters_do_not_reach_nested_stacks() -> None:
    files = {"overcloud.yaml": yaml.safe_dump(_res("child.yaml")).encode(),
             "child.yaml": yaml.safe_dump(CHILD).encode(),
             "env.yaml": b"parameters: {Needed: v}\n"}
    request = sr.stack_request("oc", files, {"template": "overcloud.yaml",
                                             "environments": [{"path": "env.yaml"}]})
    assert [str(m) for m in parameter_tree.walk(request).missing] == MISSING


def test_declared_lists_every_reached_template() -> None:
    root = {"resources": {"A": {"type": "child.yaml"}, "B": {"type": "other.yaml"}}}
    files = {"overcloud.yaml": yaml.safe_dump(root).encode(),
             "child.yaml": yaml.safe_dump(CHILD).encode(),
             "other.yaml": yaml.safe_dump(CHILD).encode()}
    tree = parameter_tree.walk(sr.stack_request("oc", files, {"template": "overcloud.yaml"}))
    assert tree.declared["Needed"] == ["child.yaml", "other.yaml"]
    assert [m.template for m in tree.missing] == ["child.yaml", "other.yaml"]


def test_a_template_that_reaches_itself_stops() -> None:
    loop = {"parameters": {"P": {"type": "string", "default": 1}},
            "resources": {"Again": {"type": "OS::Loop"}}}
    files = {"overcloud.yaml": yaml.safe_dump({"resources": {"R": {"type": "OS::Loop"}}}).encode(),
             "loop.yaml": yaml.safe_dump(loop).encode(),
             "env.yaml": b"resource_registry: {OS::Loop: loop.yaml}\n"}
    request = sr.stack_request("oc", files, {"template": "overcloud.yaml",
                                             "environments": [{"path": "env.yaml"}]})
    assert parameter_tree.walk(request).stacks == 2
