"""The GUI's Nodes page in a real browser against a real ``api serve`` and a real Ironic
(fake-hardware nodes): every node operation the CLI offers starts the same tripleo.nodes
workflow, its progress shows live, and a refusal shows the API's words with the
command to run next (issue 30).

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures_ironic import remove_all_nodes
from tests.functional.http.conftest import Api, running_api
from tests.functional.http.test_gui_browser import STEP_MS, Shots, chromium_page
from tests.functional.ironic.conftest import fake_nodes
from tests.functional.ironic.test_provision import sample_tree
from tripleo_flow.ironic.client import IronicClient

pytestmark = pytest.mark.functional


@pytest.fixture
def node_api(ironic_endpoint: str, tmp_path: Path) -> Iterator[Api]:
    with running_api(tmp_path, {"ironic": {"endpoint": ironic_endpoint}}) as api:
        yield api
    remove_all_nodes(ironic_endpoint)


def _states(endpoint: str) -> dict[str, str]:
    return {n["name"]: n["provision_state"]
            for n in IronicClient(endpoint).list_nodes(("name", "provision_state"))}


def test_the_gui_runs_every_node_operation(node_api: Api, ironic_endpoint: str,
                                           tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    instackenv = tmp_path / "instackenv.json"
    nodes = fake_nodes(2)
    nodes["nodes"][0]["capabilities"] = "profile:control,boot_option:local"
    nodes["nodes"][0]["name"] = "ctl-0"
    instackenv.write_text(json.dumps(nodes))
    baremetal = tmp_path / "baremetal.yaml"
    baremetal.write_text("- name: Controller\n  count: 1\n  defaults: {profile: control}\n")
    node_api.client.plans.create("overcloud", sample_tree(tmp_path / "templates"))

    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        console_errors: list[str] = []
        page.on("console", lambda m: console_errors.append(m.text)
                if m.type == "error" else None)
        page.on("dialog", lambda dialog: dialog.accept())  # the confirmations
        shot = Shots(page, tmp_path / "screenshots", "nodes")
        page.goto(node_api.url + "/")
        page.get_by_label("API token").fill(node_api.token)
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("link", name="Nodes").click()
        expect(page.locator("#no-nodes")).to_contain_text("No nodes")

        # Nothing to introspect: the refusal says what to run, as the CLI's does.
        page.get_by_label("every manageable node").check()
        page.get_by_role("button", name="Introspect").click()
        expect(page.locator("#node-end")).to_contain_text("ERROR", timeout=STEP_MS)
        expect(page.locator("#node-end")).to_contain_text("No node is manageable")
        expect(page.locator("#node-end")).to_contain_text("tripleo-flow node import FILE")
        shot("nothing-to-introspect")

        # Register from instackenv.json: left manageable, as TripleO's import leaves them.
        page.locator("#instackenv").set_input_files(str(instackenv))
        page.get_by_role("button", name="Register nodes").click()
        expect(page.locator("#node-end")).to_contain_text("SUCCESS", timeout=STEP_MS)
        expect(page.locator('tr[data-node="node-1"]')).to_contain_text("manageable")
        assert _states(ironic_endpoint) == {"ctl-0": "manageable", "node-1": "manageable"}
        shot("registered")

        # Introspect both, then provide: the node states go by as they change.
        page.get_by_label("Select ctl-0").check()
        page.get_by_label("Select node-1").check()
        page.get_by_label("introspect, then provide").check()
        page.get_by_role("button", name="Introspect").click()
        expect(page.locator("#node-end")).to_contain_text("SUCCESS", timeout=STEP_MS)
        # each task's end shows (the nodes' states between show when the event stream
        # looks while they last: with fake hardware they may all be missed)
        for task in ("manage_nodes", "inspect_nodes", "provide_nodes"):
            expect(page.locator("#node-events")).to_contain_text(f"{task}: SUCCESS")
        expect(page.locator('tr[data-node="ctl-0"]')).to_contain_text("available")
        assert _states(ironic_endpoint) == {"ctl-0": "available", "node-1": "available"}
        shot("introspected")

        # Provision the plan's Controller from its baremetal deployment file, then release it.
        page.locator("#provision-file").set_input_files(str(baremetal))
        page.get_by_role("button", name="Provision", exact=True).click()
        expect(page.locator("#node-end")).to_contain_text("SUCCESS", timeout=STEP_MS)
        expect(page.locator('tr[data-node="ctl-0"]')).to_contain_text("active")
        assert _states(ironic_endpoint)["ctl-0"] == "active"
        shot("provisioned")
        page.get_by_label("Release only").fill("overcloud-controller-0")
        page.get_by_role("button", name="Unprovision").click()
        expect(page.locator("#node-end")).to_contain_text("SUCCESS", timeout=STEP_MS)
        expect(page.locator('tr[data-node="ctl-0"]')).to_contain_text("available")

        # Delete one node (after a confirmation).
        page.get_by_label("Select node-1").check()
        page.get_by_role("button", name="Manage").click()
        expect(page.locator("#node-end")).to_contain_text("SUCCESS", timeout=STEP_MS)
        expect(page.locator('tr[data-node="node-1"]')).to_contain_text("manageable")
        page.get_by_label("Select node-1").check()
        page.get_by_role("button", name="Delete").click()
        expect(page.locator("#node-end")).to_contain_text("SUCCESS", timeout=STEP_MS)
        expect(page.locator('tr[data-node="node-1"]')).to_have_count(0)
        assert _states(ironic_endpoint) == {"ctl-0": "available"}
        shot("deleted")
        assert console_errors == []
