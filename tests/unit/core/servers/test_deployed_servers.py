"""Pre-provisioned servers: the environment generated from a baremetal deployment file."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.core.servers import baremetal, deployed_servers

ROOT = Path(__file__).resolve().parents[4]
#: Hand-made facts about the real templates, carried by the tests (tests/reference/README.md).
REFERENCE = ROOT / "tests" / "reference"
EXAMPLE = ROOT / "tripleo_flow" / "examples" / "baremetal-deployment.yaml"
#: What the operator chose in the reference files, not what provisioning generates.
OPERATOR_KEYS = {"NeutronPublicInterface", "NtpServer"}
SUBNET = baremetal.Subnet()
THT18_FILES = [deployed_servers.DEPLOYED_NETWORKS, "overcloud.yaml"]


def _example() -> Any:
    return yaml.safe_load(EXAMPLE.read_text())


def _generate(data: Any, stack: str, files: list[str],
              previous: dict[str, Any] | None = None) -> dict[str, Any]:
    roles = baremetal.parse(data, SUBNET)
    return deployed_servers.generate(roles, SUBNET, stack, files, previous)


def test_tht18_shape_is_what_the_provision_steps_generate() -> None:
    reference = yaml.safe_load((REFERENCE / "tht18-deployed-servers-environment.yaml")
                               .read_text())
    env = _generate(_example(), "overcloud18", THT18_FILES)
    assert env["resource_registry"] == reference["resource_registry"]
    expected = {k: v for k, v in reference["parameter_defaults"].items()
                if k not in OPERATOR_KEYS}
    assert env["parameter_defaults"] == expected


def test_tht12_shape_is_the_ussuri_deployed_server_environment() -> None:
    reference = yaml.safe_load((REFERENCE / "tht12-deployed-servers-environment.yaml")
                               .read_text())
    data = _example()
    data[0]["instances"][0]["hostname"] = "controller0"
    data[1]["instances"][0]["hostname"] = "compute0"
    env = _generate(data, "overcloud", ["overcloud.yaml"])
    # The reference was used with the templates' own deployed-server environment
    # enabled too, whose server mappings the generated one carries.
    assert env["resource_registry"] == {
        **reference["resource_registry"],
        "OS::TripleO::Server": "deployed-server/deployed-server.yaml",
        "OS::TripleO::DeployedServer::Bootstrap": "OS::Heat::None"}
    generated = env["parameter_defaults"]
    for key, value in reference["parameter_defaults"].items():
        if key not in OPERATOR_KEYS:
            assert generated[key] == value, key


def test_addresses_are_kept_across_redeploys_and_freed_with_their_host() -> None:
    data = _example()
    del data[1]["instances"][0]["networks"]          # compute-0 from the pool
    first = _generate(data, "oc", THT18_FILES)
    ports = first["parameter_defaults"]["DeployedServerPortMap"]
    vip = first["parameter_defaults"]["ControlPlaneVipData"]["fixed_ips"][0]["ip_address"]
    assert vip == "192.168.24.5"
    assert ports["compute-0-ctlplane"]["fixed_ips"][0]["ip_address"] == "192.168.24.6"

    # One more compute: existing addresses kept, the next free one given.
    more = copy.deepcopy(data)
    more[1]["count"] = 2
    more[1]["instances"].insert(0, {"hostname": "compute-1", "managed": False})
    second = _generate(more, "oc", THT18_FILES, previous=first)
    params = second["parameter_defaults"]
    assert params["ComputeCount"] == 2
    assert params["ControlPlaneVipData"]["fixed_ips"][0]["ip_address"] == vip
    addresses = {h: p["fixed_ips"][0]["ip_address"]
                 for h, p in params["DeployedServerPortMap"].items()}
    assert addresses == {"controller-0-ctlplane": "192.168.24.10",
                         "compute-1-ctlplane": "192.168.24.7",
                         "compute-0-ctlplane": "192.168.24.6"}
    assert params["HostnameMap"] == {"oc-controller-0": "controller-0",
                                     "oc-novacompute-0": "compute-1",
                                     "oc-novacompute-1": "compute-0"}

    # compute-0 removed: its address is free again (and the VIP still kept).
    fewer = copy.deepcopy(more)
    fewer[1]["count"] = 1
    fewer[1]["instances"] = [fewer[1]["instances"][0]]
    third = _generate(fewer, "oc", THT18_FILES, previous=second)
    addresses = {h: p["fixed_ips"][0]["ip_address"]
                 for h, p in third["parameter_defaults"]["DeployedServerPortMap"].items()}
    assert addresses == {"controller-0-ctlplane": "192.168.24.10",
                         "compute-1-ctlplane": "192.168.24.7"}
    again = copy.deepcopy(fewer)
    again[1]["count"] = 2
    again[1]["instances"].append({"hostname": "compute-2", "managed": False})
    fourth = _generate(again, "oc", THT18_FILES, previous=third)
    assert fourth["parameter_defaults"]["DeployedServerPortMap"]["compute-2-ctlplane"][
        "fixed_ips"][0]["ip_address"] == "192.168.24.6"


def test_an_exhausted_pool_names_the_pool_and_what_to_do() -> None:
    subnet = baremetal.Subnet(allocation_start="192.168.24.5", allocation_end="192.168.24.6")
    data = [{"name": "Compute", "count": 2, "instances": [
        {"hostname": "c0", "managed": False}, {"hostname": "c1", "managed": False}]}]
    roles = baremetal.parse(data, subnet)
    with pytest.raises(exceptions.InvalidInput, match=r"192\.168\.24\.5-192\.168\.24\.6.*c1"):
        deployed_servers.generate(roles, subnet, "oc", THT18_FILES)


@pytest.mark.parametrize(("data", "message"), [
    ({"name": "Controller"}, "not a non-empty list"),
    ([{"name": "Controller", "count": 2, "defaults": {"managed": False},
       "instances": [{"hostname": "c0"}]}], "count of 2"),
    ([{"name": "C", "instances": [{"managed": False}]}], "no hostname"),
    ([{"name": "C", "count": 600}, {"name": "D", "count": 401}],
     r"more than 1000 servers \(role D reaches 1001\).*nodes_max"),
    ([{"name": "C", "instances": [{"managed": "yes"}]}], "managed is true or false"),
    ([{"name": "C", "instances": [{"profile": 3}]}], "profile 3 is not a name"),
    ([{"name": "C", "instances": [{"capabilities": "x"}]}], "capabilities is not a mapping"),
    ([{"name": "C", "instances": [{"hostname": "c0", "managed": False,
                                   "networks": [{"network": "ctlplane",
                                                 "fixed_ip": "10.0.0.1"}]}]}],
     "not in the control plane subnet"),
    ([{"name": "C", "instances": [{"hostname": "c0", "managed": False,
                                   "networks": [{"network": "external", "fixed_ip": "x"}]}]}],
     "fixed_ip 'x' is not an IP address"),
    ([{"name": "C", "instances": [{"hostname": "c0", "managed": False,
                                   "networks": [{"network": "external", "vlan": 3}]}]}],
     r"unknown keys \['vlan'\]"),
    ([{"name": "C", "instances": [{"hostname": "c0", "managed": False,
                                   "network_config": "x"}]}], "network_config is not a"),
    ([{"name": "C", "instances": [{"hostname": "c0", "managed": False},
                                  {"hostname": "c0", "managed": False}]}], "used twice"),
    ([{"name": "C", "bogus": 1}], "unknown keys"),
    ([{"name": "C", "count": True}], "count"),
])
def test_bad_files_are_refused_with_what_is_wrong(data: Any, message: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=message):
        baremetal.parse(data, SUBNET)


def test_two_hosts_with_one_fixed_ip_are_refused() -> None:
    data = _example()
    data[1]["instances"][0]["networks"][0]["fixed_ip"] = "192.168.24.10"
    with pytest.raises(exceptions.InvalidInput, match="both have the fixed IP"):
        _generate(data, "oc", THT18_FILES)


def test_a_wrong_subnet_is_refused() -> None:
    with pytest.raises(exceptions.InvalidInput, match=r"\[ctlplane\]"):
        baremetal.Subnet(allocation_start="10.0.0.5")
