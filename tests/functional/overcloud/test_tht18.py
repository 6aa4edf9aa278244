"""THT 18.0.0 deployed unmodified onto two pre-provisioned servers (ctlplane only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.functional.heat.conftest import OpenStack, check_create_progress
from tests.functional.overcloud import playbooks, test_stub_listing, testhosts
from tests.functional.overcloud.conftest import (
    PROGRESS_FILE,
    Deployment,
    Redeployment,
    copy_deployment,
)
from tripleo_flow import exceptions
from tripleo_flow.core.deploy.progress import StackProgress

pytestmark = pytest.mark.functional


def test_the_deploy_succeeded_and_its_status_says_so(tht18_deployment: Deployment) -> None:
    assert tht18_deployment.result["deployment_status"] == "DEPLOY_SUCCESS"
    client = tht18_deployment.client()
    try:
        status = client.deployments.status(tht18_deployment.plan)
    finally:
        client.close()
    assert status["deployment_status"] == "DEPLOY_SUCCESS", status


def test_the_stack_outputs_are_the_real_templates_outputs(tht18_deployment: Deployment) -> None:
    saved = yaml.safe_load((tht18_deployment.work_dir / "outputs.yaml").read_text())
    outputs = saved["outputs"]
    # What THT really outputs, per role: the two servers, and nothing for the roles
    # with a count of 0.
    hostnames = {role: net_map.get("ctlplane")
                 for role, net_map in outputs["RoleNetHostnameMap"].items() if net_map}
    assert hostnames == {"Controller": ["controller-0.ctlplane.localdomain"],
                         "Compute": ["compute-0.ctlplane.localdomain"]}
    servers = {role: len(ids) for role, ids in outputs["ServerIdData"]["server_ids"].items()
               if ids}
    assert servers == {"Controller": 1, "Compute": 1}
    assert "deploy_steps_tasks" in outputs["RoleData"]["Controller"]
    assert outputs["AnsibleHostVarsMap"]["Controller"]["controller-0"]

def test_the_progress_of_the_real_stack_create_never_runs_backwards(
        tht18_deployment: Deployment) -> None:
    kept = tht18_deployment.root / PROGRESS_FILE
    assert kept.is_file(), (f"{kept} is missing: the deployment was made before progress "
                            "was recorded; remove the kept deployment to make it again")
    reports = [StackProgress(tht18_deployment.plan, r["status"], r["complete"], r["total"],
                             share=r["share"]) for r in json.loads(kept.read_text())]
    check_create_progress(reports)
    # The plain count is what ran backwards: its total grows as nested stacks appear.
    totals = [r.total for r in reports]
    assert totals[0] < totals[-1], totals


def test_config_download_has_both_servers_on_their_ctlplane_ips(
        tht18_deployment: Deployment) -> None:
    cd = tht18_deployment.config_download
    inventory = yaml.safe_load((cd / "tripleo-ansible-inventory.yaml").read_text())
    hosts = {}
    for group in ("Controller", "Compute"):
        hosts.update(inventory[f"{tht18_deployment.plan}_{group}"]["hosts"])
    assert {name: host["ansible_host"] for name, host in hosts.items()} == {
        "controller-0": "192.168.24.10", "compute-0": "192.168.24.20"}
    assert (cd / "deploy_steps_playbook.yaml").is_file()


def _restored(deployment: Deployment, heat_venv: Path,
              ) -> tuple[list[Any], dict[str, Any], test_stub_listing.Listings]:
    """``openstack stack list`` and ``stack show`` on a fresh Heat restored from the
    deployment's kept dump, and the stubs save_outputs reads from its database beside
    Heat's listing of them (:mod:`.test_stub_listing`)."""
    client = deployment.client()
    heat_dir = str(deployment.work_dir)
    osc = OpenStack(heat_venv, str(deployment.root / "clouds.yaml"))
    try:
        endpoint = client.heat.launch(heat_dir, restore_db=True)  # the dump's Heat type
        listed = json.loads(osc("stack", "list", "-f", "json"))
        shown = json.loads(osc("stack", "show", deployment.plan, "-f", "json"))
        stubs = test_stub_listing.listings(deployment, endpoint)
    finally:
        client.heat.kill(heat_dir)
        client.close()
    return [(s["Stack Name"], s["Stack Status"]) for s in listed], shown, stubs


def test_the_dump_restores_and_the_stack_is_listed(tht18_deployment: Deployment,
                                                   heat_venv: Path) -> None:
    """The kept dump restores on a fresh Heat: ``openstack stack list`` shows the stack;
    the deployment stubs read from its database are Heat's listing of them."""
    listed, shown, stubs = _restored(tht18_deployment, heat_venv)
    assert listed == [("overcloud18", "CREATE_COMPLETE")]
    assert shown["parameters"]["ComputeCount"] == "1"
    test_stub_listing.check_same(stubs, stubs=0)  # no software deployment


def _ctlplane_hosts(deployment: Deployment) -> dict[str, str]:
    inventory = yaml.safe_load(
        (deployment.config_download / "tripleo-ansible-inventory.yaml").read_text())
    hosts: dict[str, str] = {}
    for group in ("Controller", "Compute"):
        members = inventory[f"{deployment.plan}_{group}"]["hosts"]
        hosts.update({name: host["ansible_host"] for name, host in members.items()})
    return hosts


def test_a_redeploy_with_one_more_compute_updates_the_stack(
        tht18_redeployment: Redeployment) -> None:
    after = tht18_redeployment.after
    assert after.result["deployment_status"] == "DEPLOY_SUCCESS", after.result
    assert after.result["stack_status"] == "UPDATE_COMPLETE"
    client = after.client()
    try:
        assert client.deployments.status(after.plan)["stack_status"] == "UPDATE_COMPLETE"
    finally:
        client.close()
    # THT 18 has no StackAction parameter (removed upstream): a new DeployIdentifier
    # is what makes the software deployments run again.
    identifiers = [
        yaml.safe_load((d.work_dir / "environment.yaml").read_text())["parameters"][
            "DeployIdentifier"] for d in (tht18_redeployment.before, after)]
    assert identifiers[0] != identifiers[1]


def test_a_redeploy_keeps_the_addresses_and_gives_the_new_compute_one(
        tht18_redeployment: Redeployment) -> None:
    before = _ctlplane_hosts(tht18_redeployment.before)
    after = _ctlplane_hosts(tht18_redeployment.after)
    assert before == {"controller-0": "192.168.24.10", "compute-0": "192.168.24.20"}
    assert {k: v for k, v in after.items() if k in before} == before
    assert set(after) == {"controller-0", "compute-0", "compute-1"}
    assert after["compute-1"].startswith("192.168.24.")
    assert after["compute-1"] not in before.values()
    outputs = yaml.safe_load((tht18_redeployment.after.work_dir / "outputs.yaml").read_text())
    servers = outputs["outputs"]["ServerIdData"]["server_ids"]
    assert (len(servers["Controller"]), len(servers["Compute"])) == (1, 2)


def test_the_redeployed_dump_lists_the_updated_stack(tht18_redeployment: Redeployment,
                                                    heat_venv: Path) -> None:
    """... and the stubs read from its database are Heat's listing of them."""
    listed, shown, stubs = _restored(tht18_redeployment.after, heat_venv)
    assert listed == [("overcloud18", "UPDATE_COMPLETE")]
    assert shown["parameters"]["ComputeCount"] == "2"
    test_stub_listing.check_same(stubs, stubs=2)  # one on each compute


def test_every_playbook_passes_ansible_syntax_check_with_tripleo_ansible(
        tht18_deployment: Deployment, ansible_venv: Path, tmp_path: Path) -> None:
    """Every top-level playbook, with the update and upgrade ones, loads in ansible-core
    with tripleo-ansible: the files it imports exist, its roles, modules and plugins
    resolve.  Only the update playbook needs more (ansible-pacemaker's module)."""
    project = tht18_deployment.config_download
    names = playbooks.playbooks(project)
    assert {"deploy_steps_playbook.yaml", "update_steps_playbook.yaml",
            "upgrade_steps_playbook.yaml", "post_upgrade_steps_playbook.yaml",
            "external_update_steps_playbook.yaml", "external_upgrade_steps_playbook.yaml",
            "scale_playbook.yaml"} <= set(names)
    failed = playbooks.failures(project, ansible_venv, tmp_path / "home")
    assert set(failed) == {"update_steps_playbook.yaml"}, failed
    assert playbooks.NEEDS_ANSIBLE_PACEMAKER in failed["update_steps_playbook.yaml"]


def test_the_syntax_check_fails_without_tripleo_ansible(tht18_deployment: Deployment,
                                                       ansible_venv: Path,
                                                       tmp_path: Path) -> None:
    """The check above can fail: without tripleo-ansible's content, a TripleO module."""
    done = playbooks.syntax_check(tht18_deployment.config_download,
                                  "deploy_steps_playbook.yaml", ansible_venv,
                                  tmp_path / "home", content=False)
    assert done.returncode != 0
    assert "couldn't resolve module/action 'tripleo_all_nodes_data'" in done.stdout + done.stderr


#: Where TripleO's own roles stop on these Debian hosts: each looks up its variables
#: by OS family (RedHat: CentOS Stream, RHEL), and no such image is reachable here.
STOPPED_BY_OS = "Gather variables for each operating system"


def test_step_0_and_host_prep_run_over_ssh_on_two_hosts(
        tht18_deployment: Deployment, heat_venv: Path, ansible_venv: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A real run, with ``deploy --config-download-only --run-ansible`` on a copy of
    the 18.0.0 deployment: its step-0 plays and tasks, then its host-prep tasks, on two
    throwaway hosts (Debian containers with sshd), over SSH with a generated key that
    only the rendered inventory names (``overcloud_ssh_key``), with tripleo-ansible.
    External (undercloud) tasks are skipped: step 0's create the OVN
    bridge MAC ports in the undercloud's Neutron, which there is none of here.  What ran
    and where TripleO's roles stop is asserted, so a change shows."""
    copy = copy_deployment(tht18_deployment, tmp_path / "oc", heat_venv, ansible_venv)
    ctlplane = {"controller-0": "192.168.24.10", "compute-0": "192.168.24.20"}
    servers = set(ctlplane)
    log = copy.work_dir / "ansible.log"
    with testhosts.running(ctlplane, tmp_path / "hosts") as hosts:
        monkeypatch.setenv("ANSIBLE_SSH_ARGS", hosts.ssh_args())
        client = copy.client()

        def run(tags: str) -> tuple[dict[str, dict[str, int]], str]:
            with pytest.raises(exceptions.AnsibleFailed):
                client.deployments.create(copy.plan, work_dir=copy.work_dir,
                                          config_download_only=True,
                                          run_ansible=True, ansible_tags=tags,
                                          ansible_skip_tags="external",
                                          overcloud_ssh_user=testhosts.USER,
                                          overcloud_ssh_key=hosts.key)
            out = log.read_text()
            return testhosts.recap(out), out

        try:
            # Step 0: facts over SSH from both hosts, variables loaded, then the step-0
            # tasks change the hosts until tuned's OS lookup stops them.
            counts, out = run("facts,step0")
            inventory = yaml.safe_load((copy.config_download /
                                        "tripleo-ansible-inventory.yaml").read_text())
            assert inventory[f"{copy.plan}_Controller"]["vars"]["ansible_ssh_private_key_file"] == \
                str(hosts.key)
            assert "PLAY [Gather facts]" in out and "PLAY [Deploy step tasks for step 0]" in out
            assert all(counts[s]["ok"] >= 10 and counts[s]["changed"] >= 4
                       and counts[s]["unreachable"] == 0 and counts[s]["failed"] == 1
                       for s in servers), counts
            assert f"tuned : {STOPPED_BY_OS}" in out
            for server in servers:
                made = hosts.run(server, "test -x /var/lib/container-puppet/"
                                         "container-puppet.sh && test -d /var/log/journal")
                assert made.returncode == 0, (server, made.stderr)
            status = client.deployments.status(copy.plan)
            assert status["deployment_status"] == "DEPLOY_FAILED"
            assert status["stack_status"] == "CREATE_COMPLETE"  # kept, to re-run Ansible

            # Host prep: TripleO's firewall role stops at its OS lookup.
            counts, out = run("host_prep_steps")
            assert "PLAY [Host prep steps]" in out
            assert all(counts[s]["unreachable"] == 0 and counts[s]["failed"] == 1
                       for s in servers), counts
            assert f"tripleo_firewall : {STOPPED_BY_OS}" in out
        finally:
            client.heat.kill(str(copy.work_dir))
            client.close()
