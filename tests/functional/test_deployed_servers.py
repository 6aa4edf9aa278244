"""deploy --baremetal-deployment: the plan's deployed-servers environment, on both stores."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.fixtures_plans import snapshot
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.core.plan import heatfiles
from tripleo_flow.plans.store import PlanStore

pytestmark = pytest.mark.functional
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tripleo_flow" / "examples" / "baremetal-deployment.yaml"
PATH = "deployed-servers-environment.yaml"


def _state(store: PlanStore) -> tuple[dict[str, bytes], int]:
    return snapshot(store, "overcloud"), len(store.list_versions("overcloud",
                                                                  "plan-environment.yaml"))


def _plan(client: Client, tmp_path: Path) -> None:
    port = "heat_template_version: rocky\nresources: {}\n"
    tree = {**basic_tree(), "deployed-server/deployed-neutron-port.yaml": port,
            "network/ports/noop.yaml": port, "deployed-server/deployed-server.yaml": port}
    client.plans.create("overcloud", write_tree(tmp_path / "t", tree))
    env = tmp_path / "params.yaml"
    env.write_text("parameter_defaults: {ComputeCount: 7}\n")
    client.environments.add("overcloud", [env])


def test_generated_enabled_between_the_plans_own_and_the_users(client: Client,
                                                               tmp_path: Path) -> None:
    _plan(client, tmp_path)
    done = client.deployments.update_servers("overcloud", EXAMPLE)
    assert done == {"path": PATH, "counts": {"Controller": 1, "Compute": 1},
                    "hosts": ["compute-0", "controller-0"], "changed": True}
    listed = [e["path"] for e in client.environments.list("overcloud")]
    assert listed[-2:] == [PATH, "user-environments/1/params.yaml"]
    env = yaml.safe_load(client._session.store.get_object("overcloud", PATH))
    params = env["parameter_defaults"]
    assert params["HostnameMap"] == {"overcloud-controller-0": "controller-0",
                                     "overcloud-novacompute-0": "compute-0"}
    # The user's own file still wins (it comes later in the request).
    request = heatfiles.build_request(dict(client.plans._repo.read_all("overcloud")),
                                      client.plans._repo.environment("overcloud"))
    order = [heatfiles.object_name(u) for u in request["environment_files"]]
    assert order.index(PATH) < order.index("user-environments/1/params.yaml")

    # roles list shows the effective counts: the generated ones, then the user's file.
    assert client.roles.counts("overcloud") == {"Controller": 1, "Compute": 7}
    client.environments.remove("overcloud", ["user-environments/1/params.yaml"])
    assert client.roles.counts("overcloud") == {"Controller": 1, "Compute": 1}
    client.parameters.set("overcloud", {"ComputeCount": 3})
    assert client.roles.counts("overcloud") == {"Controller": 1, "Compute": 3}
    client.parameters.reset("overcloud", ["ComputeCount"])

    # The same file again changes nothing, not even the history.
    before = _state(client._session.store)
    assert client.deployments.update_servers("overcloud", EXAMPLE)["changed"] is False
    assert _state(client._session.store) == before


def test_a_redeploy_with_one_more_server_keeps_the_addresses(client: Client,
                                                             tmp_path: Path) -> None:
    _plan(client, tmp_path)
    data = yaml.safe_load(EXAMPLE.read_text())
    del data[1]["instances"][0]["networks"]
    client.deployments.update_servers("overcloud", yaml.safe_dump(data))
    first = yaml.safe_load(client._session.store.get_object("overcloud",
                                                            PATH))["parameter_defaults"]
    data[1]["count"] = 2
    data[1]["instances"].append({"hostname": "compute-1", "managed": False})
    assert client.deployments.update_servers("overcloud", yaml.safe_dump(data))["counts"] == {
        "Controller": 1, "Compute": 2}
    second = yaml.safe_load(client._session.store.get_object("overcloud",
                                                             PATH))["parameter_defaults"]
    # (These templates take the Ussuri port map: the VIP is its control_virtual_ip.)
    assert "control_virtual_ip" in first["DeployedServerPortMap"]
    for host, port in first["DeployedServerPortMap"].items():
        assert second["DeployedServerPortMap"][host] == port
    assert second["DeployedServerPortMap"]["compute-1-ctlplane"]["fixed_ips"][0][
        "ip_address"] not in {p["fixed_ips"][0]["ip_address"]
                              for p in first["DeployedServerPortMap"].values()}


def _deployed_networks_plan(client: Client, tmp_path: Path, pool_end: str) -> None:
    """A plan whose templates take deployed networks (THT 18's shape), with one
    isolated network the controller uses (older network_data format: no subnets)."""
    port = "heat_template_version: wallaby\nresources: {}\n"
    roles = ("- name: Controller\n  tags: [primary, controller]\n"
             "  networks: [InternalApi]\n- name: Compute\n")
    networks = ("- name: InternalApi\n  name_lower: internal_api\n  vip: true\n"
                "  ip_subnet: 172.16.2.0/24\n  allocation_pools: "
                f"[{{start: 172.16.2.4, end: {pool_end}}}]\n")
    tree = {**basic_tree(), "roles_data.yaml": roles, "network_data.yaml": networks,
            "vip_data.yaml": "- network: ctlplane\n- network: internal_api\n",
            **{name: port for name in (
                "network/deployed_networks.yaml", "deployed-server/deployed-neutron-port.yaml",
                "network/ports/deployed_vip_ctlplane.yaml",
                "network/ports/deployed_internal_api.yaml",
                "network/ports/deployed_vip_internal_api.yaml")}}
    client.plans.create("overcloud", write_tree(tmp_path / "t", tree))


def test_isolated_addresses_are_stored_with_the_plan_and_kept(client: Client,
                                                              tmp_path: Path) -> None:
    _deployed_networks_plan(client, tmp_path, "172.16.2.9")
    data = yaml.safe_load(EXAMPLE.read_text())
    data[0]["instances"][0]["networks"].append({"network": "internal_api",
                                                "fixed_ip": "172.16.2.9"})
    client.deployments.update_servers("overcloud", yaml.safe_dump(data))
    env = yaml.safe_load(client._session.store.get_object("overcloud", PATH))
    params = env["parameter_defaults"]
    assert params["NodePortMap"]["controller-0"]["internal_api"]["ip_subnet"] == \
        "172.16.2.9/24"
    assert "internal_api" not in params["NodePortMap"]["compute-0"]
    assert params["VipPortMap"]["internal_api"]["ip_address"] == "172.16.2.4"
    assert env["resource_registry"]["OS::TripleO::Controller::Ports::InternalApiPort"] == \
        "network/ports/deployed_internal_api.yaml"
    # Without its fixed IP the controller keeps the address it had.
    data[0]["instances"][0]["networks"].pop()
    assert client.deployments.update_servers("overcloud", yaml.safe_dump(data))["changed"] \
        is False


def test_an_exhausted_isolated_pool_changes_nothing(client: Client, tmp_path: Path) -> None:
    # One address: the VIP's; the controller finds none.
    _deployed_networks_plan(client, tmp_path, "172.16.2.4")
    before = _state(client._session.store)
    with pytest.raises(exceptions.InvalidInput,
                       match="internal_api .* no address left for host controller-0 of "
                             "role Controller"):
        client.deployments.update_servers("overcloud", EXAMPLE)
    assert _state(client._session.store) == before


def test_templates_without_deployed_server_support_are_named(client: Client,
                                                             tmp_path: Path) -> None:
    client.plans.create("overcloud", write_tree(tmp_path / "t", basic_tree()))
    before = _state(client._session.store)
    with pytest.raises(exceptions.InvalidInput, match="deployed-server/deployed-neutron-port"):
        client.deployments.update_servers("overcloud", EXAMPLE)
    assert _state(client._session.store) == before


@pytest.mark.parametrize(("text", "message"), [
    ("- name: Controller\n  count: 1\n  instances: [{hostname: c0}]\n", "managed"),
    ("- name: [\n", "YAML"),
    ("- name: C\n  instances: [{hostname: c0, managed: false, networks: "
     "[{network: ctlplane, fixed_ip: 10.1.1.1}]}]\n", "not in the control plane subnet"),
])
def test_a_bad_file_changes_nothing(client: Client, tmp_path: Path, text: str,
                                    message: str) -> None:
    _plan(client, tmp_path)
    before = _state(client._session.store)
    with pytest.raises(exceptions.InvalidInput, match=message):
        client.deployments.update_servers("overcloud", text)
    assert _state(client._session.store) == before


def test_the_cli_deploy_refuses_a_bad_file_before_anything(tmp_path: Path) -> None:
    conf = tmp_path / "tf.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")
    cli = [sys.executable, "-m", "tripleo_flow.cli.main", "--config-file", str(conf)]
    subprocess.run([*cli, "plan", "create", "overcloud", "--sample"], check=True,
                   capture_output=True, cwd=ROOT)
    bad = tmp_path / "bm.yaml"
    bad.write_text("- name: Controller\n  count: 2\n  instances: "
                   "[{hostname: c0, managed: false}]\n")
    proc = subprocess.run([*cli, "deploy", "--plan", "overcloud", "--baremetal-deployment",
                           str(bad)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    # The second Controller is managed (the default): no node was provisioned for it.
    assert "overcloud-controller-0" in proc.stderr and "node provision" in proc.stderr
    listed = subprocess.run([*cli, "plan", "environment", "list", "overcloud", "-f", "value",
                             "-c", "path"], capture_output=True, text=True, cwd=ROOT,
                            check=True).stdout
    assert PATH not in listed
    assert not (tmp_path / "data" / "deployments").exists()
