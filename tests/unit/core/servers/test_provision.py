"""Which node serves which managed instance (core/servers/provision.py): table-driven, no mocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.core.servers import baremetal, provision

SUBNET = baremetal.Subnet()


def _node(name: str, profile: str | None = None, state: str = "available",
          rc: str = "baremetal", **extra: Any) -> dict[str, Any]:
    caps = f"profile:{profile},boot_option:local" if profile else "boot_option:local"
    return {"uuid": f"uuid-{name}", "name": name, "provision_state": state,
            "maintenance": False, "instance_uuid": None, "resource_class": rc,
            "properties": {"capabilities": caps}, **extra}


def _roles(data: Any, stack: str = "oc") -> list[baremetal.Role]:
    return baremetal.parse(data, SUBNET, stack=stack)


NODES = [_node("n-ctl", "control"), _node("n-c1", "compute"), _node("n-c2", "compute"),
         _node("n-gpu", "compute", rc="gpu"), _node("n-busy", "compute", "active"),
         _node("n-maint", "compute", maintenance=True),
         _node("n-claimed", "compute", instance_uuid="x"), _node("n-plain")]


@pytest.mark.parametrize(("data", "record", "expected"), [
    # by profile, names generated from the role's format with the plan's name
    ([{"name": "Controller", "count": 1, "defaults": {"profile": "control"}},
      {"name": "Compute", "count": 2, "defaults": {"profile": "compute"}}], {},
     {"oc-controller-0": "n-ctl", "oc-compute-0": "n-c1", "oc-compute-1": "n-c2"}),
    # an explicit node name wins over every other criterion; it is served first
    ([{"name": "Compute", "count": 2, "defaults": {"profile": "compute"},
       "instances": [{"hostname": "a"}, {"hostname": "b", "name": "n-c1"}]}], {},
     {"a": "n-c2", "b": "n-c1"}),
    # a resource class
    ([{"name": "Gpu", "instances": [{"hostname": "g", "resource_class": "gpu"}]}], {},
     {"g": "n-gpu"}),
    # no criteria: any available node of the default resource class, by name
    ([{"name": "Any", "count": 1}], {}, {"oc-any-0": "n-c1"}),
    # other capabilities must match too
    ([{"name": "C", "instances": [{"hostname": "c", "capabilities": {"boot_option": "local"},
                                   "profile": "control"}]}], {}, {"c": "n-ctl"}),
    # the recorded node keeps its host name; the other recorded node is not taken
    ([{"name": "Compute", "count": 2, "defaults": {"profile": "compute"}}],
     {"oc-compute-1": {"node": "uuid-n-busy"}, "gone-0": {"node": "uuid-n-c1"}},
     {"oc-compute-0": "n-c2", "oc-compute-1": "n-busy"}),
    # an undeployed recorded node serves its host name again first
    ([{"name": "Compute", "count": 1, "defaults": {"profile": "compute"}}],
     {"oc-compute-0": {"node": "uuid-n-c2"}}, {"oc-compute-0": "n-c2"}),
])
def test_choose(data: Any, record: dict[str, Any], expected: dict[str, str]) -> None:
    chosen = provision.choose(_roles(data), NODES, record)
    assert {c["hostname"]: c["node_name"] for c in chosen} == expected
    for item in chosen:
        assert item["deploy"] == (item["node_name"] != "n-busy")
        assert item["image"] == provision.DEFAULT_IMAGE


@pytest.mark.parametrize(("data", "record", "message"), [
    ([{"name": "Controller", "count": 2, "defaults": {"profile": "control"}}], {},
     r"No available node fits oc-controller-1 \(role Controller, resource class "
     r"'baremetal', profile 'control'\)"),
    ([{"name": "C", "instances": [{"hostname": "x", "name": "n-busy"}]}], {},
     r"Node 'n-busy' cannot serve x \(role C\): it is 'active'"),
    ([{"name": "C", "instances": [{"hostname": "x", "name": "n-maint"}]}], {},
     "maintenance"),
    ([{"name": "C", "instances": [{"hostname": "x", "name": "n-c1"}]}],
     {"y": {"node": "uuid-n-c1"}}, "it serves y"),
    ([{"name": "C", "instances": [{"hostname": "x", "name": "nope"}]}], {},
     r"No available node fits x \(role C, node 'nope'\)"),
])
def test_choose_refuses(data: Any, record: dict[str, Any], message: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=message):
        provision.choose(_roles(data), NODES, record)


@pytest.mark.parametrize(("node", "why"), [
    (_node("a", "compute"), None),
    (_node("a", "control"), "capability profile is 'control', not 'compute'"),
    (_node("a", "compute", "manageable"), "'manageable', not 'available'"),
    (_node("a", "compute", rc="gpu"), "resource class is 'gpu'"),
    (_node("a", "compute", instance_uuid="i"), "already serves"),
])
def test_mismatch(node: dict[str, Any], why: str | None) -> None:
    inst = baremetal.Instance("h", None, managed=True, profile="compute")
    found = provision.mismatch(inst, node)
    assert found == why if why is None else why in str(found)


@pytest.mark.parametrize(("data", "hostnames"), [
    # generated names skip those listed
    ([{"name": "C", "count": 3, "hostname_format": "%stackname%-c-%index%",
       "instances": [{"hostname": "oc-c-1"}]}], ["oc-c-1", "oc-c-0", "oc-c-2"]),
    # managed and pre-provisioned in one role
    ([{"name": "C", "count": 2, "instances": [{"hostname": "pre", "managed": False}]}],
     ["pre", "oc-c-0"]),
])
def test_hostnames(data: Any, hostnames: list[str]) -> None:
    roles = _roles(data)
    assert [i.hostname for i in roles[0].instances] == hostnames
    assert provision.missing(roles, {}) == [i.hostname for i in roles[0].instances
                                            if i.managed]


@pytest.mark.parametrize(("record", "hostnames", "expected"), [
    ({"a": {"node": "1"}, "b": {"node": "2"}}, None, ["a", "b"]),
    ({"a": {"node": "1"}, "b": {"node": "2"}}, ["b", "b"], ["b"]),
    ({}, None, []),
])
def test_release(record: dict[str, Any], hostnames: list[str] | None,
                 expected: list[str]) -> None:
    assert [r["hostname"] for r in provision.release(record, hostnames)] == expected


def test_release_names_unknown_host_names() -> None:
    with pytest.raises(exceptions.InvalidInput, match="No node was provisioned for z"):
        provision.release({"a": {"node": "1"}}, ["z"])


@pytest.mark.parametrize("data", [[1], {"a": 1}, {"a": {"node": 3}}])
def test_a_broken_record_is_refused(data: Any) -> None:
    with pytest.raises(exceptions.InvalidInput, match="provisioned-nodes.yaml"):
        provision.check_record(data)


def test_the_shipped_managed_example_parses() -> None:
    path = (Path(__file__).resolve().parents[4] / "tripleo_flow" / "examples"
            / "baremetal-deployment-managed.yaml")
    roles = _roles(yaml.safe_load(path.read_text()), stack="overcloud")
    assert [(i.hostname, i.profile, i.fixed_ip) for r in roles for i in r.instances] == [
        ("overcloud-controller-0", "control", None), ("compute-a", "compute", "192.168.24.30"),
        ("overcloud-novacompute-0", "compute", None)]
