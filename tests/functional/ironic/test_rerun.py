"""A second run of each Ironic node action, with the same inputs, on a real Ironic
(issue 17: a resumed workflow runs its interrupted task again from its start).

Each test runs the action once, looks at Ironic (every node's fields and ports) and
the plan store, runs it again with the very inputs a resumed ``with-items`` item
gets (the results of the tasks before it, as persisted: a node's provision state as
it was selected, a provisioning choice made before the node was deployed), and
checks what the action's :class:`~tripleo_flow.actions.base.Rerun` promises:

* READS: nothing changed, and the second result is the first;
* CONVERGES: the second run succeeds and leaves what the first left (each node
  registered once, each port once, each node deployed once for its host name);
* REFUSES: the second run fails with a clear error naming the node and changes nothing.

Timestamps Ironic sets on each request (``inspection_finished_at``, ``updated_at``) are
not state a rerun must keep: they are left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.plan_state import store_state
from tripleo_flow import exceptions
from tripleo_flow.actions.base import ActionContext, Rerun
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import Client
from tripleo_flow.ironic.client import IronicClient

from .conftest import fake_nodes
from .test_provision import sample_tree

pytestmark = pytest.mark.functional

REGISTRY = ActionRegistry.load()
PLAN = "overcloud"
#: Node fields a second run must leave as the first left them.
FIELDS = ("uuid", "name", "driver", "provision_state", "power_state", "maintenance",
          "properties", "resource_class", "instance_uuid", "instance_info", "last_error")
COMPUTE_FILE = "- name: Compute\n  count: 1\n  defaults: {profile: compute}\n"
POWER_OFF = [{"interface": "power", "step": "power_off"}]


def _run(context: ActionContext, name: str, **inputs: Any) -> Any:
    return REGISTRY.get(name)(context).execute(**inputs)


def _outcome(context: ActionContext, name: str, inputs: dict[str, Any]) -> Any:
    try:
        return _run(context, name, **inputs)
    except exceptions.TripleoFlowError as exc:
        return exc


def _state(client: Client) -> dict[str, Any]:
    """Every node of the Ironic (by UUID, the fields above), its ports, and the plan store."""
    ironic = IronicClient(client.conf.ironic.endpoint)
    nodes = {}
    for listed in ironic.list_nodes(("uuid",)):
        node = ironic.get_node(listed["uuid"])
        nodes[node["uuid"]] = {
            **{k: node.get(k) for k in FIELDS},
            "ports": sorted(p["address"] for p in ironic.node_ports(node["uuid"]))}
    return {"nodes": nodes, "store": store_state(client._session.store)}


def twice(client: Client, name: str, inputs: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """Run ``name`` twice with ``inputs``; check what its Rerun declares; return both
    outcomes and the state after the first run."""
    rerun = REGISTRY.get(name).rerun
    before = _state(client)
    first = _outcome(client._session.context, name, inputs)
    assert not isinstance(first, exceptions.TripleoFlowError), f"{name} failed: {first}"
    middle = _state(client)
    second = _outcome(client._session.context, name, inputs)
    after = _state(client)
    assert after == middle, f"a second {name} changed Ironic or the plan store"
    if rerun is Rerun.READS:
        assert middle == before, f"{name} is declared as only reading"
        assert second == first
    elif rerun is Rerun.REFUSES:
        assert middle != before, f"{name} changed nothing on its first run"
        assert isinstance(second, exceptions.TripleoFlowError), second
    else:
        assert rerun is Rerun.CONVERGES, rerun
        assert not isinstance(second, exceptions.TripleoFlowError), \
            f"a second {name} failed: {second}"
    return first, second, middle


def _register(client: Client, document: dict[str, Any]) -> list[dict[str, Any]]:
    specs = _run(client._session.context, "nodes.check", nodes=document)
    return [_run(client._session.context, "nodes.register", node=spec) for spec in specs]


def _states(state: dict[str, Any]) -> dict[str, str]:
    return {n["name"]: n["provision_state"] for n in state["nodes"].values()}


def test_register_twice_registers_each_node_and_port_once(node_client: Client) -> None:
    document = fake_nodes(2)
    specs = _run(node_client._session.context, "nodes.check", nodes=document)
    for spec in specs:
        first, second, state = twice(node_client, "nodes.register", {"node": spec})
        assert first["created"] is True and second["created"] is False
        assert second["uuid"] == first["uuid"] and second["ports"] == []
    nodes = list(state["nodes"].values())
    assert sorted(n["name"] for n in nodes) == ["node-0", "node-1"]
    assert sorted(p for n in nodes for p in n["ports"]) == sorted(
        e["mac"][0] for e in document["nodes"])
    assert {n["properties"]["memory_mb"] for n in nodes} == {8192}


def test_find_existing_then_register_twice_converges(node_client: Client) -> None:
    """A resumed import re-runs register with the spec find_existing made before the
    node existed (``existing`` None): Ironic's 409 on the name sends it to the update."""
    document = fake_nodes(3)
    _register(node_client, {"nodes": document["nodes"][:1]})  # node-0 already there
    del document["nodes"][1]["name"]  # found by its MAC alone once registered
    specs = _run(node_client._session.context, "nodes.check", nodes=document)
    found, again, _ = twice(node_client, "nodes.find_existing", {"specs": specs})
    assert found == again
    uuid0 = next(u for u, n in _state(node_client)["nodes"].items() if n["name"] == "node-0")
    assert [s["existing"] for s in found] == [uuid0, None, None]
    for spec in found[1:]:
        first, second, _ = twice(node_client, "nodes.register", {"node": spec})
        assert first["created"] is True and second["created"] is False
        assert second["uuid"] == first["uuid"] and second["ports"] == []
    refound = _run(node_client._session.context, "nodes.find_existing", specs=specs)
    assert all(s["existing"] for s in refound), "found by name, and by MAC when unnamed"
    state = _state(node_client)
    assert len(state["nodes"]) == 3
    assert sorted(p for n in state["nodes"].values() for p in n["ports"]) == sorted(
        e["mac"][0] for e in document["nodes"])


def test_select_manage_inspect_clean_provide_twice(node_client: Client) -> None:
    client = node_client
    _register(client, fake_nodes(1))
    # The selection a resumed job keeps: the node as it was before it was managed.
    selected, _, _ = twice(client, "nodes.select", {"nodes": ["node-0"]})
    assert [(n["name"], n["provision_state"]) for n in selected] == [("node-0", "enroll")]
    by_state, _, _ = twice(client, "nodes.select", {"state": "enroll"})
    assert by_state == selected

    inputs = {"node": "node-0", "state": selected[0]["provision_state"]}
    first, second, state = twice(client, "nodes.manage", inputs)
    assert first["was"] == "enroll" and first["provision_state"] == "manageable"
    assert second["provision_state"] == "manageable"
    assert _states(state) == {"node-0": "manageable"}

    first, second, state = twice(client, "nodes.inspect", {"node": "node-0"})
    assert first["provision_state"] == second["provision_state"] == "manageable"
    assert first["inspection_finished_at"] and second["inspection_finished_at"]
    assert second["properties"] == first["properties"]
    assert first["properties"]["cpu_arch"] == "x86_64"

    first, second, state = twice(client, "nodes.clean",
                                 {"node": "node-0", "steps": POWER_OFF})
    assert first["provision_state"] == second["provision_state"] == "manageable"
    assert first["last_error"] is None and second["last_error"] is None
    assert _states(state) == {"node-0": "manageable"}

    first, second, state = twice(client, "nodes.provide", {"node": "node-0"})
    assert first["was"] == "manageable" and second["was"] == "available"
    assert first["provision_state"] == second["provision_state"] == "available"
    assert _states(state) == {"node-0": "available"}


def test_delete_twice_is_refused_naming_the_node(node_client: Client) -> None:
    registered = _register(node_client, fake_nodes(2))
    first, second, state = twice(node_client, "nodes.delete", {"node": "node-1"})
    assert first == {"uuid": registered[1]["uuid"], "name": "node-1", "deleted": True}
    assert isinstance(second, exceptions.NodeNotFound)
    assert "'node-1' does not exist" in str(second)
    assert _states(state) == {"node-0": "enroll"}


def test_choose_deploy_unprovision_undeploy_twice(node_client: Client,
                                                  tmp_path: Path) -> None:
    client = node_client
    for node in _register(client, fake_nodes(2)):
        _run(client._session.context, "nodes.manage", node=node["uuid"])
        _run(client._session.context, "nodes.provide", node=node["uuid"])
    client.plans.create(PLAN, sample_tree(tmp_path / "t"))
    inputs = {"plan": PLAN, "baremetal_deployment": COMPUTE_FILE}
    chosen, _, _ = twice(client, "nodes.choose", inputs)
    assert [(a["hostname"], a["node_name"], a["deploy"]) for a in chosen] == [
        ("overcloud-novacompute-0", "node-0", True)]

    # The choice as persisted before the deploy: a resumed item deploys it again.
    first, second, state = twice(client, "nodes.deploy", {"node": chosen[0]})
    assert first["deployed"] is True and first["provision_state"] == "active"
    assert second["provision_state"] == "active"
    node = state["nodes"][chosen[0]["node"]]
    assert node["provision_state"] == "active"
    assert node["instance_uuid"] == first["claim"]
    assert node["instance_info"]["display_name"] == "overcloud-novacompute-0"
    assert _states(state) == {"node-0": "active", "node-1": "available"}

    _run(client._session.context, "nodes.record", plan=PLAN, nodes=[first])
    released, _, _ = twice(client, "nodes.unprovision_select",
                           {"plan": PLAN, "hostnames": ["overcloud-novacompute-0"]})
    assert [(r["hostname"], r["node"]) for r in released] == [
        ("overcloud-novacompute-0", chosen[0]["node"])]

    first, second, state = twice(client, "nodes.undeploy", {"node": released[0]})
    assert first["undeployed"] is True and first["provision_state"] == "available"
    assert second["provision_state"] == "available"
    node = state["nodes"][chosen[0]["node"]]
    assert node["instance_uuid"] is None
    assert _states(state) == {"node-0": "available", "node-1": "available"}
