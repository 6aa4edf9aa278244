"""config-download layout: table-driven, no mocks."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.core import config_download as cd

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
        "HostnameData": {"Controller": [f"oc-controller-{i}" for i in range(count)],
                         "Compute": ["oc-compute-0"]},
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
    ("Controller", {"hosts": {"oc-controller-0": {"ansible_host": "oc-controller-0",
                                                  "deploy_server_id": "c0"},
                              "oc-controller-1": {"ansible_host": "oc-controller-1",
                                                  "deploy_server_id": "c1"}},
                    "vars": {"tripleo_role_name": "Controller", "ansible_ssh_user": "tripleo-admin",
                             "bootstrap_server_id": None}}),
    ("allovercloud", {"children": {"Controller": {}, "Compute": {}}}),
    ("overcloud", {"children": {"allovercloud": {}}}),
    ("oc", {"children": {"Controller": {}, "Compute": {}}}),
    ("nova_api", {"children": {"Controller": {}}, "vars": {"ansible_ssh_user": "tripleo-admin"}}),
    ("nova_compute", {"children": {"Compute": {}}, "vars": {"ansible_ssh_user": "tripleo-admin"}}),
    ("keystone", {"children": {"Controller": {}, "Compute": {}},
                  "vars": {"ansible_ssh_user": "tripleo-admin"}}),
])
def test_inventory_groups(group: str, expected: dict[str, Any]) -> None:
    inventory = load(cd.render("oc", outputs()), cd.INVENTORY)
    assert inventory[group] == expected


@pytest.mark.parametrize("path,key,value", [
    ("group_vars/Controller", "tripleo_x", 1),
    ("group_vars/Controller", "tripleo_role_name", "Controller"),
    ("group_vars/Compute", "service_names", ["OS::TripleO::Services::NovaCompute", "keystone"]),
    ("host_vars/oc-controller-1", "deploy_server_id", "c1"),
    ("host_vars/oc-controller-1", "bootstrap_server_id", "c0"),
    ("host_vars/oc-controller-1", "deploy_index", 1),
    ("host_vars/oc-controller-0", "ansible_host", "10.0.0.5"),
    ("host_vars/oc-compute-0", "deployments", ["ComputeDeployment"]),
    ("global_vars.yaml", "deploy_steps_max", 6),
])
def test_values(path: str, key: str, value: Any) -> None:
    assert load(cd.render("oc", outputs(), DEPLOYMENTS), path)[key] == value


@pytest.mark.parametrize("service,group", [
    ("OS::TripleO::Services::NovaApi", "nova_api"),
    ("OS::TripleO::Services::MySQL", "mysql"),
    ("OS::TripleO::Services::HAproxy", "haproxy"),
    ("keystone", "keystone"),
    ("OS::TripleO::Services::Docker::Registry", "docker_registry"),
])
def test_service_group(service: str, group: str) -> None:
    assert cd.service_group(service) == group


def test_raw_playbook_kept_verbatim() -> None:
    assert cd.render("oc", outputs())["raw_playbook.yaml"] == b"- hosts: all\n"


def test_deterministic() -> None:
    assert cd.render("oc", outputs(), DEPLOYMENTS) == cd.render("oc", outputs(), DEPLOYMENTS)


@pytest.mark.parametrize("bad,deployments,needle", [
    ({"ServerIdData": {"server_ids": {"Controller": ["c0"], "Compute": ["n0"]}}}, None,
     "2 host names"),
    ({"ServerIdData": {"server_ids": {"Controller": ["c0"], "Compute": ["n0"]}},
      "RoleNetHostnameMap": {"Controller": {"ctlplane": []}}}, None, "0 host names"),
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
