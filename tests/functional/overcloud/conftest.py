"""The real overcloud: THT 18.0.0 deployed once per test session, shared by the tests.

The plan is the unmodified tree of the PyPI sdist; the servers come from the
shipped baremetal deployment file (``deploy --baremetal-deployment``).
A whole stack create of the upstream tripleo-heat-templates takes about ten minutes
on native heat-all here, so the deployment is made once (session fixture) and
every test that inspects it (the stack dump, the outputs, config-download, Ansible)
reads the same work dir.  Tests must not change it.

A redeploy (``tht18_redeployment``) runs on a copy of that deployment (its plan
store and work dir), so the first one stays as it was for the tests that read it:
the copied plan is updated to network isolation (THT's sample network and VIP
data) and deployed with one more compute, in one stack update, as an operator
would grow an overcloud.  It names no Heat type, so it runs on the one the
deployment was made with: the product's default, ``processes`` (heat-api and four
heat-engines on a private MariaDB and RabbitMQ; a SQLite-backed Heat would refuse its
MariaDB dump: DumpKindMismatch).  THT 12.1.0 is deployed on ``native`` heat-all, as
tripleoclient's ephemeral Heat runs (:data:`HEAT_TYPES`).

For local iteration only, ``TRIPLEO_FLOW_TEST_OVERCLOUD_DIR=DIR`` (and
``TRIPLEO_FLOW_TEST_OVERCLOUD12_DIR`` for 12.1.0) keeps the deployment in DIR
and reuses it when a finished one is there (``deployed.json``); CI never sets
them, so every CI run deploys afresh.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import overcloud_background
from tests.tht import fetch_tree_dir
from tripleo_flow.client import Client, workbooks
from tripleo_flow.common.crashpoints import ENV as CRASH_ENV
from tripleo_flow.core.deploy.progress import StackProgress

ROOT = Path(__file__).resolve().parents[3]
THT_VERSION = "18.0.0"
#: What the first deploy reported while its stack was created (next to deployed.json).
PROGRESS_FILE = "progress.json"
PLAN = "overcloud18"
#: The shipped baremetal deployment file: one controller, one compute, pre-provisioned.
BAREMETAL = (Path(__file__).resolve().parents[3] / "tripleo_flow" / "examples"
             / "baremetal-deployment.yaml")


@dataclasses.dataclass(frozen=True)
class Deployment:
    """A finished deployment of the real templates (read it, never change it)."""

    root: Path            #: the directory holding everything below
    conf_file: Path       #: the tripleo-flow configuration used
    plan: str             #: the plan (= stack) name
    work_dir: Path        #: the deploy work dir (heat-launcher/, outputs.yaml, config-download/)
    result: dict[str, Any]  #: what ``Client.deployments.create`` returned

    @property
    def config_download(self) -> Path:
        return self.work_dir / "config-download"

    def client(self) -> Client:
        return Client.from_config_files([str(self.conf_file)])


def _write_conf(root: Path, heat_venv: Path, ansible_venv: Path | None = None) -> Path:
    path = root / "tripleo-flow.conf"
    path.write_text(
        "[DEFAULT]\n"
        f"data_dir = {root / 'data'}\n"
        "[heat]\n"
        f"venv = {heat_venv}\n"
        f"clouds_yaml = {root / 'clouds.yaml'}\n"
        "api_timeout = 180\n"
        + (f"[ansible]\nvenv = {ansible_venv}\n" if ansible_venv else ""))
    return path


def copy_deployment(first: Deployment, root: Path, heat_venv: Path,
                    ansible_venv: Path | None = None) -> Deployment:
    """A copy of ``first`` (its plan store and work dir) with a configuration of its
    own, for tests that change a deployment (``first`` stays as it was)."""
    shutil.copytree(first.root / "data", root / "data", symlinks=True)
    shutil.copytree(first.work_dir, root / "work", symlinks=True)
    conf_file = _write_conf(root, heat_venv, ansible_venv)
    return Deployment(root, conf_file, first.plan, root / "work", first.result)


#: The Heat type of each first deployment: the THT 18.0.0 chain (deploy, redeploy, scale
#: down, update prepare) on the product's default, ``processes`` (the chain's stack updates
#: took 15 and 26 min on a single native heat-all beside the tests, the critical path of a
#: CI run), THT 12.1.0 on ``native`` heat-all (tripleoclient's ephemeral Heat), so that both
#: types run the real templates in every session; the later operations of the chain name
#: no type and use the one the deployment was made with.
HEAT_TYPES = {"12.1.0": "native", THT_VERSION: "processes"}


def _deploy(root: Path, heat_venv: Path, version: str, plan: str,
            networks: str | None = None) -> Deployment:
    conf_file = _write_conf(root, heat_venv)
    templates = root / "templates"
    shutil.rmtree(templates, ignore_errors=True)
    shutil.copytree(fetch_tree_dir(version), templates, symlinks=True)
    work = root / "work"
    client = Client.from_config_files([str(conf_file)])
    try:
        networks_file = None
        if networks is not None:
            networks_file = root / "network_data.yaml"
            networks_file.write_text(networks)
        client.plans.create(plan, templates, networks_file=networks_file)
        reports: list[StackProgress] = []
        result = client.deployments.create(plan, heat_type=HEAT_TYPES[version], work_dir=work,
                                           baremetal_deployment=BAREMETAL, progress=reports.append)
    finally:
        client.close()
    deployment = Deployment(root, conf_file, plan, work, result)
    # What the deploy reported while the stack was created, for the tests that check it.
    (root / PROGRESS_FILE).write_text(json.dumps([
        {"status": r.status, "complete": r.complete, "total": r.total, "share": r.share}
        for r in reports]))
    (root / "deployed.json").write_text(json.dumps({"result": result}))
    return deployment


def kept_deployment(root: Path, plan: str) -> Deployment | None:
    """The finished deployment in ``root`` (its ``deployed.json``), or None."""
    marker = root / "deployed.json"
    if not marker.exists():
        return None
    result = json.loads(marker.read_text())["result"]
    return Deployment(root, root / "tripleo-flow.conf", plan, root / "work", result)


def _from_background(name: str, plan: str) -> Deployment | None:
    """Deployment ``name`` made by the background process (``tests/overcloud_background.py``),
    once it is there; None when no background makes it (deploy inline then)."""
    root = overcloud_background.root_of(name)
    if root is None:
        return None
    overcloud_background.wait_for(name)
    found = kept_deployment(root, plan)
    assert found is not None, root
    return found


def _deployment(tmp_path_factory: pytest.TempPathFactory, heat_venv: Path, version: str,
                plan: str, kept_variable: str, networks: str | None = None) -> Deployment:
    made = _from_background(plan, plan)
    if made is not None:
        return made
    kept = os.environ.get(kept_variable)
    if kept:
        root = Path(kept).absolute()
        found = kept_deployment(root, plan)
        if found is not None:
            return found
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = tmp_path_factory.mktemp(plan)
    return _deploy(root, heat_venv, version, plan, networks)


@pytest.fixture(scope="session")
def tht18_deployment(tmp_path_factory: pytest.TempPathFactory,
                     heat_venv: Path) -> Iterator[Deployment]:
    """THT 18.0.0 (default networks: ctlplane only) on the two example servers."""
    yield _deployment(tmp_path_factory, heat_venv, THT_VERSION, PLAN,
                      "TRIPLEO_FLOW_TEST_OVERCLOUD_DIR")


@pytest.fixture(scope="session")
def tht12_deployment(tmp_path_factory: pytest.TempPathFactory,
                     heat_venv: Path) -> Iterator[Deployment]:
    """THT 12.1.0 (Ussuri), ctlplane only (``-n`` of no networks: its own
    network_data.yaml lists six isolated networks), on the two example servers."""
    yield _deployment(tmp_path_factory, heat_venv, "12.1.0", "overcloud12",
                      "TRIPLEO_FLOW_TEST_OVERCLOUD12_DIR", networks="[]\n")


#: The redeploy's network isolation: THT 18.0.0's own samples.
NETISO_NETWORKS = "network-data-samples/default-network-isolation.yaml"
NETISO_VIPS = "network-data-samples/vip-data-default-network-isolation.yaml"
#: Fixed IPs and network config the redeploy asks for.
NETISO_CONTROLLER_INTERNAL_API = "172.16.2.10"
NETISO_TEMPLATE = "templates/single_nic_vlans/single_nic_vlans.j2"


def netiso_baremetal() -> list[dict[str, Any]]:
    """The example servers, the controller with a fixed internal_api address and a
    network config template; every other isolated address comes from the pools."""
    roles = yaml.safe_load(BAREMETAL.read_text())
    controller = roles[0]["instances"][0]
    controller["networks"].append({"network": "internal_api",
                                   "fixed_ip": NETISO_CONTROLLER_INTERNAL_API})
    roles[0]["defaults"] = {"network_config": {"template": NETISO_TEMPLATE}}
    return list(roles)


#: The redeploy's servers: netiso_baremetal()'s, and a second compute with no fixed
#: IP (its addresses come from the allocation pools).
ADDED_COMPUTE = {"hostname": "compute-1", "managed": False}


@dataclasses.dataclass(frozen=True)
class Redeployment:
    """The THT 18.0.0 deployment redeployed, on a copy, with network isolation and
    one more compute."""

    before: Deployment  #: the first deployment (unchanged)
    after: Deployment   #: the copy, redeployed
    baremetal: Path     #: the baremetal deployment file of the redeploy


#: A post-deploy hook as an operator writes one for NodeExtraConfigPost (THT's
#: extraconfig/post_deploy/example.yaml, with the EndpointMap parameter THT 18's
#: post.yaml passes): a script deployment (``ExtraDeployments``) on the servers THT passes
#: (its map of servers by index: the computes, see the differential test),
#: created with the stack update that adds it.
POST_DEPLOY_HOOK = {
    "heat_template_version": "wallaby",
    "description": "Extra post-deployment config: a script on the servers given",
    "parameters": {"servers": {"type": "json"},
                   "EndpointMap": {"type": "json", "default": {}}},
    "resources": {
        "ExtraConfig": {"type": "OS::Heat::SoftwareConfig", "properties": {
            "group": "script",
            "inputs": [{"name": "greeting", "type": "String", "default": "extra"}],
            "config": "#!/bin/sh\necho \"$greeting\" > /root/extra\n"}},
        "ExtraDeployments": {"type": "OS::Heat::SoftwareDeploymentGroup", "properties": {
            "name": "ExtraDeployments", "servers": {"get_param": "servers"},
            "config": {"get_resource": "ExtraConfig"}, "actions": ["CREATE"],
            "input_values": {"greeting": "hello"}}}},
}


def _post_deploy_environment(directory: Path) -> Path:
    """An operator's ``-e`` file mapping NodeExtraConfigPost to :data:`POST_DEPLOY_HOOK`
    (beside it, as a user environment's templates are)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "extra-config.yaml").write_text(yaml.safe_dump(POST_DEPLOY_HOOK))
    env = directory / "post-deploy.yaml"
    env.write_text(yaml.safe_dump(
        {"resource_registry": {"OS::TripleO::NodeExtraConfigPost": "extra-config.yaml"}}))
    return env


def _redeploy(first: Deployment, root: Path, heat_venv: Path) -> Redeployment:
    conf_file = copy_deployment(first, root, heat_venv).conf_file
    roles = netiso_baremetal()
    compute = next(role for role in roles if role["name"] == "Compute")
    compute["count"] += 1
    compute["instances"].append(dict(ADDED_COMPUTE))
    baremetal = root / "baremetal-deployment.yaml"
    baremetal.write_text(yaml.safe_dump(roles))
    # What an operator does: ``plan update -n NETWORKS --vip-file VIPS`` with the same
    # templates, then ``deploy --baremetal-deployment``.
    templates = root / "templates"
    shutil.copytree(fetch_tree_dir(THT_VERSION), templates, symlinks=True)
    post_deploy = _post_deploy_environment(root / "post-deploy")
    client = Client.from_config_files([str(conf_file)])
    try:
        client.plans.update(first.plan, templates, networks_file=templates / NETISO_NETWORKS,
                            vip_file=templates / NETISO_VIPS)
        result = client.deployments.create(first.plan, work_dir=root / "work",
                                           baremetal_deployment=baremetal,
                                           environments=[post_deploy])
    finally:
        client.close()
    (root / "deployed.json").write_text(json.dumps({"result": result}))
    after = Deployment(root, conf_file, first.plan, root / "work", result)
    return Redeployment(first, after, baremetal)


@pytest.fixture(scope="session")
def tht18_redeployment(tmp_path_factory: pytest.TempPathFactory, heat_venv: Path,
                       tht18_deployment: Deployment) -> Iterator[Redeployment]:
    """``tht18_deployment`` copied, its plan updated to network isolation (THT's
    sample network and VIP data: five isolated networks, four VIPs) and deployed
    again with a second compute and THT's example post-deploy hook
    (``-e``: NodeExtraConfigPost, a script software deployment)."""
    made = _from_background("overcloud18-redeploy", tht18_deployment.plan)
    if made is not None:
        yield Redeployment(tht18_deployment, made, made.root / "baremetal-deployment.yaml")
        return
    root = _kept_root(tmp_path_factory, "redeploy")
    after = kept_deployment(root, tht18_deployment.plan)
    if after is not None:
        yield Redeployment(tht18_deployment, after, root / "baremetal-deployment.yaml")
        return
    yield _redeploy(tht18_deployment, root, heat_venv)


def _kept_root(tmp_path_factory: pytest.TempPathFactory, suffix: str) -> Path:
    """Where a deployment made from the first one goes: beside a kept first deployment
    (``TRIPLEO_FLOW_TEST_OVERCLOUD_DIR``: made there once, then reused), else a new
    temporary directory."""
    kept = os.environ.get("TRIPLEO_FLOW_TEST_OVERCLOUD_DIR")
    if not kept:
        return tmp_path_factory.mktemp(f"overcloud18-{suffix}")
    root = Path(kept).absolute().parent / f"{Path(kept).name}-{suffix}"
    if not (root / "deployed.json").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
    return root


#: The server the scale-down removes: the first compute, so that Heat would remove the
#: other one (the highest index) were the removal policies not sent.
REMOVED_COMPUTE = "compute-0"
#: What the scale-down keeps of its deployment before the later redeploy (update prepare).
AFTER_DELETE = "after-delete"


@dataclasses.dataclass(frozen=True)
class ScaleDown:
    """The redeployment (two computes) copied, one compute deleted by host name, then
    the plan deployed once more by a minor update prepare."""

    before: Deployment      #: the redeployment (unchanged)
    after: Deployment       #: the copy, after the delete and the later update prepare
    deleted: dict[str, Any]  #: what ``delete_overcloud_nodes`` returned

    @property
    def after_delete(self) -> Path:
        """The work dir files (outputs, environment, inventory) right after the delete."""
        return self.after.root / AFTER_DELETE


def _keep_after_delete(work: Path, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    for name in ("outputs.yaml", "environment.yaml", "stack-request.json"):
        shutil.copy2(work / name, into / name)
    shutil.copy2(work / "config-download" / "tripleo-ansible-inventory.yaml",
                 into / "tripleo-ansible-inventory.yaml")


#: Where the scale-down's delete is killed (``kill -9`` of its process): its stack
#: updated and Heat's database dumped, the database not yet wiped, the deployment not
#: yet finished.  Its ``execution resume`` must end as a delete never killed would.
DELETE_KILLED_AT = "heat.kill:dumped"
#: The delete, as a process of its own (CONF PLAN HOST WORK_DIR).
_DELETE = (
    "import sys\n"
    "from tripleo_flow.client import Client\n"
    "conf, plan, host, work = sys.argv[1:]\n"
    "with Client.from_config_files([conf]) as client:\n"
    "    client.deployments.delete_nodes(plan, [host], work_dir=work, run_ansible=False)\n")


def _delete_killed_then_resumed(copy: Deployment, client: Client) -> dict[str, Any]:
    """``overcloud node delete`` of :data:`REMOVED_COMPUTE`, killed at
    :data:`DELETE_KILLED_AT`, then its execution resumed: what the delete returns,
    and ``killed``, what was seen between the kill and the resume."""
    done = subprocess.run(
        [sys.executable, "-c", _DELETE, str(copy.conf_file), copy.plan, REMOVED_COMPUTE,
         str(copy.work_dir)], capture_output=True, text=True, timeout=3600, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), CRASH_ENV: DELETE_KILLED_AT})
    if done.returncode != -signal.SIGKILL:
        raise RuntimeError(f"the delete was not killed at {DELETE_KILLED_AT} "
                           f"(exit {done.returncode}): {done.stderr[-3000:]}")
    [killed] = client.executions.list(workbooks.DELETE_NODES)
    if killed.state != "INTERRUPTED":
        raise RuntimeError(f"the killed delete reads {killed.state}, not INTERRUPTED")
    status = client.deployments.status(copy.plan)["deployment_status"]
    execution = client.executions.resume(killed.id)
    output = dict(execution.output or {})
    return {"deployment": output["deployment"], "removed": output["removed"],
            "parameters": output["parameters"],
            "killed": {"execution": killed.id, "state": killed.state, "status": status,
                       "resumed": execution.state}}


def _scale_down(redeployed: Deployment, root: Path, heat_venv: Path) -> ScaleDown:
    copy = copy_deployment(redeployed, root, heat_venv)
    client = copy.client()
    try:
        # What an operator does: ``overcloud node delete --stack PLAN compute-0 -y``
        # (no servers to run the scale-down playbook on here: the Ansible test runs it;
        # killed once and resumed, which must change nothing of what follows),
        # then, later, a minor update prepared (``overcloud update prepare --stack PLAN
        # -y``: a redeploy with THT's update-prepare environment, which must send the
        # removal policies again all the same; one stack update proves both).
        deleted = _delete_killed_then_resumed(copy, client)
        _keep_after_delete(copy.work_dir, root / AFTER_DELETE)
        result = client.updates.prepare(copy.plan, work_dir=copy.work_dir)
    finally:
        client.close()
    (root / "deployed.json").write_text(json.dumps({"result": result, "deleted": deleted}))
    return ScaleDown(redeployed, Deployment(root, copy.conf_file, copy.plan, copy.work_dir,
                                            result), deleted)


def kept_scale_down(root: Path, before: Deployment) -> ScaleDown | None:
    found = kept_deployment(root, before.plan)
    if found is None:
        return None
    deleted = json.loads((root / "deployed.json").read_text())["deleted"]
    return ScaleDown(before, found, deleted)


@pytest.fixture(scope="session")
def tht18_scale_down(tmp_path_factory: pytest.TempPathFactory, heat_venv: Path,
                     tht18_redeployment: Redeployment) -> Iterator[ScaleDown]:
    """``tht18_redeployment`` (two computes) copied, ``compute-0`` deleted by host name
    (``delete_overcloud_nodes``), then deployed again by a minor update prepare
    (``update_prepare``)."""
    before = tht18_redeployment.after
    root = overcloud_background.root_of("overcloud18-scaledown")
    if root is not None:
        overcloud_background.wait_for("overcloud18-scaledown")
        made = kept_scale_down(root, before)
        assert made is not None, root
        yield made
        return
    root = _kept_root(tmp_path_factory, "scaledown")
    made = kept_scale_down(root, before)
    yield made if made is not None else _scale_down(before, root, heat_venv)
