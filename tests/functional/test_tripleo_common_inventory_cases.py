"""tripleo-common's own inventory test cases, differentially: its code and ours on the same outputs.

The situations of tripleo-common 18.0.0's ``tripleo_common/tests/test_inventory.py``
(several roles, a role without host names, without ctlplane addresses or absent from
``RoleNetIpMap``, ``ServerIdData`` variations, other SSH users and interpreters,
excluded hosts, an ``Undercloud`` role in the stack, VIPs of networks no role has,
ceph groups, services of the undercloud, a stack without outputs), with fixture data
of our own making in the shape of Heat's outputs.  For each, tripleo-common itself
(``tests/oracle/tripleo_common_inventory.py`` in its pinned virtualenv, given a Heat
client of its own making: no Heat server) writes the inventory as a deploy does, and
:mod:`tripleo_flow.core.deploy.inventory` renders it in-process: both must load to the same
data, or both refuse.  Where we differ on purpose, the case names the difference and
why (``allowed``); each named difference must still be there.

Not ported, and why: the Neutron cases (``_inventory_from_neutron_data``,
``NeutronData``, ``<net>_cidr`` ...): tripleo-flow's deployments have no Neutron, and
tripleo-common without a session, as on a deploy with pre-provisioned servers, reads
none; the dynamic inventory (``list()``'s host lists and ``_meta``): we write only the
static file; ``write_static_inventory``'s ``extra_vars`` and several stacks in one
inventory: ``generate_tripleo_ansible_inventory``, the deploy's path, uses neither,
and tripleo-flow renders one plan's; ``StackOutputs``' lazy loading and a missing
stack: Heat-client plumbing (we render the outputs of a stack we have).

Skips when a tripleo-common virtualenv is missing (``tools/setup-tripleo-common.sh``),
FAILS instead in CI (``TRIPLEO_FLOW_CI=1``).
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.oracle import reference as oracle
from tripleo_flow.core.deploy import inventory

pytestmark = pytest.mark.functional

SCRIPT = Path(oracle.ROOT) / "tests" / "oracle" / "tripleo_common_inventory.py"
PYTHON = "Undercloud/vars/ansible_python_interpreter"

BASE: dict[str, Any] = {
    "EnabledServices": {
        "Controller": ["keystone", "haproxy", "ceph_mon"],
        "Compute": ["nova_compute", "kernel", "ceph_client"],
        "Custom": ["kernel", "Sample_Service"],
    },
    "KeystoneURL": "https://192.0.2.250:13000",
    "ServerIdData": {
        "server_ids": {"Controller": ["s-ctl-0", "s-ctl-1", "s-ctl-2"], "Compute": ["s-cmp-0"],
                       "Custom": ["s-cus-0"]},
        "bootstrap_server_id": "s-ctl-0",
    },
    "RoleNetHostnameMap": {
        "Controller": {
            "ctlplane": [f"ctl-{i}.ctlplane.example.net" for i in range(3)],
            "internal_api": [f"ctl-{i}.internalapi.example.net" for i in range(3)],
        },
        "Compute": {"ctlplane": ["cmp-0.ctlplane.example.net"]},
        "Custom": {"ctlplane": ["cus-0.ctlplane.example.net"]},
    },
    "RoleNetIpMap": {
        "Controller": {"ctlplane": ["192.0.2.10", "192.0.2.11", "192.0.2.12"],
                       "internal_api": ["198.51.100.10", "198.51.100.11", "198.51.100.12"]},
        "Compute": {"ctlplane": ["192.0.2.20"]},
        "Custom": {"ctlplane": ["192.0.2.30"]},
    },
    "VipMap": {"ctlplane": "192.0.2.5", "redis": "198.51.100.6", "storage": "203.0.113.5",
               "internal_api": ""},
    "RoleData": {"Controller": {"config_settings": "c"}, "Compute": {"config_settings": "p"},
                 "Custom": {"config_settings": "u"}},
}
ENVIRONMENT = {"parameter_defaults": {"AdminPassword": "not-a-secret", "ContainerCli": "podman"}}


def _with(**changes: Any) -> dict[str, Any]:
    outputs = copy.deepcopy(BASE)
    for key, value in changes.items():
        if value is None:
            outputs.pop(key, None)
        else:
            outputs[key] = value
    return outputs


def _ips(**roles: Any) -> dict[str, Any]:
    return {**copy.deepcopy(BASE["RoleNetIpMap"]), **roles}


def _names(**roles: Any) -> dict[str, Any]:
    return {**copy.deepcopy(BASE["RoleNetHostnameMap"]), **roles}


UNDERCLOUD_ROLE = {
    "EnabledServices": {"Undercloud": ["sa", "sb"]},
    "KeystoneURL": "https://192.0.2.1:13000",
    "ServerIdData": {"server_ids": {"Undercloud": ["s-uc-0"]}, "bootstrap_server_id": "s-uc-0"},
    "RoleNetHostnameMap": {"Undercloud": {"ctlplane": ["uc-0.ctlplane.example.net"],
                                          "external": ["uc-0.external.example.net"],
                                          "canonical": ["uc-0.example.net"]}},
    "RoleNetIpMap": {"Undercloud": {"ctlplane": ["192.0.2.1"], "external": ["203.0.113.1"]}},
    "VipMap": {"ctlplane": "192.0.2.5", "redis": "192.0.2.6"},
}

#: name -> (plan, outputs, ssh user, ansible_python_interpreter or None, {path: reason}).
CASES: dict[str, tuple[str, dict[str, Any], str, str | None, dict[str, str]]] = {
    # test_inventory_list / test_inventory_write_static: three roles, services, VIPs.
    "three_roles": ("overcloud", _with(), "heat-admin", None, {}),
    # test_ansible_ssh_user: another user and an imposed interpreter.
    "custom_user_and_python": ("overcloud", _with(), "my-custom-admin", "/opt/py/bin/python3",
                               {}),
    # A plan of another name (its groups are prefixed with it).
    "other_plan": ("edge0", _with(), "tripleo-admin", None, {}),
    # test_with_excluded_nodes: BlacklistedHostnames with empty entries.
    "excluded_nodes": ("overcloud", _with(BlacklistedHostnames=["cmp-0", "", ""]),
                       "tripleo-admin", None, {}),
    # Horizon's public endpoint, and an EndpointMap without it.
    "horizon": ("overcloud", _with(EndpointMap={"HorizonPublic": {"uri": "https://h/dashboard"},
                                                "KeystonePublic": {"uri": "https://k"}}),
                "tripleo-admin", None, {}),
    "no_horizon": ("overcloud", _with(EndpointMap={"KeystonePublic": {"uri": "https://k"}}),
                   "tripleo-admin", None, {}),
    # A role whose host name map is empty is left out; one without a ctlplane address
    # is left out with a warning; its services name no group.
    "empty_and_unreachable_roles": (
        "overcloud",
        _with(RoleNetHostnameMap=_names(Storage={}, Net={"internal_api": ["net-0.i.x"]}),
              RoleNetIpMap=_ips(Storage={}, Net={"internal_api": ["198.51.100.40"]}),
              EnabledServices={**BASE["EnabledServices"], "Storage": ["swift_storage"],
                               "Net": ["neutron_dhcp"]}),
        "tripleo-admin", None, {}),
    # A role with no server ids: its hosts have no deploy_server_id.
    "role_without_server_ids": (
        "overcloud", _with(ServerIdData={"server_ids": {"Controller": ["a", "b", "c"]},
                                         "bootstrap_server_id": "a"}),
        "tripleo-admin", None, {}),
    # Upper-case host names (lower-cased short names), more networks, and VIPs of
    # networks no role has (left out) or empty.
    "networks_and_case": (
        "overcloud",
        _with(RoleNetHostnameMap=_names(Compute={
            "ctlplane": ["CMP-0.ctlplane.example.net"], "storage": ["cmp-0.storage.x"],
            "tenant": ["cmp-0.tenant.x"]}),
            RoleNetIpMap=_ips(Compute={"ctlplane": ["192.0.2.20"], "storage": ["203.0.113.20"],
                                       "tenant": ["203.0.113.120"]}),
            VipMap={**BASE["VipMap"], "tenant": "", "external": "203.0.113.9"}),
        "tripleo-admin", None, {}),
    # ceph services under ceph-ansible's names too; services named in upper case.
    "ceph_groups": (
        "overcloud",
        _with(EnabledServices={"Controller": ["ceph_mon", "ceph_mgr", "ceph_grafana", "Kernel"],
                               "Compute": ["ceph_osd", "ceph_client", "ceph_rbdmirror"],
                               "Custom": ["ceph_rgw", "ceph_mds", "ceph_nfs"]}),
        "tripleo-admin", None, {}),
    # Services of the undercloud: their groups name the Undercloud group.
    "undercloud_services": (
        "overcloud", _with(EnabledServices={**BASE["EnabledServices"],
                                            "Undercloud": ["tripleo_ironic_conductor"]}),
        "tripleo-admin", None, {}),
    # A stack without outputs (test_inventory_list_undercloud_only's analogue: we always
    # render a stack's outputs): the Undercloud and the empty excluded group.
    "no_outputs": ("overcloud", {}, "tripleo-admin", None, {}),
}

#: Both must refuse (test_no_ips, and a role absent from RoleNetIpMap).
REFUSED: dict[str, tuple[str, dict[str, Any]]] = {
    "no_ips": ("overcloud", _with(RoleNetIpMap=_ips(Controller={"ctlplane": []}))),
    "role_missing_from_ip_map": ("overcloud", _with(RoleNetIpMap={
        k: v for k, v in BASE["RoleNetIpMap"].items() if k != "Custom"})),
    "role_ip_map_null": ("overcloud", _with(RoleNetIpMap=_ips(Custom=None))),
}


def tripleo_common(version: str, plan: str, outputs: dict[str, Any], ssh_user: str,
                   python: str | None) -> dict[str, Any]:
    """What tripleo-common ``version`` writes (or the exception it raised)."""
    binary = oracle.venv_python_or_skip(version)
    case = {"plan": plan, "outputs": outputs, "environment": ENVIRONMENT,
            "ssh_user": ssh_user, "python": python}
    done = subprocess.run([str(binary), str(SCRIPT)], input=json.dumps(case),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    printed = dict(json.loads(done.stdout.strip().splitlines()[-1]))
    assert printed["tripleo_common"] == version
    return printed


def assert_same(ours: Any, theirs: Any, allowed: dict[str, str]) -> None:
    found = oracle.data_differences(ours, theirs)
    unexplained = [line for line in found if line.split(":", 1)[0].lstrip("/") not in allowed]
    assert not unexplained, "\n".join(unexplained)
    gone = [path for path in allowed
            if not any(line.split(":", 1)[0].lstrip("/") == path for line in found)]
    assert not gone, f"named differences no longer there: {gone}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_inventory_equals_tripleo_common_18(name: str) -> None:
    plan, outputs, ssh_user, python, allowed = CASES[name]
    theirs = tripleo_common("18.0.0", plan, outputs, ssh_user, python)
    assert "error" not in theirs, theirs
    ours = inventory.render(plan, outputs, ENVIRONMENT, ssh_user,
                            python or theirs["python"], role_python=python)
    assert theirs["inventory"]["Undercloud"]["vars"]["ansible_python_interpreter"] == \
        (python or theirs["python"])
    assert_same(ours, theirs["inventory"], allowed)


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("version", ["18.0.0", "12.1.0"])
def test_both_refuse_like_tripleo_common(version: str, name: str) -> None:
    plan, outputs = REFUSED[name]
    theirs = tripleo_common(version, plan, outputs, "tripleo-admin", None)
    assert "error" in theirs, theirs.get("inventory")
    make = inventory.render if version == "18.0.0" else inventory.render_ussuri
    with pytest.raises(inventory.InventoryError):
        make(plan, outputs, ENVIRONMENT, "tripleo-admin", "python3")


#: Where the outcomes differ on purpose: name -> (outputs, what tripleo-common 18.0.0
#: raises, the outputs on which it writes what we write for ``outputs`` or None when
#: we refuse, why).
DIFFERENT_OUTCOMES: dict[str, tuple[dict[str, Any], str, dict[str, Any] | None, str]] = {
    "no_server_id_data": (
        _with(ServerIdData=None), "UnboundLocalError",
        _with(ServerIdData={"server_ids": {"Other": ["x"]}, "bootstrap_server_id": None}),
        "tripleo-common 18.0.0 sets srv_id_map only when server_ids is not empty, then "
        "reads it (12.1.0 did not); we write the hosts without deploy_server_id, as it "
        "does when server_ids names none of the stack's roles"),
    "empty_server_ids": (
        _with(ServerIdData={"server_ids": {}, "bootstrap_server_id": "s-ctl-0"}),
        "UnboundLocalError",
        _with(ServerIdData={"server_ids": {"Other": ["x"]}, "bootstrap_server_id": "s-ctl-0"}),
        "as above"),
    "undercloud_role": (
        UNDERCLOUD_ROLE, "", None,
        "tripleo-common 18.0.0's merge makes such a role's group the undercloud's own: "
        "the role's hosts and addresses are lost and so is the undercloud's local "
        "connection (Ansible would SSH to a host named undercloud); we refuse clearly"),
}


@pytest.mark.parametrize("name", sorted(DIFFERENT_OUTCOMES))
def test_named_outcome_differences_18(name: str) -> None:
    outputs, raised, equivalent, _why = DIFFERENT_OUTCOMES[name]
    theirs = tripleo_common("18.0.0", "overcloud", outputs, "tripleo-admin", None)
    if equivalent is None:  # tripleo-common writes, we refuse
        assert "error" not in theirs, theirs
        with pytest.raises(inventory.InventoryError):
            inventory.render("overcloud", outputs, ENVIRONMENT, "tripleo-admin", "python3")
        return
    assert theirs.get("error") == raised, theirs
    theirs = tripleo_common("18.0.0", "overcloud", equivalent, "tripleo-admin", None)
    assert "error" not in theirs, theirs
    ours = inventory.render("overcloud", outputs, ENVIRONMENT, "tripleo-admin", theirs["python"])
    assert_same(ours, theirs["inventory"], {})


#: tripleo-common 12.1.0 (Ussuri)'s Mistral action ran Ansible in the mistral container and
#: reached the undercloud over SSH; tripleo-flow runs Ansible on the undercloud itself.
USSURI_ALLOWED = {"Undercloud/vars/ansible_connection": "local, not ssh (see above)",
                  "Undercloud/vars/ansible_ssh_user": "no SSH to the undercloud"}
#: The cases on Ussuri: those of 18.0.0 without an imposed interpreter (Ussuri's
#: inventory takes none), but those it fails on (below); and its own outcomes.
USSURI_CASES = {name: (plan, outputs, user, dict(USSURI_ALLOWED))
                for name, (plan, outputs, user, python, _allowed) in CASES.items()
                if python is None}
#: Its Undercloud role replaces the undercloud's group (as tripleo-common 12.1.0 does):
#: no undercloud connection variables are left to differ.
USSURI_CASES["undercloud_role"] = ("overcloud", UNDERCLOUD_ROLE, "tripleo-admin", {})
USSURI_CASES["no_server_id_data"] = ("overcloud", DIFFERENT_OUTCOMES["no_server_id_data"][0],
                                     "tripleo-admin", dict(USSURI_ALLOWED))
#: Where tripleo-common 12.1.0 fails and its later releases (18.0.0: the same case of
#: test_inventory_equals_tripleo_common_18) write what we write: name -> exception.
USSURI_FAILS = {
    # A role without a ctlplane address: 12.1.0 indexes it (KeyError); 18.0.0 leaves
    # the role out with a warning, as we do.
    "empty_and_unreachable_roles": "KeyError",
    # server_ids naming some roles only: 12.1.0 indexes each role (KeyError); 18.0.0
    # writes those roles' hosts without deploy_server_id, as we do.
    "role_without_server_ids": "KeyError",
}
for _name in USSURI_FAILS:
    USSURI_CASES.pop(_name)


@pytest.mark.parametrize("name", sorted(USSURI_CASES))
def test_inventory_equals_tripleo_common_12(name: str) -> None:
    plan, outputs, ssh_user, allowed = USSURI_CASES[name]
    theirs = tripleo_common("12.1.0", plan, outputs, ssh_user, None)
    assert "error" not in theirs, theirs
    ours = inventory.render_ussuri(plan, outputs, ENVIRONMENT, ssh_user, theirs["python"])
    assert_same(ours, theirs["inventory"], allowed)


@pytest.mark.parametrize("name", sorted(USSURI_FAILS))
def test_named_outcome_differences_12(name: str) -> None:
    plan, outputs, ssh_user, _python, _allowed = CASES[name]
    theirs = tripleo_common("12.1.0", plan, outputs, ssh_user, None)
    assert theirs.get("error") == USSURI_FAILS[name], theirs
    later = tripleo_common("18.0.0", plan, outputs, ssh_user, None)
    assert "error" not in later, later
    ours = inventory.render_ussuri(plan, outputs, ENVIRONMENT, ssh_user, "python3")
    roles = [role for role in outputs["RoleNetHostnameMap"] if role in ours]
    assert roles
    for role in roles:  # each role's group is 18.0.0's, unprefixed
        assert_same(ours[role], later["inventory"][f"{plan}_{role}"], {})
