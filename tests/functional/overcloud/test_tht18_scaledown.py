"""``overcloud node delete`` on the real THT 18.0.0 stack.

The redeployment's two computes: ``compute-0`` (member ``0`` of the Compute group) is
deleted by host name, then the plan is deployed once more (by ``update prepare``: see
``test_tht18_update.py``).  Heat removes the highest
members first when no removal policy names one, so a broken policy would remove
``compute-1``: what is asserted is that ``compute-1`` stays the same server (same
server id: never replaced) with the same name and addresses, and that the parameters
sent are tripleo-common's (``ScaleDownAction._get_removal_params_from_heat``,
12.1.0: ``{Role}Count`` the members left, ``{Role}RemovalPolicies`` ``[{resource_list:
[member names]}]``, ``{Role}RemovalPoliciesMode: append``, set in the plan's
``parameter_defaults`` as its ``UpdateParametersAction`` does).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.functional.http.conftest import finished, serving
from tests.functional.overcloud import testhosts
from tests.functional.overcloud.conftest import (
    BAREMETAL,
    REMOVED_COMPUTE,
    Deployment,
    ScaleDown,
    copy_deployment,
)
from tripleo_flow import exceptions
from tripleo_flow.client import workbooks

pytestmark = pytest.mark.functional

#: What the delete sets (and tripleo-common's scale-down would send) for compute-0.
SENT = {"ComputeCount": 1, "ComputeRemovalPolicies": [{"resource_list": ["0"]}],
        "ComputeRemovalPoliciesMode": "append"}


def _outputs(path: Path) -> dict[str, Any]:
    return dict(yaml.safe_load(path.read_text())["outputs"])


def _inventory_hosts(path: Path, plan: str) -> dict[str, str]:
    inventory = yaml.safe_load(path.read_text())
    hosts: dict[str, str] = {}
    for group in ("Controller", "Compute"):
        members = inventory[f"{plan}_{group}"]["hosts"] or {}
        hosts.update({name: host["ansible_host"] for name, host in members.items()})
    return hosts


def _plan_environment(deployment: Deployment) -> Path:
    """The plan's plan-environment.yaml in its local store."""
    return deployment.root / "data" / "plans" / deployment.plan / "objects" / \
        "plan-environment.yaml"


def _plan_parameters(deployment: Deployment) -> dict[str, Any]:
    """The plan's parameter_defaults."""
    text = _plan_environment(deployment).read_text()
    return dict(yaml.safe_load(text).get("parameter_defaults") or {})


def _compute_view(outputs: dict[str, Any]) -> dict[str, Any]:
    """What the outputs say of the computes: host names, server ids, addresses."""
    return {"hosts": sorted(outputs["AnsibleHostVarsMap"]["Compute"]),
            "ids": outputs["ServerIdData"]["server_ids"]["Compute"],
            "names": outputs["RoleNetHostnameMap"]["Compute"],
            "ips": outputs["RoleNetIpMap"]["Compute"]}


def _kept(view: dict[str, Any], index: int) -> dict[str, Any]:
    """The ``index``-th compute of a view, as a one-compute view."""
    return {"hosts": [view["hosts"][index]], "ids": [view["ids"][index]],
            "names": {net: [names[index]] for net, names in view["names"].items()},
            "ips": {net: [ips[index]] for net, ips in view["ips"].items()}}


def test_the_delete_sets_and_deploys_what_tripleo_sends(tht18_scale_down: ScaleDown) -> None:
    deleted = tht18_scale_down.deleted
    assert deleted["removed"] == {REMOVED_COMPUTE: {"role": "Compute", "resource": "0"}}
    assert deleted["parameters"] == SENT
    assert deleted["deployment"]["deployment_status"] == "DEPLOY_SUCCESS"
    # Sent to Heat: the stack's effective parameters right after the delete.
    environment = yaml.safe_load(
        (tht18_scale_down.after_delete / "environment.yaml").read_text())["parameters"]
    assert {k: environment[k] for k in SENT} == SENT
    # Kept in the plan (its parameter_defaults), as tripleo-common's scale-down keeps them.
    assert {k: _plan_parameters(tht18_scale_down.after)[k] for k in SENT} == SENT


def test_the_delete_killed_after_its_stack_update_resumes_as_if_never_killed(
        tht18_scale_down: ScaleDown) -> None:
    """The delete's process was killed (``kill -9``) once Heat's database was dumped,
    before its Heat was wiped and the deployment finished (``DELETE_KILLED_AT``): it read
    INTERRUPTED, its ``execution resume`` ended SUCCESS as that execution (no second
    delete), no Heat is left and its database is kept as a dump; what the delete did is
    asserted by the other tests here, as of a delete never killed."""
    killed = tht18_scale_down.deleted["killed"]
    assert (killed["state"], killed["status"], killed["resumed"]) == (
        "INTERRUPTED", "DEPLOY_INTERRUPTED", "SUCCESS"), killed
    after = tht18_scale_down.after
    with after.client() as client:
        deletes = client.executions.list(workbooks.DELETE_NODES)
    assert [(e.id, e.state) for e in deletes] == [(killed["execution"], "SUCCESS")]
    left = [p.relative_to(after.work_dir) for pattern in ("run.json", "heat-mariadb*")
            for p in after.work_dir.rglob(pattern)]
    assert left == [], left
    assert list(after.work_dir.rglob("heat-db-dump.sql")), "no Heat database dump kept"


def test_the_remaining_compute_keeps_its_server_name_and_addresses(
        tht18_scale_down: ScaleDown) -> None:
    before = _compute_view(_outputs(tht18_scale_down.before.work_dir / "outputs.yaml"))
    assert before["hosts"] == ["compute-0", "compute-1"]
    after = _compute_view(_outputs(tht18_scale_down.after_delete / "outputs.yaml"))
    assert after == _kept(before, 1)
    plan = tht18_scale_down.before.plan
    hosts_before = _inventory_hosts(
        tht18_scale_down.before.config_download / "tripleo-ansible-inventory.yaml", plan)
    hosts_after = _inventory_hosts(
        tht18_scale_down.after_delete / "tripleo-ansible-inventory.yaml", plan)
    assert hosts_after == {k: v for k, v in hosts_before.items() if k != REMOVED_COMPUTE}


def test_a_later_redeploy_does_not_reuse_the_removed_index(
        tht18_scale_down: ScaleDown) -> None:
    after = tht18_scale_down.after
    assert after.result["deployment_status"] == "DEPLOY_SUCCESS"
    assert after.result["stack_status"] == "UPDATE_COMPLETE"
    # The policies stay in the plan and go to Heat again.
    environment = yaml.safe_load((after.work_dir / "environment.yaml").read_text())
    assert {k: _plan_parameters(after)[k] for k in SENT} == SENT
    assert {k: environment["parameters"][k] for k in SENT} == SENT
    right_after = _compute_view(_outputs(tht18_scale_down.after_delete / "outputs.yaml"))
    assert _compute_view(_outputs(after.work_dir / "outputs.yaml")) == right_after
    hosts = _inventory_hosts(after.config_download / "tripleo-ansible-inventory.yaml",
                             after.plan)
    assert sorted(hosts) == ["compute-1", "controller-0"]


EXPAND = Path(__file__).resolve().parents[2] / "oracle" / "tripleo_ansible_expand.py"


def test_tripleo_ansibles_provisioning_removes_the_same_member(
        tht18_scale_down: ScaleDown, ansible_venv: Path) -> None:
    """python-tripleoclient 20.0.0 leaves the stack update to the next deploy with the
    baremetal file whose instance is marked ``provisioned: false``: tripleo-ansible's
    provisioning (run here, its ``expand``) then sends the same count and member (as a
    number; THT's example and tripleo-common give member names), and no mode (THT's
    default: append)."""
    roles = yaml.safe_load((tht18_scale_down.before.root / "baremetal-deployment.yaml")
                           .read_text())
    for role in roles:
        for instance in role.get("instances", []):
            # Pre-provisioned servers also need an address tripleo-ansible reads from
            # Neutron; the member indexes do not depend on it.
            instance.pop("managed", None)
        if role["name"] == "Compute":
            role["count"] -= 1
            next(i for i in role["instances"]
                 if i["hostname"] == REMOVED_COMPUTE)["provisioned"] = False
    done = subprocess.run([str(ansible_venv / "bin" / "python"), str(EXPAND),
                           tht18_scale_down.before.plan], input=yaml.safe_dump(roles),
                          capture_output=True, text=True, check=True, timeout=120)
    theirs = json.loads(done.stdout)
    ours = tht18_scale_down.deleted["parameters"]
    assert theirs["ComputeCount"] == ours["ComputeCount"] == 1
    assert [{"resource_list": [str(n) for n in p["resource_list"]]}
            for p in theirs["ComputeRemovalPolicies"]] == ours["ComputeRemovalPolicies"]
    assert "ComputeRemovalPoliciesMode" not in theirs
    deployed = yaml.safe_load((tht18_scale_down.before.work_dir / "environment.yaml")
                              .read_text())["parameters"]
    assert theirs["HostnameMap"] == deployed["HostnameMap"]


def _cli(conf: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    exe = shutil.which("tripleo-flow", path=os.path.dirname(sys.executable))
    assert exe
    return subprocess.run([exe, "--config-file", str(conf), *args], input=stdin,
                          capture_output=True, text=True, timeout=300, check=False)


def _plan_state(deployment: Deployment) -> tuple[Any, Any]:
    client = deployment.client()
    try:
        return (client.deployments.status(deployment.plan),
                _plan_environment(deployment).read_bytes())
    finally:
        client.close()


def test_refusals_change_nothing_from_every_interface(
        tht18_deployment: Deployment, heat_venv: Path, tmp_path: Path) -> None:
    """A host the stack has not, the last server of the primary role, and an unconfirmed
    delete are refused by the Python API, the CLI and the HTTP API before anything
    runs: the plan and its deployment status stay as they were."""
    copy = copy_deployment(tht18_deployment, tmp_path / "oc", heat_venv)
    plan, work = copy.plan, str(copy.work_dir)
    before = _plan_state(copy)
    client = copy.client()
    try:
        with pytest.raises(exceptions.ServersNotInStack) as raised:
            client.deployments.delete_nodes(plan, ["compute-9"], work_dir=work)
        assert raised.value.servers == ["compute-0", "controller-0"]
        with pytest.raises(exceptions.InvalidInput, match="would leave role Controller"):
            client.deployments.delete_nodes(plan, ["controller-0"], work_dir=work)
        # --baremetal-deployment: the instances marked provisioned: false are the hosts.
        roles = yaml.safe_load(BAREMETAL.read_text())
        with pytest.raises(exceptions.InvalidInput, match="nothing to delete"):
            client.deployments.delete_nodes(plan, baremetal_deployment=yaml.safe_dump(roles),
                                            work_dir=work)
        roles[1]["instances"].append({"hostname": "compute-9", "provisioned": False})
        with pytest.raises(exceptions.ServersNotInStack, match="'compute-9'"):
            client.deployments.delete_nodes(plan, baremetal_deployment=yaml.safe_dump(roles),
                                            work_dir=work)
    finally:
        client.close()

    done = _cli(copy.conf_file, "overcloud", "node", "delete", "--stack", plan,
                "--work-dir", work, "compute-9", "-y")
    assert done.returncode == 3, done.stderr
    assert "has no server 'compute-9'" in done.stderr
    done = _cli(copy.conf_file, "overcloud", "node", "delete", "--stack", plan,
                "--work-dir", work, "compute-0", stdin="n\n")
    assert done.returncode == 2, done.stderr
    assert "Are you sure you want to delete these overcloud nodes [y/N]?" in done.stdout
    assert "not confirmed" in done.stderr

    client = copy.client()
    client.conf.set_override("auth_token", "t0ken", group="api")
    client.conf.set_override("allowed_paths", [str(copy.root)], group="api")
    with serving(client, "t0ken") as api:
        started = api("POST", f"/v1/workflows/{workbooks.DELETE_NODES}/executions",
                      json={"input": {"plan": plan, "hosts": ["compute-9"], "work_dir": work,
                                      "run_ansible": False}})
        assert started.status_code == 202, started.text
        ended = finished(api, started.json()["id"])
        assert ended["state"] == "ERROR"
        assert "has no server 'compute-9'" in json.dumps(ended)
        runs = [e.state for e in api.client.executions.list(workbooks.DELETE_NODES)]
    # The unconfirmed CLI run started nothing; the others failed at their first task.
    assert runs == ["ERROR"] * 6
    assert _plan_state(copy) == before


#: Where the scale-down playbook stops here: its first scale task asks the undercloud's
#: ``openstack`` client for the overcloud's Neutron agents (none here).
STOPPED_AT = "Get neutron agents ID"


def test_the_scale_playbook_runs_on_the_leaving_server_only(
        tht18_deployment: Deployment, heat_venv: Path, ansible_venv: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A real run of config-download's ``scale_playbook.yaml`` over SSH, on the server
    leaving only (``compute-0``; ``controller-0`` is not even started): facts, then the
    scale tasks until TripleO's need an overcloud.  Its failure stops the delete before
    the parameters and the stack: nothing changed."""
    copy = copy_deployment(tht18_deployment, tmp_path / "oc", heat_venv, ansible_venv)
    before = _plan_state(copy)
    with testhosts.running({"compute-0": "192.168.24.20"}, tmp_path / "hosts") as hosts:
        monkeypatch.setenv("ANSIBLE_SSH_ARGS", hosts.ssh_args())
        monkeypatch.setenv("ANSIBLE_PRIVATE_KEY_FILE", str(hosts.key))  # as tripleoclient
        client = copy.client()
        try:
            # Twice (scale.run_playbook re-run, as a resumed execution would): the
            # same run, the same stop, nothing changed either time.
            for _ in range(2):
                with pytest.raises(exceptions.AnsibleFailed) as raised:
                    client.deployments.delete_nodes(copy.plan, ["compute-0"],
                                                    work_dir=copy.work_dir)
                assert raised.value.playbook == "scale_playbook.yaml"
                out = (copy.work_dir / "ansible.log").read_text()
                counts = testhosts.recap(out)
                assert set(counts) == {"compute-0"}, counts  # controller-0 never contacted
                assert counts["compute-0"]["unreachable"] == 0, counts
                assert counts["compute-0"]["ok"] >= 5 and counts["compute-0"]["failed"] == 1
                assert "PLAY [Scaling]" in out
                assert f"FATAL | {STOPPED_AT} | compute-0 -> localhost" in out
                assert _plan_state(copy) == before
        finally:
            client.close()
