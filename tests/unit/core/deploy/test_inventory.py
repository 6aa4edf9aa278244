"""TripleO's inventory from stack outputs (core/deploy/inventory.py): table-driven, no mocks.

The rules are tripleo-common 18.0.0's (``TripleoInventory`` merged by
``TripleoInventories``); the differential test holds them against tripleo-common itself
on the real stacks (tests/functional/overcloud/test_tripleo_common_oracle.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.core.deploy import inventory as inv


def outputs() -> dict[str, Any]:
    return {
        "RoleNetHostnameMap": {
            "Controller": {"ctlplane": ["oc-controller-0.ctlplane.localdomain"],
                           "internal_api": ["oc-controller-0.internalapi.localdomain"],
                           "canonical": ["oc-controller-0.localdomain"]},
            "CephStorage": {"ctlplane": ["oc-ceph-0.ctlplane.localdomain"]},
            "Unused": {},
            "NoCtlplane": {"storage": ["x.storage.localdomain"]}},
        "RoleNetIpMap": {
            "Controller": {"ctlplane": ["192.168.24.5"], "internal_api": ["172.16.2.5"]},
            "CephStorage": {"ctlplane": ["192.168.24.9"]},
            "NoCtlplane": {"storage": ["172.16.1.1"]}},
        "ServerIdData": {"server_ids": {"Controller": ["c0"], "CephStorage": ["s0"]},
                         "bootstrap_server_id": "c0"},
        "EnabledServices": {"Controller": ["keystone", "ceph_mon"],
                            "CephStorage": ["ceph_osd", "ceph_mon"],
                            "Absent": ["nova_compute"]},
        "VipMap": {"ctlplane": "192.168.24.2", "internal_api": "172.16.2.2", "storage": "x",
                   "redis": "172.16.2.3", "external": ""},
        "BlacklistedHostnames": ["oc-compute-3", ""],
        "KeystoneURL": "http://10.0.0.5:5000",
        "EndpointMap": {"HorizonPublic": {"uri": "http://10.0.0.5/dashboard"}},
    }


ENVIRONMENT = {"parameter_defaults": {"AdminPassword": "secret", "ContainerCli": "podman"}}


def render() -> dict[str, Any]:
    return inv.render("oc", outputs(), ENVIRONMENT, "tripleo-admin", "/usr/bin/python3")


@pytest.mark.parametrize("group,expected", [
    ("Controller", {"children": {"oc_Controller": {}}}),
    ("oc_CephStorage", {"hosts": {"oc-ceph-0": {
        "ansible_host": "192.168.24.9", "deploy_server_id": "s0", "ctlplane_ip": "192.168.24.9",
        "ctlplane_hostname": "oc-ceph-0.ctlplane.localdomain"}},
        "vars": {"ansible_ssh_user": "tripleo-admin", "bootstrap_server_id": "c0",
                 "tripleo_role_name": "CephStorage", "tripleo_role_networks": ["ctlplane"],
                 "serial": 1}}),
    ("oc_oc", {"children": {"oc_CephStorage": {}, "oc_Controller": {}},
               "vars": {"ctlplane_vip": "192.168.24.2", "internal_api_vip": "172.16.2.2",
                        "redis_vip": "172.16.2.3", "container_cli": "podman"}}),
    ("oc", {"children": {"oc_allovercloud": {}}}),
    ("oc_allovercloud", {"children": {"oc_oc": {}}}),
    ("oc_ceph_mon", {"children": {"oc_CephStorage": {}, "oc_Controller": {}},
                     "vars": {"ansible_ssh_user": "tripleo-admin"}}),
    ("mons", {"children": {"oc_mons": {}}}),
    ("oc_mons", {"children": {"oc_CephStorage": {}, "oc_Controller": {}},
                 "vars": {"ansible_ssh_user": "tripleo-admin"}}),
    ("oc_osds", {"children": {"oc_CephStorage": {}},
                 "vars": {"ansible_ssh_user": "tripleo-admin"}}),
    ("oc_excluded_overcloud", {"hosts": {"oc-compute-3": {}}}),
])
def test_groups(group: str, expected: dict[str, Any]) -> None:
    assert render()[group] == expected


@pytest.mark.parametrize("absent", [
    "oc_Unused", "oc_NoCtlplane", "NoCtlplane", "nova_compute", "oc_nova_compute", "oc_oc_oc"])
def test_left_out(absent: str) -> None:
    """A role with no host names, or none on ctlplane, has no group; a service of roles
    without servers has none either."""
    assert absent not in render()


def test_controller_host_names_every_network() -> None:
    host = render()["oc_Controller"]["hosts"]["oc-controller-0"]
    assert host == {"ansible_host": "192.168.24.5", "deploy_server_id": "c0",
                    "ctlplane_ip": "192.168.24.5", "internal_api_ip": "172.16.2.5",
                    "ctlplane_hostname": "oc-controller-0.ctlplane.localdomain",
                    "internal_api_hostname": "oc-controller-0.internalapi.localdomain",
                    "canonical_hostname": "oc-controller-0.localdomain"}


def test_undercloud() -> None:
    assert render()["Undercloud"] == {"hosts": {"undercloud": {}}, "vars": {
        "ansible_host": "localhost", "ansible_connection": "local",
        "ansible_remote_tmp": "/tmp/ansible-${USER}", "any_error_fatal": True,
        "max_fail_percentage": 0, "ansible_python_interpreter": "/usr/bin/python3",
        "undercloud_service_list": ["tripleo_ironic_conductor"], "plan": "oc", "plans": ["oc"],
        "overcloud_admin_password": "secret", "overcloud_keystone_url": "http://10.0.0.5:5000",
        "overcloud_horizon_url": "http://10.0.0.5/dashboard"}}


def test_no_servers_only_undercloud_and_excluded() -> None:
    rendered = inv.render("oc", {}, {}, "u", "/py")
    assert sorted(rendered) == ["Undercloud", "excluded_overcloud", "oc_excluded_overcloud"]
    assert rendered["Undercloud"]["vars"]["plans"] == ["oc"]
    assert "overcloud_admin_password" not in rendered["Undercloud"]["vars"]


def test_role_with_names_but_no_addresses_is_refused() -> None:
    data = outputs()
    data["RoleNetIpMap"]["Controller"]["ctlplane"] = []
    with pytest.raises(inv.InventoryError, match="Controller has host names but no address"):
        inv.render("oc", data, {}, "u", "/py")


@pytest.mark.parametrize("ip_map", [None, "absent"])
def test_role_absent_from_ip_map_is_refused(ip_map: str | None) -> None:
    data = outputs()
    if ip_map is None:
        data["RoleNetIpMap"]["CephStorage"] = None
    else:
        del data["RoleNetIpMap"]["CephStorage"]
    for make in (inv.render, inv.render_ussuri):
        with pytest.raises(inv.InventoryError, match="CephStorage has host names in the"):
            make("oc", data, {}, "u", "/py")


def test_undercloud_role_is_refused_but_on_ussuri() -> None:
    data = {"RoleNetHostnameMap": {"Undercloud": {"ctlplane": ["uc.ctlplane.localdomain"]}},
            "RoleNetIpMap": {"Undercloud": {"ctlplane": ["192.168.24.1"]}}}
    with pytest.raises(inv.InventoryError, match="role named Undercloud"):
        inv.render("oc", data, {}, "u", "/py")
    # tripleo-common 12.1.0's inventory: the role's group replaces the undercloud's.
    assert inv.render_ussuri("oc", data, {}, "u", "/py")["Undercloud"]["hosts"] == {
        "uc": {"ansible_host": "192.168.24.1", "ctlplane_ip": "192.168.24.1",
               "ctlplane_hostname": "uc.ctlplane.localdomain"}}


@pytest.mark.parametrize("fqdn,short", [
    ("Overcloud-Controller-0.ctlplane.localdomain", "overcloud-controller-0"),
    ("compute-0", "compute-0"), ("a.ctlplane.b.ctlplane.c", "a")])
def test_short_name(fqdn: str, short: str) -> None:
    assert inv.short_name(fqdn) == short
