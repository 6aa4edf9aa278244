"""The node routes of the HTTP API run the same tripleo.nodes workflows, on a real Ironic."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.http.conftest import Api, finished, running_api
from tripleo_flow.ironic.client import IronicClient

from .conftest import fake_nodes


@pytest.fixture
def node_api(ironic_endpoint: str, tmp_path: Path) -> Iterator[Api]:
    with running_api(tmp_path, {"ironic": {"endpoint": ironic_endpoint}}) as api:
        yield api
    ironic = IronicClient(ironic_endpoint)
    for node in ironic.list_nodes(("uuid",)):
        ironic.delete_node(node["uuid"])


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


def test_a_bad_node_list_is_refused_before_an_execution_starts(node_api: Api) -> None:
    document = fake_nodes(2)
    document["nodes"][1]["pm_type"] = "ilo"
    answer = node_api("POST", "/v1/nodes", json=document)
    assert answer.status_code == 400
    assert "node 2 ('node-1')" in answer.json()["error"]["message"]
    assert node_api("GET", "/v1/executions").json() == []
    assert node_api("GET", "/v1/nodes").json() == []
