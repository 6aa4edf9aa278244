"""The "Inspect the stack" panel of the Deploy tab in a real browser against a real
``api serve`` and a real native heat-all (issue 30): after a deploy of the sample plan,
Heat is started on the deployment's database dump through the same tripleo.heat.launch
workflow as ``launch heat --restore-db`` (its API answers, its endpoint shown),
and it is stopped through tripleo.heat.kill (``launch heat --kill``); its status is
read as ``heat status`` reads it, over ``GET /v1/plans/{name}/deployment/heat``.

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.functional.http import test_gui_browser as gui
from tests.functional.http.conftest import Api, finished

pytestmark = pytest.mark.functional


def test_the_gui_starts_heat_on_the_deployments_dump_and_stops_it(api: Api,
                                                                 tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    gui.use_native_heat(api)
    assert api("POST", "/v1/plans", params={"name": "ih", "sample": "true"}).status_code == 201
    assert api("GET", "/v1/plans/ghost/deployment/heat").status_code == 404
    started = api("POST", "/v1/workflows/deploy/executions",
                  json={"input": {"plan": "ih", "heat_type": "native", "work_dir": "ih"}})
    assert started.status_code == 202, started.text
    assert finished(api, started.json()["id"], timeout=gui.DEPLOY_MS / 1000)["state"] == "SUCCESS"
    stopped = api("GET", "/v1/plans/ih/deployment/heat").json()
    assert stopped["running"] is False and stopped["dump"], stopped

    shots = tmp_path / "screenshots"
    with gui.gui_at(api, "plans/ih/overview", shots, "stackheat") as (opened, shot, errors):
        page: Page = opened  # type: ignore[assignment]
        status = page.locator("#heat-status")
        # (the Deploy tab reads the deployment first: seconds on a loaded machine)
        expect(status).to_contain_text("No Heat runs for this deployment.",
                                       timeout=gui.STEP_MS)
        shot("stopped")

        page.get_by_role("button", name="Start Heat on the dump").click()
        expect(page.locator("#heat-endpoint")).to_be_visible(timeout=gui.DEPLOY_MS)
        expect(status).to_contain_text("Heat (native) runs and answers.")
        running = api("GET", "/v1/plans/ih/deployment/heat").json()
        assert running["running"] and running["api_answers"], running
        expect(page.locator("#heat-endpoint")).to_have_text(running["endpoint"])
        expect(page.locator("#heat-hint")).to_have_text(
            f"OS_CLIENT_CONFIG_FILE={running['heat_dir']}/clouds.yaml openstack --os-cloud heat "
            "stack list")
        [launch] = api("GET", "/v1/executions?workflow=tripleo.heat.launch").json()
        assert launch["input"]["restore_db"] is True and launch["state"] == "SUCCESS"
        shot("running")

        page.get_by_role("button", name="Stop Heat").click()
        expect(status).to_contain_text("No Heat runs for this deployment.",
                                       timeout=gui.DEPLOY_MS)
        assert api("GET", "/v1/plans/ih/deployment/heat").json()["running"] is False
        [kill] = api("GET", "/v1/executions?workflow=tripleo.heat.kill").json()
        assert kill["state"] == "SUCCESS"
        expect(status).to_have_text("No Heat runs for this deployment.")
        shot("stopped-again")
        assert errors == []
