"""The node routes of the HTTP API run the same tripleo.nodes workflows, on a real Ironic."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures_ironic import remove_all_nodes
from tests.functional.http.conftest import Api, finished, running_api
from tripleo_flow.ironic.client import IronicClient

from .conftest import fake_nodes


@pytest.fixture
def node_api(ironic_endpoint: str, tmp_path: Path) -> Iterator[Api]:
    with running_api(tmp_path, {"ironic": {"endpoint": ironic_endpoint}}) as api:
        yield api
    remove_all_nodes(ironic_endpoint)


def test_import_introspect_show_and_delete_over_http(node_api: Api) -> None:
    started = node_api("POST", "/v1/nodes", json=fake_nodes(2))
    assert started.status_code == 202, started.text
    assert started.json()["workflow"] == "tripleo.nodes.register"
    done = finished(node_api, started.json()["id"])
    assert done["state"] == "SUCCESS", done
    assert [n["name"] for n in done["output"]["nodes"]] == ["node-0", "node-1"]

    started = node_api("POST", "/v1/nodes/introspect",
                       json={"nodes": ["node-0", "node-1"], "provide": True})
    assert started.status_code == 202, started.text
    assert finished(node_api, started.json()["id"])["state"] == "SUCCESS"
    listed = node_api("GET", "/v1/nodes").json()
    assert {n["name"]: n["provision_state"] for n in listed} == {
        "node-0": "available", "node-1": "available"}
    shown = node_api("GET", "/v1/nodes/node-1").json()
    assert shown["properties"]["memory_mb"] == 8192 and shown["inspection_finished_at"]

    started = node_api("POST", "/v1/nodes/delete", json={"nodes": ["node-0"]})
    assert finished(node_api, started.json()["id"])["state"] == "SUCCESS"
    assert node_api("GET", "/v1/nodes/node-0").status_code == 404


def test_import_to_a_state_and_an_empty_selection_over_http(node_api: Api) -> None:
    started = node_api("POST", "/v1/nodes/introspect", json={"all_manageable": True})
    assert started.status_code == 202, started.text
    done = finished(node_api, started.json()["id"])
    assert done["state"] == "ERROR" and done["failed_task"] == "select_nodes", done
    assert "No node is manageable and out of maintenance, so nothing was done (Ironic has " \
           "no node). Register nodes with: POST /v1/nodes." in done["error"]
    assert done["hints"] == [{"command": "tripleo-flow node import FILE",
                              "request": "POST /v1/nodes"}]

    started = node_api("POST", "/v1/nodes", json={**fake_nodes(2), "initial_state": "enroll"})
    done = finished(node_api, started.json()["id"])
    assert [n["provision_state"] for n in done["output"]["nodes"]] == ["enroll", "enroll"]
    started = node_api("POST", "/v1/nodes/provide", json={"all_manageable": True})
    done = finished(node_api, started.json()["id"])
    assert "(Ironic's 2 nodes: 2 enroll). Move those in enroll to manageable with: " \
           "POST /v1/nodes/manage; see them with: GET /v1/nodes." in done["error"]

    started = node_api("POST", "/v1/nodes", json={**fake_nodes(3), "introspect": True,
                                                  "provide": True})
    assert started.json()["input"]["introspect"] is True
    done = finished(node_api, started.json()["id"])
    assert done["state"] == "SUCCESS", done
    assert [(n["name"], n["created"], n["provision_state"]) for n in done["output"]["nodes"]] \
        == [("node-0", False, "available"), ("node-1", False, "available"),
            ("node-2", True, "available")]
    assert all(n["inspection_finished_at"] for n in node_api("GET", "/v1/nodes").json())


@pytest.mark.parametrize("options", [{"initial_state": "active"},
                                     {"initial_state": "enroll", "introspect": True},
                                     {"provide": "yes"}])
def test_bad_import_options_are_refused_before_an_execution_starts(
        node_api: Api, options: dict[str, object]) -> None:
    answer = node_api("POST", "/v1/nodes", json={**fake_nodes(1), **options})
    assert answer.status_code == 400, answer.text
    assert node_api("GET", "/v1/executions").json() == []
    assert node_api("GET", "/v1/nodes").json() == []


def test_a_bad_node_list_is_refused_before_an_execution_starts(node_api: Api) -> None:
    document = fake_nodes(2)
    document["nodes"][1]["pm_type"] = "ilo"
    answer = node_api("POST", "/v1/nodes", json=document)
    assert answer.status_code == 400
    assert "node 2 ('node-1')" in answer.json()["error"]["message"]
    assert node_api("GET", "/v1/executions").json() == []
    assert node_api("GET", "/v1/nodes").json() == []


def test_provision_and_unprovision_over_http(node_api: Api, ironic_endpoint: str) -> None:
    assert finished(node_api, node_api("POST", "/v1/nodes", json=fake_nodes(2)).json()[
        "id"])["state"] == "SUCCESS"
    started = node_api("POST", "/v1/nodes/introspect",
                       json={"nodes": ["node-0", "node-1"], "provide": True})
    assert finished(node_api, started.json()["id"])["state"] == "SUCCESS"
    created = node_api("POST", "/v1/plans", params={"name": "bm", "sample": "true"})
    assert created.status_code == 201, created.text

    text = "- name: Compute\n  count: 2\n  defaults: {profile: compute}\n"
    started = node_api("POST", "/v1/nodes/provision",
                       json={"plan": "bm", "baremetal_deployment": text})
    assert started.status_code == 202, started.text
    assert started.json()["workflow"] == "tripleo.nodes.provision"
    done = finished(node_api, started.json()["id"])
    assert done["state"] == "SUCCESS", done
    assert {n["hostname"] for n in done["output"]["nodes"]} == {"bm-novacompute-0",
                                                                "bm-novacompute-1"}
    states = {n["provision_state"] for n in IronicClient(ironic_endpoint).list_nodes()}
    assert states == {"active"}

    started = node_api("POST", "/v1/nodes/unprovision", json={"plan": "bm",
                                                               "all_nodes": True})
    assert started.status_code == 202, started.text
    assert finished(node_api, started.json()["id"])["state"] == "SUCCESS"
    states = {n["provision_state"] for n in IronicClient(ironic_endpoint).list_nodes()}
    assert states == {"available"}


@pytest.mark.parametrize(("path", "body"), [
    ("/v1/nodes/provision", {"plan": "../etc", "baremetal_deployment": "- name: C\n"}),
    ("/v1/nodes/provision", {"plan": "bm"}),
    ("/v1/nodes/unprovision", {"plan": "a/b", "all_nodes": True}),
    ("/v1/nodes/unprovision", {"plan": "bm"}),
    ("/v1/nodes/unprovision", {"plan": "bm", "all_nodes": True, "hostnames": ["x"]}),
])
def test_bad_provision_requests_start_nothing(node_api: Api, path: str,
                                              body: dict[str, object]) -> None:
    answer = node_api("POST", path, json=body)
    assert answer.status_code == 400, answer.text
    assert node_api("GET", "/v1/executions").json() == []
