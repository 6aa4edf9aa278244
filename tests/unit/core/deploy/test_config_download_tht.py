"""config-download from outputs shaped as THT 18.0.0's overcloud.j2.yaml defines them.

RoleNetHostnameMap (role -> network -> FQDNs), RoleNetIpMap (role -> network -> IPs),
ServerIdData ({server_ids: role -> ids, bootstrap_server_id}), AnsibleHostVarsMap
(role -> host -> vars), RoleData, RoleConfig (deploy-steps.j2: playbooks, scripts,
external_deploy_steps_tasks) and no RoleNames/HostnameData outputs.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests import tripleo_layout
from tripleo_flow.core.deploy import config_download as cd
from tripleo_flow.core.deploy import deployments as deps

EVERY = {"name": "every", "debug": {}}
TWO = {"name": "two", "debug": {}, "when": ["step|int == 2"]}
ONE_OR_THREE = {"name": "one or three", "debug": {}, "when": "(step|int == 1) or step | int==3"}


def outputs() -> dict[str, Any]:
    return {
        "RoleData": {
            "Controller": {"service_names": ["keystone"], "step_config": "include tripleo\n",
                           "config_settings": {"a": 1},
                           "deploy_steps_tasks": [EVERY, TWO], "host_prep_tasks": [EVERY],
                           "update_tasks": [ONE_OR_THREE], "post_update_tasks": [TWO],
                           "upgrade_tasks": [EVERY], "post_upgrade_tasks": [EVERY],
                           "external_deploy_tasks": [EVERY]},
            "Compute": {"service_names": ["nova_compute"], "deploy_steps_tasks": []},
        },
        "RoleConfig": {"deploy_steps_playbook": [{"hosts": "all"}],
                       "deploy-artifacts.sh": "#!/bin/sh\n",
                       "all_nodes_validation_script.sh": "#!/bin/sh\ntrue\n",
                       "external_deploy_steps_tasks": [EVERY, TWO],
                       "external_update_steps_tasks": [EVERY]},
        "RoleNetHostnameMap": {
            "Controller": {"ctlplane": ["Overcloud-Controller-0.ctlplane.localdomain"],
                           "canonical": ["overcloud-controller-0.localdomain"]},
            "Compute": {"ctlplane": ["overcloud-novacompute-0.ctlplane.localdomain"]}},
        "RoleNetIpMap": {"Controller": {"ctlplane": ["192.168.24.10"]},
                         "Compute": {"ctlplane": ["192.168.24.20"]}},
        "ServerIdData": {"server_ids": {"Controller": ["id-c0"], "Compute": ["id-n0"]},
                         "bootstrap_server_id": "id-c0"},
        "AnsibleHostVarsMap": {"Controller": {"overcloud-controller-0": {"tripleo_x": 1}},
                               "Compute": {"overcloud-novacompute-0": {}}},
        "RoleGroupVars": {"Controller": {"any_errors_fatal": True}},
    }


#: What tripleo-common's Config.write_config writes for these outputs
#: (openstack/tripleo-common tripleo_common/utils/config.py, last release before retirement;
#: templates/ copied as deployments.yaml and templates/heat-config.j2), plus our
#: tripleo-ansible-inventory.yaml, ansible.cfg and global_vars.yaml.
TRIPLEO_LAYOUT = sorted([
    "deployments.yaml", "templates/heat-config.j2",
    "deploy_steps_playbook.yaml", "deploy-artifacts.sh", "all_nodes_validation_script.sh",
    "external_deploy_steps_tasks.yaml",
    *[f"external_deploy_steps_tasks_step{n}.yaml" for n in range(6)],
    "external_update_steps_tasks.yaml",
    "group_vars/Controller", "group_vars/Compute",
    "host_vars/overcloud-controller-0", "host_vars/overcloud-novacompute-0",
    "Controller/service_names.yaml", "Controller/step_config.pp",
    "Controller/config_settings.yaml", "Controller/deploy_steps_tasks.yaml",
    *[f"Controller/deploy_steps_tasks_step{n}.yaml" for n in range(6)],
    "Controller/host_prep_tasks.yaml", "Controller/update_tasks.yaml",
    *[f"Controller/update_tasks_step{n}.yaml" for n in range(6)],
    "Controller/post_update_tasks.yaml",
    *[f"Controller/post_update_tasks_step{n}.yaml" for n in range(4)],
    "Controller/upgrade_tasks.yaml",
    *[f"Controller/upgrade_tasks_step{n}.yaml" for n in range(6)],
    "Controller/post_upgrade_tasks.yaml",
    "Compute/service_names.yaml", "Compute/deploy_steps_tasks.yaml",
    *[f"Compute/deploy_steps_tasks_step{n}.yaml" for n in range(6)],
    "Compute/overcloud-novacompute-0/ExtraDeployment",
    "tripleo-ansible-inventory.yaml", "ansible.cfg", "global_vars.yaml",
])

EXTRA = deps.Deployment("ExtraDeployment", "#!/bin/sh\n", "script", {"x": "1"},
                        id="dep-1", kind="post_deployments")


def render(**kwargs: Any) -> dict[str, bytes]:
    return cd.render("overcloud", outputs(), {"overcloud-novacompute-0": [EXTRA]}, **kwargs)


def load(files: dict[str, bytes], path: str) -> Any:
    return yaml.safe_load(files[path])


def test_layout_is_tripleo_s() -> None:
    assert sorted(render()) == TRIPLEO_LAYOUT


def test_every_statically_included_role_file_exists() -> None:
    files = render()
    for role in ("Controller", "Compute"):
        for step in range(6):
            assert f"{role}/deploy_steps_tasks_step{step}.yaml" in files


@pytest.mark.parametrize("path,names", [
    ("Controller/deploy_steps_tasks_step0.yaml", ["every"]),
    ("Controller/deploy_steps_tasks_step2.yaml", ["every", "two"]),
    ("Controller/update_tasks_step1.yaml", ["one or three"]),
    ("Controller/update_tasks_step2.yaml", []),
    ("Controller/update_tasks_step3.yaml", ["one or three"]),
    ("Controller/post_update_tasks_step2.yaml", ["two"]),
    ("Controller/upgrade_tasks_step5.yaml", ["every"]),
    ("external_deploy_steps_tasks_step0.yaml", ["every"]),
    ("external_deploy_steps_tasks_step2.yaml", ["every", "two"]),
])
def test_steps(path: str, names: list[str]) -> None:
    assert [t["name"] for t in load(render(), path)] == names


@pytest.mark.parametrize("key,path", [
    ("deploy_steps_playbook", "deploy_steps_playbook.yaml"),
    ("deploy-artifacts.sh", "deploy-artifacts.sh"),
    ("hosts-config.sh", "hosts-config.sh"),
    ("global_vars.yml", "global_vars.yml"),
])
def test_config_file_name(key: str, path: str) -> None:
    assert cd.config_file_name(key) == path


def test_scripts_verbatim_and_step_config() -> None:
    files = render()
    assert files["all_nodes_validation_script.sh"] == b"#!/bin/sh\ntrue\n"
    assert files["Controller/step_config.pp"] == b"include tripleo\n"


@pytest.mark.parametrize("path,expected", [
    (("overcloud_Controller", "hosts", "overcloud-controller-0"),
     {"ansible_host": "192.168.24.10", "ctlplane_ip": "192.168.24.10",
      "deploy_server_id": "id-c0",
      "ctlplane_hostname": "Overcloud-Controller-0.ctlplane.localdomain",
      "canonical_hostname": "overcloud-controller-0.localdomain"}),
    (("overcloud_Controller", "vars", "ansible_ssh_user"), "core"),
    (("overcloud_Controller", "vars", "ansible_ssh_private_key_file"), "/k/id_rsa"),
    (("overcloud_Controller", "vars", "bootstrap_server_id"), "id-c0"),
    (("Undercloud", "hosts"), {"undercloud": {}}),
    (("Undercloud", "vars", "ansible_connection"), "local"),
    (("overcloud_overcloud", "children"), {"overcloud_Controller": {}, "overcloud_Compute": {}}),
    (("overcloud", "children"), {"overcloud_allovercloud": {}}),
])
def test_inventory(path: tuple[str, ...], expected: Any) -> None:
    value = load(render(connection=cd.Connection("core", "/k/id_rsa")), cd.INVENTORY)
    for key in path:
        value = value[key]
    assert value == expected


def test_default_ssh_user_is_tripleo_admin() -> None:
    inventory = load(render(), cd.INVENTORY)
    assert inventory["overcloud_Compute"]["vars"]["ansible_ssh_user"] == "tripleo-admin"
    assert b"remote_user = tripleo-admin" in render()["ansible.cfg"]


@pytest.mark.parametrize("path,key,value", [
    ("host_vars/overcloud-controller-0", "tripleo_x", 1),
    ("host_vars/overcloud-controller-0", "pre_deployments_Controller", []),
    ("host_vars/overcloud-novacompute-0", "post_deployments_Compute", ["ExtraDeployment"]),
    ("host_vars/overcloud-novacompute-0", "pre_network_Compute", []),
    ("group_vars/Controller", "any_errors_fatal", True),
])
def test_host_and_group_vars(path: str, key: str, value: Any) -> None:
    assert load(render(), path)[key] == value


def test_deployment_file_is_what_the_hook_reads() -> None:
    entry = load(render(), "Compute/overcloud-novacompute-0/ExtraDeployment")["ExtraDeployment"]
    assert entry["id"] == "dep-1" and entry["group"] == "script"
    assert entry["config"] == "#!/bin/sh\n"
    assert {i["name"]: i["value"] for i in entry["inputs"]} == {"x": "1"}


@pytest.mark.parametrize("config,group,expected", [
    ("#!/bin/sh\necho hi", "script", "#!/bin/sh\necho hi\n"),
    ("", "script", ""),
    ("[1, 2]", "script", "[\n  1,\n  2\n]\n"),  # JSON of a non-string: pretty-printed
    ({"datafiles": {"a": {"b": 1}}}, "hiera", {"datafiles": {"a": {"b": 1}}}),
])
def test_deployment_file_config(config: Any, group: str, expected: Any) -> None:
    dep = deps.Deployment("D", config, group, [], id="cfg-2")
    assert yaml.safe_load(deps.deployment_file(dep, "srv"))["D"]["config"] == expected


def test_deployment_file_inputs_are_strings_and_the_server_is_real() -> None:
    """Each input as tripleo-common writes it: its value as a string (Python's str of a
    number, a map or a list), its description and type; deploy_server_id the real id."""
    inputs = [{"name": "n", "description": "a number", "type": "Number", "value": 3},
              {"name": "m", "description": None, "type": "Json", "value": {"k": True}},
              {"name": "deploy_server_id", "description": "ID of the server", "type": "String",
               "value": "fake-server"}]
    dep = deps.Deployment("D", "x", "script", inputs, id="cfg-3", config_name="D-cfg",
                          creation_time="2026-11-26T10:00:00Z",
                          outputs=[{"name": "result", "description": None, "type": "String"}])
    entry = yaml.safe_load(deps.deployment_file(dep, "real-server"))["D"]
    assert entry["inputs"] == [
        {"name": "n", "description": "a number", "type": "Number", "value": "3"},
        {"name": "m", "description": "None", "type": "Json", "value": "{'k': True}"},
        {"name": "deploy_server_id", "description": "ID of the server", "type": "String",
         "value": "real-server"}]
    assert (entry["name"], entry["creation_time"], entry["options"]) == (
        "D-cfg", "2026-11-26T10:00:00Z", {})
    assert entry["outputs"] == [{"name": "result", "description": "None", "type": "String"}]


def test_deployments_tasks_read_the_layout() -> None:
    tasks = load(render(), "deployments.yaml")
    read = tasks[1]["set_fact"]["deployment_uuid"]
    assert "tripleo_role_name ~ '/' ~ ansible_facts['hostname'] | lower ~ '/' ~ item" in read
    assert any("55-heat-config" in str(t.get("shell")) for t in tasks)
    template = next(t["template"] for t in tasks if "template" in t)
    assert (template["variable_start_string"], template["variable_end_string"]) == ('"$$', '$$"')


#: Heat's resource list (with_detail) for THT's config-download stubs.
def stub(name: str, server: str, deployment: str = "uuid-1", stack: str = "",
         created: str = "2026-01-01T00:00:01") -> dict[str, Any]:
    return {"resource_name": "TripleODeployment", "creation_time": created,
            "physical_resource_id": stack, "stack_name": stack, "parent_resource": "0",
            "attributes": {"value": {"name": name, "server": server, "config": "cfg-1",
                                     "input_values": {"a": 1}, "deployment": deployment}}}


@pytest.mark.parametrize("resources,expected", [
    ([stub("D", "id-n0")], [("overcloud-novacompute-0", "D", "uuid-1", "pre_deployments")]),
    ([stub("P", "id-n0", stack="overcloud-ComputeExtraConfigPost-x-0")],
     [("overcloud-novacompute-0", "P", "uuid-1", "post_deployments")]),
    ([stub("N", "id-n0", stack="overcloud-Compute-0-PreNetworkConfig-y")],
     [("overcloud-novacompute-0", "N", "uuid-1", "pre_network")]),
    ([stub("B", "id-n0", created="2"), stub("A", "id-n0", created="1")],
     [("overcloud-novacompute-0", "A", "uuid-1", "pre_deployments"),
      ("overcloud-novacompute-0", "B", "uuid-1", "pre_deployments")]),
    ([stub("D", "blacklisted")], []),
    ([stub("D", "id-n0", deployment="TripleOSoftwareDeployment")], []),
    ([stub("D", "id-n0", deployment="stacks/s/uuid-9")],
     [("overcloud-novacompute-0", "D", "stacks/s/uuid-9", "pre_deployments")]),
    ([{**stub("D", "id-n0"), "resource_name": "Other"}], []),
])
def test_found_in(resources: list[dict[str, Any]], expected: list[tuple[str, ...]]) -> None:
    found = deps.found_in(resources, {"id-n0": "overcloud-novacompute-0"})
    assert [(f.server, f.name, f.deployment, f.kind) for f in found] == expected


@pytest.mark.parametrize("deployment,nested", [
    ("uuid-1", None), ("stacks/overcloud-Compute-x/uuid-9", "uuid-9")])
def test_nested_stack_id(deployment: str, nested: str | None) -> None:
    assert deps.nested_stack_id(deployment) == nested


def test_the_layout_spec_of_the_functional_tests_agrees() -> None:
    """tests/tripleo_layout.py (held against the real 12.1.0/18.0.0 projects) says the
    same as the list above for these outputs; a role without servers gets no group_vars."""
    saved = {"outputs": outputs(), "deployments": {"overcloud-novacompute-0": [{
        "name": "ExtraDeployment"}]}}
    expected = tripleo_layout.tripleo_files(saved) | tripleo_layout.CLIENT_FILES
    assert sorted(expected | tripleo_layout.OUR_FILES) == TRIPLEO_LAYOUT
    grown = outputs()
    grown["RoleData"]["CephStorage"] = {"service_names": []}
    grown["ServerIdData"]["server_ids"]["CephStorage"] = []
    files = cd.render("overcloud", grown)
    assert "CephStorage/service_names.yaml" in files and "group_vars/CephStorage" not in files
    assert "CephStorage/service_names.yaml" in tripleo_layout.tripleo_files({"outputs": grown})


def test_inventory_names_each_isolated_address_as_tripleo_does() -> None:
    """``<network>_ip`` per host from RoleNetIpMap, for every network of the role's map
    (an empty address too, as tripleo-common)."""
    data = outputs()
    data["RoleNetIpMap"]["Controller"].update(internal_api=["172.16.2.10"], external=[""])
    data["RoleNetIpMap"]["Compute"]["tenant"] = ["172.16.0.5"]
    inventory = yaml.safe_load(cd.render("overcloud", data)[cd.INVENTORY])
    controller = inventory["overcloud_Controller"]["hosts"]["overcloud-controller-0"]
    assert (controller["internal_api_ip"], controller["ctlplane_ip"]) == (
        "172.16.2.10", "192.168.24.10")
    assert controller["external_ip"] == "" and "tenant_ip" not in controller
    assert inventory["overcloud_Compute"]["hosts"]["overcloud-novacompute-0"]["tenant_ip"] == \
        "172.16.0.5"
    assert inventory["overcloud_Controller"]["vars"]["tripleo_role_networks"] == [
        "ctlplane", "external", "internal_api"]


def ussuri_outputs() -> dict[str, Any]:
    """THT 12.x's outputs: the HostnameNetworkConfigMap output marks the series."""
    data = outputs()
    data["HostnameNetworkConfigMap"] = {}
    data["EnabledServices"] = {"Controller": ["keystone"], "Compute": ["nova_compute"]}
    data["RoleData"]["Controller"]["ansible_group_vars"] = {"chrony_ntp_pools": []}
    data["RoleData"]["Controller"]["external_deploy_steps_tasks"] = [EVERY]
    return data


def test_ussuri_layout_is_tripleo_common_12_s() -> None:
    files = cd.render("overcloud12", ussuri_outputs(), {"overcloud-novacompute-0": [EXTRA]})
    assert "Controller/update_tasks_step0.yaml" not in files
    assert "Controller/post_update_tasks_step0.yaml" not in files
    assert "Controller/upgrade_tasks_step5.yaml" in files
    assert "Controller/ansible_group_vars.yaml" not in files
    assert "Controller/external_deploy_steps_tasks.yaml" in files
    assert "external_deploy_steps_tasks_step0.yaml" not in files
    assert load(files, "group_vars/Controller") == {"any_errors_fatal": True,
                                                   "chrony_ntp_pools": []}
    assert load(files, "host_vars/overcloud-novacompute-0") == {
        "pre_deployments_Compute": [], "post_deployments_Compute": ["ExtraDeployment"]}
    tasks = load(files, "deployments.yaml")
    assert any(t.get("set_fact", {}).get("use_async_deployment") for t in tasks)
    inventory = load(files, cd.INVENTORY)
    assert inventory["overcloud"]["children"] == {"Compute": {}, "Controller": {}}
    assert "overcloud-controller-0" in inventory["Controller"]["hosts"]
    assert "allovercloud" not in inventory and "excluded_overcloud" not in inventory
    assert inventory["keystone"] == {"children": {"Controller": {}},
                                     "vars": {"ansible_ssh_user": "tripleo-admin"}}


@pytest.mark.parametrize("when,steps", [
    ("step|int == 2", {2}), (["step|int == 3"], {3}), ("step|int==2", None),
    (["foo", "(step|int) == 4", "step|int == 1"], {4}), ("step|int == 2 and x", None),
    (None, None), ([True], None)])
def test_ussuri_step_matching(when: Any, steps: set[int] | None) -> None:
    """12.1.0 reads each condition alone; it must end with ``step|int == N``, spaced."""
    assert cd.steps_of({"when": when} if when is not None else {}, ussuri=True) == steps
