"""node provision / unprovision on a real Ironic (fake-hardware, fake deploy), and the
whole path register -> introspect -> provide -> provision -> deploy on a real heat-all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fixtures_ironic import remove_all_nodes
from tests.functional.heat.conftest import make_conf
from tripleo_flow import exceptions
from tripleo_flow.cli.main import main
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.ironic.client import IronicClient
from tripleo_flow.plans.local import LocalStore

from .conftest import fake_nodes

pytestmark = pytest.mark.functional

RECORD = "provisioned-nodes.yaml"
STUB = "heat_template_version: wallaby\nresources: {}\n"
FILE = """
- name: Controller
  count: 1
  defaults: {profile: control}
- name: Compute
  count: 2
  defaults: {profile: compute}
"""


def sample_tree(root: Path) -> Path:
    """The sample plan with the port templates a deployed-servers environment maps, and
    without its own role counts (a plan's parameters win over its environments, so
    they would override the counts of the deployed-servers environment)."""
    shutil.copytree(sample_plan_dir(), root)
    env_file = root / "plan-environment.yaml"
    env = yaml.safe_load(env_file.read_text())
    env["parameter_defaults"] = {k: v for k, v in env["parameter_defaults"].items()
                                 if not k.endswith("Count")}
    env_file.write_text(yaml.safe_dump(env))
    for name in ("deployed-server/deployed-neutron-port.yaml", "network/ports/noop.yaml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(STUB)
    return root


def _available(client: Client, tmp_path: Path) -> dict[str, str]:
    """Three compute and one control fake node, available; uuid by name."""
    document = fake_nodes(3)
    document["nodes"] += fake_nodes(1, "ctl", capabilities="profile:control")["nodes"]
    path = tmp_path / "instackenv.json"
    path.write_text(json.dumps(document))
    done = client.nodes.register(path)
    names = [n["name"] for n in done]
    client.nodes.manage(names)
    client.nodes.provide(names)
    return {n["name"]: n["uuid"] for n in done}


def _state(ironic: IronicClient) -> dict[str, tuple[str, Any, Any]]:
    return {n["name"]: (n["provision_state"], n.get("instance_uuid"),
                        (n.get("instance_info") or {}).get("display_name"))
            for n in ironic.list_nodes(("name", "provision_state", "instance_uuid",
                                        "instance_info"))}


def _record(client: Client, plan: str = "overcloud") -> dict[str, Any]:
    try:
        return yaml.safe_load(client._session.store.get_object(plan, RECORD))
    except exceptions.ObjectNotFound:
        return {}


@pytest.fixture
def ironic(ironic_endpoint: str) -> IronicClient:
    return IronicClient(ironic_endpoint)


def test_provision_picks_by_profile_is_idempotent_and_unprovision_releases(
        node_client: Client, ironic: IronicClient, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    client = node_client
    uuids = _available(client, tmp_path)
    client.plans.create("overcloud", sample_tree(tmp_path / "t"))
    done = client.nodes.provision(FILE)
    served = {d["hostname"]: d["node_name"] for d in done}
    assert served == {"overcloud-controller-0": "ctl-0", "overcloud-novacompute-0": "node-0",
                      "overcloud-novacompute-1": "node-1"}
    assert all(d["deployed"] and d["provision_state"] == "active" for d in done)
    nodes = _state(ironic)
    for host, name in served.items():
        assert nodes[name][0] == "active" and nodes[name][1] and nodes[name][2] == host
    assert nodes["node-2"] == ("available", None, None)
    assert {h: e["node"] for h, e in _record(client).items()} == {
        h: uuids[n] for h, n in served.items()}

    # Again, through the CLI: nothing moves.
    conf = tmp_path / "tf.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n[ironic]\nendpoint = "
                    f"{ironic.endpoint}\n")
    bm_file = tmp_path / "bm.yaml"
    bm_file.write_text(FILE)
    capsys.readouterr()
    assert main(["--config-file", str(conf), "node", "provision", "--baremetal-deployment",
                 str(bm_file), "-f", "json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert {d["hostname"]: d["node_name"] for d in again} == served
    assert not any(d["deployed"] for d in again)
    assert _state(ironic) == nodes

    # deploy takes the file: the deployed-servers environment names the provisioned hosts.
    assert client.deployments.update_servers("overcloud", FILE)["hosts"] == sorted(served)

    # Unprovision one host name through the CLI, then the rest by the file.
    assert main(["--config-file", str(conf), "node", "unprovision", "--hostname",
                 "overcloud-novacompute-1", "-f", "json"]) == 0
    assert _state(ironic)["node-1"] == ("available", None, None)
    assert set(_record(client)) == {"overcloud-controller-0", "overcloud-novacompute-0"}
    released = client.nodes.unprovision(baremetal_deployment=FILE)
    assert {r["hostname"] for r in released} == {"overcloud-controller-0",
                                                "overcloud-novacompute-0"}
    assert {v[0] for v in _state(ironic).values()} == {"available"}
    assert _record(client) == {}

    # Not provisioned any more: deploy refuses the file, naming node provision.
    with pytest.raises(exceptions.InvalidInput, match="node provision"):
        client.deployments.update_servers("overcloud", FILE)


def test_a_failure_undeploys_only_this_runs_nodes(node_client: Client, ironic: IronicClient,
                                                  tmp_path: Path) -> None:
    client = node_client
    _available(client, tmp_path)
    client.plans.create("overcloud", sample=True)
    client.nodes.provision("- name: Controller\n  count: 1\n  defaults: {profile: control}\n")
    before = _state(ironic)
    record = _record(client)
    # node-2 cannot deploy: the direct deploy interface needs what this Ironic lacks.
    ironic.patch_node("node-2", [{"op": "replace", "path": "/deploy_interface",
                                  "value": "direct"}])
    text = FILE.replace("count: 2\n", "count: 2\n  instances:\n    - {hostname: c-0}\n"
                        "    - {hostname: c-bad, name: node-2}\n")
    with pytest.raises(exceptions.WorkflowFailed, match="node-2"):
        client.nodes.provision(text)
    assert _state(ironic) == before
    assert before["ctl-0"][0] == "active"
    assert _record(client) == record


def test_no_fitting_node_is_named_and_nothing_deploys(node_client: Client,
                                                      ironic: IronicClient,
                                                      tmp_path: Path) -> None:
    client = node_client
    _available(client, tmp_path)
    client.plans.create("overcloud", sample=True)
    before = _state(ironic)
    with pytest.raises(exceptions.WorkflowFailed,
                       match=r"No available node fits overcloud-controller-1"):
        client.nodes.provision(FILE.replace("count: 1", "count: 2"))
    assert _state(ironic) == before
    assert _record(client) == {}


def test_register_introspect_provide_provision_deploy(ironic_endpoint: str, heat_venv: Path,
                                                       tmp_path: Path) -> None:
    conf = make_conf(tmp_path, heat_venv)
    conf.set_override("endpoint", ironic_endpoint, group="ironic")
    client = Client(conf, store=LocalStore(tmp_path / "plans"))
    ironic = IronicClient(ironic_endpoint)
    work = tmp_path / "work"
    try:
        document = fake_nodes(2)
        document["nodes"] += fake_nodes(1, "ctl", capabilities="profile:control")["nodes"]
        client.nodes.register(document)
        inspected = client.nodes.introspect(all_manageable=False,
                                            nodes=["node-0", "node-1", "ctl-0"], provide=True)
        assert {n["provision_state"] for n in inspected} == {"available"}
        client.plans.create("oc", sample_tree(tmp_path / "t"))
        done = client.nodes.provision(FILE, plan="oc")
        hosts = {d["hostname"]: d["node"] for d in done}
        assert set(hosts) == {"oc-controller-0", "oc-novacompute-0", "oc-novacompute-1"}

        result = client.deployments.create("oc", heat_type="native", work_dir=work,
                                           baremetal_deployment=FILE)
        assert result["deployment_status"] == "DEPLOY_SUCCESS"
        inventory = yaml.safe_load((work / "config-download" /
                                    "tripleo-ansible-inventory.yaml").read_text())
        assert set(inventory["oc_Compute"]["hosts"]) == {"oc-novacompute-0", "oc-novacompute-1"}
        assert set(inventory["oc_Controller"]["hosts"]) == {"oc-controller-0"}
        env = yaml.safe_load(client._session.store.get_object("oc",
                                                              "deployed-servers-environment.yaml"))
        ports = env["parameter_defaults"]["DeployedServerPortMap"]
        addresses = {h: ports[f"{h}-ctlplane"]["fixed_ips"][0]["ip_address"] for h in hosts}
        assert len(set(addresses.values())) == 3
        saved = (work / "environment.yaml").read_text()
        for host, address in addresses.items():
            assert host in saved and address in saved, host
        assert {ironic.get_node(u)["provision_state"] for u in hosts.values()} == {"active"}
    finally:
        client.heat.kill(str(work))
        client.close()
        remove_all_nodes(ironic_endpoint)
