"""Our config-download equals tripleo-common's on the same real stack (the differential test).

For each real THT deployment of the session, the stack's kept Heat database is restored
on a fresh heat-all and tripleo-common itself (pinned, in its own test-only virtualenv:
tools/setup-tripleo-common.sh; the product never imports it) renders its
config-download and inventory from it, as tripleoclient's deploy does with
pre-provisioned servers (Heat outputs only: there is no Neutron, so neither side has
Neutron's ``canonical_hostname`` or ``<net>_cidr`` variables; THT's own
``RoleNetHostnameMap`` gives both ``<net>_hostname`` and ``canonical_hostname``).
Every file both write must load to the same data, the inventory included (groups,
hosts, every host and group variable), except the differences named in ALLOWED.

Then TripleO's own ``tripleo_all_nodes_data`` step (tripleo-ansible's action plugin,
the play "Render all_nodes data as group_vars for overcloud") runs offline on both
projects: it must raise no error and write the same all_nodes data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.functional.overcloud.conftest import Deployment, Redeployment, ScaleDown
from tests.oracle import reference as oracle
from tripleo_flow.actions.ansible import content_paths, find_ansible_playbook
from tripleo_flow.core.deploy import ansible

pytestmark = pytest.mark.functional

INVENTORY = "tripleo-ansible-inventory.yaml"
#: Where we differ from tripleo-common on purpose, and why.
ALLOWED = {
    # The undercloud's Python is the one of the process that wrote the inventory on
    # both sides (tripleo-common: its own sys.executable); tests below check ours.
    f"{INVENTORY}/Undercloud/vars/ansible_python_interpreter":
        "each names the Python that rendered it",
}
#: THT 12.x's (tripleo-common 12.1.0, Ussuri) differences: its Mistral action ran Ansible in
#: the mistral container and reached the undercloud over SSH as the overcloud user;
#: tripleo-flow runs Ansible on the undercloud itself, so a local connection and no SSH user.
ALLOWED_USSURI = {
    **ALLOWED,
    f"{INVENTORY}/Undercloud/vars/ansible_connection": "local, not ssh (see above)",
    f"{INVENTORY}/Undercloud/vars/ansible_ssh_user": "no SSH to the undercloud",
}
#: Files we write that tripleo-common's download_config does not: tripleoclient writes
#: ansible.cfg beside the project (utils.write_default_ansible_cfg); ours names the
#: inventory, the SSH user and key.
OURS_ONLY = {"ansible.cfg"}


def _reference(deployment: Deployment, version: str, out: Path) -> dict[str, Any]:
    client = deployment.client()
    try:
        return oracle.reference_project(client, deployment.work_dir, deployment.plan, version,
                                        out)
    finally:
        client.close()


_cache: dict[str, Path] = {}


def reference(deployment: Deployment, version: str,
              tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tripleo-common's project of ``deployment`` (rendered once per session)."""
    key = f"{deployment.root}:{version}"
    if key not in _cache:
        out = tmp_path_factory.mktemp("tripleo-common") / "config-download"
        printed = _reference(deployment, version, out)
        assert printed["tripleo_common"] == version
        _cache[key] = out
    return _cache[key]


def _assert_same(deployment: Deployment, theirs: Path,
                 allowed: dict[str, str] = ALLOWED, files: int = 300) -> None:
    ours = deployment.config_download
    found = oracle.differences(ours, theirs, allowed)
    only_ours = {line.split(":", 1)[0] for line in found if line.endswith("file only ours")}
    assert only_ours == OURS_ONLY
    rest = [line for line in found if not line.endswith("file only ours")]
    assert rest == [], "\n".join(rest[:60])
    compared = set(oracle.files(ours)) & set(oracle.files(theirs))
    assert INVENTORY in compared and len(compared) > files, len(compared)
    python = yaml.safe_load((ours / INVENTORY).read_text())["Undercloud"]["vars"][
        "ansible_python_interpreter"]
    assert Path(python).name.startswith("python") and Path(python).exists()


def test_the_default_stack_renders_as_tripleo_common(
        tht18_deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> None:
    _assert_same(tht18_deployment, reference(tht18_deployment, "18.0.0", tmp_path_factory))


def test_the_network_isolation_redeploy_renders_as_tripleo_common(
        tht18_redeployment: Redeployment, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Network isolation (VIPs, an address on every network), a third server and a
    post-deploy hook (NodeExtraConfigPost: a script software deployment, so the servers'
    deployment files, with Heat's deploy_* inputs, and host_vars lists are compared too)."""
    after = tht18_redeployment.after
    theirs = reference(after, "18.0.0", tmp_path_factory)
    _assert_same(after, theirs)
    # THT 18's ExtraConfigPost passes the roles' server maps merged with map_merge, and
    # each is keyed by the server's index in its role: the compute's "0" replaces the
    # controller's, so THT itself runs the hook on the computes only (upstream's quirk,
    # the same in both projects).
    deployment_files = sorted(p for p in oracle.files(theirs) if p.endswith("/ExtraDeployments"))
    assert deployment_files == ["Compute/compute-0/ExtraDeployments",
                                "Compute/compute-1/ExtraDeployments"]
    entry = yaml.safe_load((after.config_download / deployment_files[0]).read_text())
    inputs = {i["name"]: i for i in entry["ExtraDeployments"]["inputs"]}
    assert inputs["greeting"]["value"] == "hello"
    assert {"deploy_server_id", "deploy_action", "deploy_stack_id"} <= set(inputs)


def test_the_scaled_down_update_prepared_stack_renders_as_tripleo_common(
        tht18_scale_down: ScaleDown, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Day two: ``compute-0`` deleted by host name (its removal policy), then the plan
    deployed again by ``update prepare`` (THT's update-prepare environment, a new
    DeployIdentifier): the project TripleO's update playbooks run from is
    tripleo-common's too, and neither names the removed server."""
    after = tht18_scale_down.after
    theirs = reference(after, "18.0.0", tmp_path_factory)
    _assert_same(after, theirs)
    for project in (after.config_download, theirs):
        inventory = yaml.safe_load((project / INVENTORY).read_text())
        computes = inventory[f"{after.plan}_Compute"]["hosts"]
        assert sorted(computes) == ["compute-1"], (project, computes)


def test_the_ussuri_stack_renders_as_tripleo_common_12(
        tht12_deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> None:
    """THT 12.1.0 against its own release's tripleo-common (12.1.0): Ussuri's layout
    (fewer per-step files, ansible_group_vars merged into group_vars, the os-net-config
    scripts, its deployments.yaml and its single-plan inventory)."""
    theirs = reference(tht12_deployment, "12.1.0", tmp_path_factory)
    _assert_same(tht12_deployment, theirs, ALLOWED_USSURI, files=200)
    inventory = yaml.safe_load((theirs / INVENTORY).read_text())
    assert "overcloud" in inventory and "allovercloud" not in inventory


#: The play TripleO runs before its deploy steps to write the hosts' all_nodes data
#: (THT's common/deploy-steps-playbooks-common.yaml), offline: every host is local.
ALL_NODES_PLAY = [{
    "hosts": "{{ deploy_target_host }}", "gather_facts": False, "tasks": [
        {"ansible.builtin.include_vars": "global_vars.yaml"},
        {"name": "Render all_nodes data as group_vars for overcloud",
         "delegate_to": "localhost", "become": False, "run_once": True,
         "tripleo_all_nodes_data": None}]}]


def all_nodes(project: Path, plan: str, venv: Path, home: Path) -> tuple[dict[str, Any], str]:
    """Run the all_nodes step in ``project``; its ``group_vars/overcloud.json`` and output."""
    playbook = project / "all-nodes-check.yaml"
    playbook.write_text(yaml.safe_dump(ALL_NODES_PLAY))
    written = project / "group_vars" / "overcloud.json"
    written.unlink(missing_ok=True)
    command = ansible.playbook_command(
        find_ansible_playbook(str(venv)), playbook.name, [str(project / INVENTORY)],
        ["-e", f"deploy_target_host={plan}", "-e", "ansible_connection=local",
         "-e", f"ansible_python_interpreter={venv / 'bin' / 'python'}"])
    env = ansible.environment(os.environ, str(home), content_paths(str(venv)))
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    return json.loads(written.read_text()), output


def test_all_nodes_data_is_tripleo_common_s(
        tht18_deployment: Deployment, tmp_path_factory: pytest.TempPathFactory,
        ansible_venv: Path, tmp_path: Path) -> None:
    """TripleO's tripleo_all_nodes_data gives the same data on our project as on
    tripleo-common's, without a KeyError in either run."""
    theirs = reference(tht18_deployment, "18.0.0", tmp_path_factory)
    ours = tmp_path / "ours"
    subprocess.run(["cp", "-a", str(tht18_deployment.config_download), str(ours)], check=True)
    reference_copy = tmp_path / "theirs"
    subprocess.run(["cp", "-a", str(theirs), str(reference_copy)], check=True)
    data, output = all_nodes(ours, tht18_deployment.plan, ansible_venv, tmp_path / "a")
    expected, reference_output = all_nodes(reference_copy, tht18_deployment.plan, ansible_venv,
                                           tmp_path / "b")
    assert "KeyError" not in reference_output, reference_output[-3000:]
    assert "KeyError" not in output, output[-3000:]
    assert data == expected
    assert len(data) > 300, len(data)  # tripleo-common's: 397 keys for this stack
    # What was missing before the inventory matched: bootstrap nodes, node names, and the
    # keystone API groups' addresses (haproxy's backends).
    for key in ("mysql_short_bootstrap_node_name", "keystone_node_names",
                "oslo_messaging_rpc_short_node_names", "keystone_admin_api_node_ips",
                "keystone_public_api_node_ips"):
        assert data.get(key), key


def test_our_undercloud_python_is_ours(tht18_deployment: Deployment) -> None:
    """The one allowed difference: the undercloud's interpreter is tripleo-flow's."""
    inventory = yaml.safe_load((tht18_deployment.config_download / INVENTORY).read_text())
    assert inventory["Undercloud"]["vars"]["ansible_python_interpreter"] == sys.executable
