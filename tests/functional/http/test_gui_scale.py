"""The GUI's "Delete servers" section (``overcloud node delete``) in a real browser
against a real ``api serve`` and a real native heat-all: after a deploy of the sample
plan, servers are chosen or named, a confirmation is asked (a dismissed one starts
nothing), and the same tripleo.scale.delete_nodes workflow runs, followed live, its
refusal shown in the server's words with nothing changed (issue 30).

The sample plan's stack has no ``AnsibleHostVarsMap`` output, so its deployment names
no server to choose and a delete can only be refused (a host not in the stack); a
successful delete needs the real templates (tests/functional/overcloud/
test_tht18_scaledown.py). The server listing is also checked over HTTP here.

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.functional.http.conftest import Api, finished
from tests.functional.http.test_gui_browser import (
    DEPLOY_MS,
    STEP_MS,
    Shots,
    answer_dialogs,
    chromium_page,
    use_native_heat,
)

pytestmark = pytest.mark.functional

WORKFLOW = "tripleo.scale.delete_nodes"


def _runs(api: Api) -> list[dict]:  # type: ignore[type-arg]
    return [e for e in api("GET", "/v1/executions").json() if e["workflow"] == WORKFLOW]


def test_the_gui_deletes_servers_through_the_scale_down_workflow(api: Api,
                                                                 tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    use_native_heat(api)
    assert api("POST", "/v1/plans", params={"name": "sc", "sample": "true"}).status_code == 201
    # Never deployed: no servers to list, and the Deploy tab offers no delete.
    never = api("GET", "/v1/plans/sc/deployment/servers")
    assert never.status_code == 404 and "deploy it first" in never.text, never.text
    assert api("GET", "/v1/plans/ghost/deployment/servers").status_code == 404
    started = api("POST", "/v1/workflows/deploy/executions",
                  json={"input": {"plan": "sc", "heat_type": "native", "work_dir": "sc"}})
    assert started.status_code == 202, started.text
    assert finished(api, started.json()["id"], timeout=DEPLOY_MS / 1000)["state"] == "SUCCESS"
    assert api("GET", "/v1/plans/sc/deployment/servers").json() == {}
    parameters = api("GET", "/v1/plans/sc/parameters").json()
    assert api("POST", "/v1/plans", params={"name": "fresh", "sample": "true"}).status_code == 201

    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        dialogs = answer_dialogs(page, [False, True])
        refused: list[str] = []
        page.on("response", lambda r: refused.append(f"{r.status} {r.url}")
                if r.status >= 400 else None)
        shot = Shots(page, tmp_path / "screenshots", "scale")
        page.goto(api.url + "/")
        page.get_by_label("API token").fill(api.token)
        page.get_by_role("button", name="Log in").click()
        # A plan never deployed offers no delete (and asks for no servers).
        page.get_by_role("link", name="fresh", exact=True).click()
        expect(page.locator("#deployment-status")).to_contain_text("NONE")
        expect(page.get_by_role("heading", name="Delete servers")).to_have_count(0)
        page.get_by_role("link", name="Plans").click()
        page.get_by_role("link", name="sc", exact=True).click()
        expect(page.get_by_role("heading", name="Delete servers")).to_be_visible()
        expect(page.locator("#no-servers")).to_contain_text("names no servers")

        # Nothing chosen: said at once. A dismissed confirmation starts nothing.
        page.get_by_role("button", name="Delete servers").click()
        expect(page.locator("#scale-error")).to_contain_text("Choose the servers")
        page.get_by_label("Other host names").fill("sc-novacompute-0, ghost-0")
        page.get_by_label("skip the scale-down playbook").check()
        page.get_by_role("button", name="Delete servers").click()
        expect(page.get_by_role("status")).to_contain_text("Nothing deleted")
        assert dialogs == ["- sc-novacompute-0\n- ghost-0\n"
                           "Are you sure you want to delete these overcloud nodes?"]
        assert _runs(api) == []

        # Confirmed: the workflow runs and refuses hosts the stack has not, in its words.
        page.get_by_role("button", name="Delete servers").click()
        end = page.locator("#scale-progress #execution-end")
        expect(end).to_contain_text("ERROR", timeout=STEP_MS)
        expect(end.get_by_role("alert")).to_contain_text(
            "Stack 'sc' has no server 'sc-novacompute-0', 'ghost-0'")
        expect(end).to_contain_text("nothing was changed")
        expect(page.locator("#scale-progress #events")).to_contain_text("select: ")
        shot("refused")
        runs = _runs(api)
        assert len(runs) == 1 and runs[0]["input"]["hosts"] == ["sc-novacompute-0", "ghost-0"]
        assert runs[0]["input"]["run_ansible"] is False
        assert api("GET", "/v1/plans/sc/parameters").json() == parameters
        assert refused == [], refused
        assert api("GET", "/v1/plans/sc/deployment").json()["deployment_status"] == (
            "DEPLOY_SUCCESS")
