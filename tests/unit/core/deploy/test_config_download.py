"""config-download layout: table-driven, no mocks."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.core.deploy import config_download as cd

TASK_ALL = {"name": "every step", "debug": {"msg": "x"}}
TASK_2 = {"name": "step two", "debug": {"msg": "y"}, "when": ["step|int == 2"]}
TASK_5 = {"name": "step five", "debug": {"msg": "z"}, "when": "step | int == 5"}


def outputs(count: int = 2) -> dict[str, Any]:
    return {
        "RoleNames": ["Controller", "Compute"],
        "RoleData": {
            "Controller": {"service_names": ["OS::TripleO::Services::NovaApi", "keystone"],
                           "deploy_steps_tasks": [TASK_ALL, TASK_2, TASK_5],
                           "host_prep_tasks": [TASK_ALL], "config_settings": {}},
            "Compute": {"service_names": ["OS::TripleO::Services::NovaCompute", "keystone"],
                        "deploy_steps_tasks": []},
        },
        "RoleConfig": {"deploy_steps_playbook": [{"hosts": "allovercloud", "tasks": []}],
                       "raw_playbook": "- hosts: all\n"},
        "RoleGroupVars": {"Controller": {"tripleo_x": 1}},
        "AnsibleHostVarsMap": {"Controller": {"oc-controller-0": {"ansible_host": "10.0.0.5"}}},
        "RoleNetHostnameMap": {
            "Controller": {"ctlplane": [f"oc-controller-{i}.ctlplane.localdomain"
                                        for i in range(count)]},
            "Compute": {"ctlplane": ["oc-compute-0.ctlplane.localdomain"]}},
        "RoleNetIpMap": {"Controller": {"ctlplane": [f"192.168.24.{10 + i}" for i in range(count)]},
                         "Compute": {"ctlplane": ["192.168.24.20"]}},
        "EnabledServices": {"Controller": ["nova_api", "keystone"],
                            "Compute": ["nova_compute", "keystone"]},
        "ServerIdData": {"server_ids": {"Controller": [f"c{i}" for i in range(count)],
                                        "Compute": ["n0"]}},
    }


DEPLOYMENTS = {"oc-compute-0": [cd.Deployment("ComputeDeployment", {"a": 1}, "hiera",
                                              {"hostname": "oc-compute-0"})]}


def load(files: dict[str, bytes], path: str) -> Any:
    return yaml.safe_load(files[path])


@pytest.mark.parametrize("path", [
    "tripleo-ansible-inventory.yaml", "global_vars.yaml", "deploy_steps_playbook.yaml",
    "raw_playbook.yaml", "group_vars/Controller", "group_vars/Compute",
    "host_vars/oc-controller-0", "host_vars/oc-controller-1", "host_vars/oc-compute-0",
    "Controller/deploy_steps_tasks.yaml", "Controller/host_prep_tasks.yaml",
    *[f"Controller/deploy_steps_tasks_step{n}.yaml" for n in range(6)],
    "Compute/deploy_steps_tasks_step0.yaml", "Compute/oc-compute-0/ComputeDeployment",
])
def test_layout_has(path: str) -> None:
    assert path in cd.render("oc", outputs(), DEPLOYMENTS)


@pytest.mark.parametrize("step,names", [
    (0, ["every step"]), (1, ["every step"]), (2, ["every step", "step two"]),
    (5, ["every step", "step five"]),
])
def test_step_split(step: int, names: list[str]) -> None:
    files = cd.render("oc", outputs())
    tasks = load(files, f"Controller/deploy_steps_tasks_step{step}.yaml")
    assert [t["name"] for t in tasks] == names


@pytest.mark.parametrize("group,expected", [
    ("oc_Controller", {
        "hosts": {"oc-controller-0": {"ansible_host": "192.168.24.10", "deploy_server_id": "c0",
                                      "ctlplane_ip": "192.168.24.10",
                                      "ctlplane_hostname": "oc-controller-0.ctlplane.localdomain"},
                  "oc-controller-1": {"ansible_host": "192.168.24.11", "deploy_server_id": "c1",
                                      "ctlplane_ip": "192.168.24.11",
                                      "ctlplane_hostname": "oc-controller-1.ctlplane.localdomain"}},
        "vars": {"tripleo_role_name": "Controller", "ansible_ssh_user": "tripleo-admin",
                 "bootstrap_server_id": None, "tripleo_role_networks": ["ctlplane"],
                 "serial": 1}}),
    ("Controller", {"children": {"oc_Controller": {}}}),
    ("allovercloud", {"children": {"oc_allovercloud": {}}}),
    ("oc_allovercloud", {"children": {"oc_oc": {}}}),
    ("oc", {"children": {"oc_allovercloud": {}}}),
    ("oc_oc", {"children": {"oc_Compute": {}, "oc_Controller": {}},
               "vars": {"container_cli": None}}),
    ("oc_nova_api", {"children": {"oc_Controller": {}},
                     "vars": {"ansible_ssh_user": "tripleo-admin"}}),
    ("oc_keystone", {"children": {"oc_Controller": {}, "oc_Compute": {}},
                     "vars": {"ansible_ssh_user": "tripleo-admin"}}),
    ("excluded_overcloud", {"children": {"oc_excluded_overcloud": {}}}),
    ("oc_excluded_overcloud", {"hosts": {}}),
])
def test_inventory_groups(group: str, expected: dict[str, Any]) -> None:
    inventory = load(cd.render("oc", outputs()), cd.INVENTORY)
    assert inventory[group] == expected


def test_inventory_key_named_where_the_ssh_user_is() -> None:
    connection = cd.Connection("core", "/k/id_rsa")
    inventory = load(cd.render("oc", outputs(), connection=connection), cd.INVENTORY)
    named = sorted(g for g, v in inventory.items()
                   if (v.get("vars") or {}).get("ansible_ssh_private_key_file") == "/k/id_rsa")
    assert named == ["oc_Compute", "oc_Controller", "oc_keystone", "oc_nova_api",
                     "oc_nova_compute"]
    assert "ansible_ssh_private_key_file" not in inventory["Undercloud"]["vars"]


@pytest.mark.parametrize("path,key,value", [
    ("group_vars/Controller", "tripleo_x", 1),
    ("host_vars/oc-controller-1", "pre_deployments_Controller", []),
    ("host_vars/oc-controller-0", "ansible_host", "10.0.0.5"),
    ("host_vars/oc-compute-0", "pre_deployments_Compute", ["ComputeDeployment"]),
    ("host_vars/oc-compute-0", "post_deployments_Compute", []),
    ("host_vars/oc-compute-0", "pre_network_Compute", []),
    ("global_vars.yaml", "deploy_steps_max", 6),
])
def test_values(path: str, key: str, value: Any) -> None:
    assert load(cd.render("oc", outputs(), DEPLOYMENTS), path)[key] == value


@pytest.mark.parametrize("path", ["group_vars/Compute"])
def test_role_group_vars_are_the_outputs_only(path: str) -> None:
    """As tripleo-common: a role's group_vars are its RoleGroupVars, nothing added."""
    assert load(cd.render("oc", outputs(), DEPLOYMENTS), path) == {}


def test_raw_playbook_kept_verbatim() -> None:
    assert cd.render("oc", outputs())["raw_playbook.yaml"] == b"- hosts: all\n"


def test_deterministic() -> None:
    assert cd.render("oc", outputs(), DEPLOYMENTS) == cd.render("oc", outputs(), DEPLOYMENTS)


@pytest.mark.parametrize("bad,deployments,needle", [
    ({"ServerIdData": {"server_ids": {"Controller": ["c0"], "Compute": ["n0"]}}}, None,
     "2 host names"),
    ({"RoleNetIpMap": {"Controller": {"ctlplane": []}, "Compute": {"ctlplane": ["x"]}}}, None,
     "no address on the ctlplane network"),
    ({}, {"ghost": [cd.Deployment("D", {})]}, "ghost"),
])
def test_inconsistent_outputs(bad: dict[str, Any], deployments: Any, needle: str) -> None:
    data = {**outputs(), **bad}
    with pytest.raises(exceptions.InvalidInput) as err:
        cd.render("oc", data, deployments)
    assert needle in str(err.value)


def test_empty_outputs_render_only_globals() -> None:
    files = cd.render("oc", {})
    assert sorted(files) == ["ansible.cfg", "deployments.yaml", "global_vars.yaml",
                             "templates/heat-config.j2", "tripleo-ansible-inventory.yaml"]
