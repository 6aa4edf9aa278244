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

from tests.functional.http.conftest import Api
from tests.functional.http.test_gui_browser import STEP_MS, Shots, chromium_page

pytestmark = pytest.mark.functional


def _roles(api: Api) -> dict[str, Any]:
    return {r["name"]: r for r in api("GET", "/v1/plans/rn/roles",
                                      params={"detail": "true"}).json()}


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
        page.goto(api.url + "/")
        page.get_by_label("API token").fill(api.token)
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("link", name="rn", exact=True).click()
        page.get_by_role("link", name="Roles and networks").click()
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
