"""The GUI's "Roles and networks" tab in a real browser against a real ``api serve``:
choose the roles a plan deploys (drop one, add one with another's services), each
role's networks, and the networks the plan uses (enabled, subnet, VLAN), saved through
the same update_roles / update_networks workflows as ``roles set`` / ``networks set``;
a refusal shows the server's words and changes nothing (issue 30).

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.functional.http.conftest import Api
from tests.functional.http.test_gui_browser import STEP_MS, Shots, chromium_page, log_in
from tripleo_flow.client.plans import sample_plan_dir

pytestmark = pytest.mark.functional


def _roles(api: Api) -> dict[str, Any]:
    return {r["name"]: r for r in api("GET", "/v1/plans/rn/roles",
                                      params={"detail": "true"}).json()}


def _roles_tab(page: object, api: Api) -> None:
    """Log in, then open plan rn's Roles and networks tab."""
    log_in(page, api)
    page.get_by_role("link", name="rn", exact=True).click()  # type: ignore[attr-defined]
    page.get_by_role("link", name="Roles and networks").click()  # type: ignore[attr-defined]


def _networks(api: Api) -> dict[str, Any]:
    return {n["name"]: n for n in api("GET", "/v1/plans/rn/networks",
                                      params={"detail": "true"}).json()}


def test_the_gui_edits_a_plans_roles_and_networks(api: Api, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    assert api("POST", "/v1/plans", params={"name": "rn", "sample": "true"}).status_code == 201
    roles_before, networks_before = _roles(api), _networks(api)
    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        console_errors: list[str] = []
        page.on("console", lambda m: console_errors.append(m.text)
                if m.type == "error" and not m.text.startswith("Failed to load resource")
                else None)
        shot = Shots(page, tmp_path / "screenshots", "roles")
        _roles_tab(page, api)
        expect(page.get_by_label("Compute on Storage")).to_be_checked()
        # a network the plan does not use is not offered to a role
        expect(page.locator('#roles [data-network="Management"]')).to_have_count(0)
        expect(page.get_by_label("Use network Management")).not_to_be_checked()
        shot("shown")

        # Refusals, in the server's words; nothing changes.
        page.get_by_label("Deploy role Controller").uncheck()
        page.get_by_label("Deploy role Compute").uncheck()
        page.get_by_role("button", name="Save roles").click()
        expect(page.locator("#roles-error")).to_contain_text("There are no roles")
        page.get_by_label("Deploy role Controller").check()
        page.get_by_label("Deploy role Compute").check()
        page.get_by_label("Add a role").fill("compute")
        page.get_by_role("button", name="Save roles").click()
        expect(page.locator("#roles-error")).to_contain_text("'Compute' and 'compute'")
        shot("refused")
        assert _roles(api) == roles_before

        # Add a role with Compute's services; Compute leaves the Storage network.
        page.get_by_label("Add a role").fill("ComputeHCI")
        page.get_by_label("with the services of").select_option("Compute")
        page.get_by_label("Compute on Storage").uncheck()
        page.get_by_role("button", name="Save roles").click()
        expect(page.get_by_role("status")).to_contain_text("Roles saved", timeout=STEP_MS)
        expect(page.locator('tr[data-role="ComputeHCI"]')).to_be_visible()
        roles = _roles(api)
        assert list(roles) == ["Controller", "Compute", "ComputeHCI"]
        assert roles["Compute"]["networks"] == ["InternalApi"]
        assert roles["ComputeHCI"]["ServicesDefault"] == roles["Compute"]["ServicesDefault"]
        assert roles["ComputeHCI"]["CountDefault"] == 0
        assert "primary" not in (roles["ComputeHCI"].get("tags") or [])
        expect(page.get_by_label("Compute on Storage")).not_to_be_checked()
        shot("added")

        # Drop it again.
        page.get_by_label("Deploy role ComputeHCI").uncheck()
        page.get_by_role("button", name="Save roles").click()
        expect(page.locator('tr[data-role="ComputeHCI"]')).to_have_count(0, timeout=STEP_MS)
        assert list(_roles(api)) == ["Controller", "Compute"]

        # Networks: a bad subnet is refused; then Storage is turned off, a VLAN changed.
        page.get_by_label("Storage subnet").fill("172.16.1.0/99")
        page.get_by_role("button", name="Save networks").click()
        expect(page.locator("#networks-error")).to_contain_text("172.16.1.0/99")
        assert _networks(api) == networks_before
        page.get_by_label("Storage subnet").fill("172.16.1.0/24")
        page.get_by_label("Use network Storage").uncheck()
        page.get_by_label("InternalApi VLAN").fill("21")
        page.get_by_role("button", name="Save networks").click()
        expect(page.get_by_role("status")).to_contain_text("Networks saved", timeout=STEP_MS)
        expect(page.locator('#roles [data-network="Storage"]')).to_have_count(0)
        networks = _networks(api)
        assert networks["Storage"]["enabled"] is False
        assert networks["InternalApi"]["vlan"] == 21
        assert networks["InternalApi"]["ip_subnet"] == "172.16.2.0/24"
        assert networks["Management"] == networks_before["Management"]
        shot("networks")
        # A save of the roles keeps their networks not offered (Storage, now off).
        page.get_by_role("button", name="Save roles").click()
        expect(page.get_by_role("status")).to_contain_text("Roles saved", timeout=STEP_MS)
        assert _roles(api)["Controller"]["networks"] == ["InternalApi", "Storage"]
        assert console_errors == []


def _sample_list(name: str) -> list[Any]:
    return list(yaml.safe_load((sample_plan_dir() / name).read_text()))


@pytest.mark.parametrize(("text", "said"), [
    ("a: b\n", "must hold a YAML list of roles, not a mapping"),
    ("- name: [unclosed\n", "not valid YAML"),
    ("[" * 150 + "]" * 150, "not valid YAML"),  # past [limits] yaml_max_depth (100)
    ("- &a [*a, *a]\n", "not valid YAML"),  # a recursive alias
    ("- name: Controller\0\n", "binary"),
])
def test_a_roles_file_the_api_refuses_changes_nothing(api: Api, text: str, said: str) -> None:
    assert api("POST", "/v1/plans", params={"name": "rn", "sample": "true"}).status_code == 201
    before = _roles(api)
    answer = api("PUT", "/v1/plans/rn/roles", json={"yaml": text})
    assert answer.status_code == 400, answer.text
    assert said in answer.json()["error"]["message"], answer.text
    assert _roles(api) == before


def test_the_body_gives_either_the_list_or_a_files_text(api: Api) -> None:
    assert api("POST", "/v1/plans", params={"name": "rn", "sample": "true"}).status_code == 201
    for body in ({}, {"networks": [], "yaml": "[]"}, {"yaml": 3}):
        answer = api("PUT", "/v1/plans/rn/networks", json=body)
        assert answer.status_code == 400, answer.text
    assert "either 'networks' (a list) or 'yaml'" in api(
        "PUT", "/v1/plans/rn/networks", json={}).json()["error"]["message"]


def test_the_gui_replaces_roles_and_networks_from_yaml_files(api: Api, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    assert api("POST", "/v1/plans", params={"name": "rn", "sample": "true"}).status_code == 201
    roles_before = _roles(api)
    files = tmp_path / "files"
    files.mkdir()
    (files / "not-a-list.yaml").write_text("Controller: {}\n")
    controller_only = [r for r in _sample_list("roles_data.yaml") if r["name"] == "Controller"]
    (files / "my-roles.yaml").write_text(yaml.safe_dump(controller_only))
    networks = _sample_list("network_data.yaml")
    for net in networks:
        if net["name"] == "Storage":
            net["vlan"] = 33
    (files / "my-networks.yaml").write_text(yaml.safe_dump(networks))
    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        shot = Shots(page, tmp_path / "screenshots", "roles-file")
        _roles_tab(page, api)

        # No file chosen, then a file that is not a list: said, nothing changed.
        page.get_by_role("button", name="Replace the roles from the file").click()
        expect(page.locator("#roles-file-error")).to_contain_text("Choose a roles_data.yaml")
        page.get_by_label("Or from a roles_data.yaml").set_input_files(
            str(files / "not-a-list.yaml"))
        page.get_by_role("button", name="Replace the roles from the file").click()
        expect(page.locator("#roles-file-error")).to_contain_text(
            "must hold a YAML list of roles")
        shot("refused")
        assert _roles(api) == roles_before

        # The roles of a file, through the same workflow as roles set FILE.
        page.get_by_label("Or from a roles_data.yaml").set_input_files(
            str(files / "my-roles.yaml"))
        page.get_by_role("button", name="Replace the roles from the file").click()
        expect(page.get_by_role("status")).to_contain_text(
            "Roles saved from my-roles.yaml: Controller", timeout=STEP_MS)
        expect(page.locator('tr[data-role="Compute"]')).to_have_count(0)
        assert list(_roles(api)) == ["Controller"]
        assert _roles(api)["Controller"] == roles_before["Controller"]

        page.get_by_label("Or from a network_data.yaml").set_input_files(
            str(files / "my-networks.yaml"))
        page.get_by_role("button", name="Replace the networks from the file").click()
        expect(page.get_by_role("status")).to_contain_text(
            "Networks saved from my-networks.yaml", timeout=STEP_MS)
        expect(page.get_by_label("Storage VLAN")).to_have_value("33")
        assert _networks(api)["Storage"]["vlan"] == 33
        shot("replaced")
    runs = [e["workflow"] for e in api("GET", "/v1/executions").json()]
    assert runs.count("tripleo.plan.update_roles") == 1  # a refused file starts nothing
    assert runs.count("tripleo.plan.update_networks") == 1
