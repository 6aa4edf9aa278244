"""The GUI's Validations page in a real browser against a real ``api serve`` with the
validations virtualenv (real Ansible runs): the validations listed by group, a run of
chosen ones and of a group through the same tripleo.validations.run workflow the CLI
runs, each validation's end shown live, a stop, a refusal in the API's words, and the
results (status per validation and host, a failed one's log) (issue 30).

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.http.conftest import Api, running_api
from tests.functional.http.test_gui_browser import STEP_MS, Shots, chromium_page
from tests.functional.validations.conftest import (  # noqa: F401 (a fixture)
    TEST_VALIDATIONS,
    validations_venv,
)
from tripleo_flow.client.plans import sample_plan_dir

pytestmark = pytest.mark.functional


@pytest.fixture
def vapi(tmp_path: Path, validations_venv: Path) -> Iterator[Api]:  # noqa: F811
    with running_api(tmp_path, {"validations": {
            "venv": str(validations_venv),
            "validations_dirs": [str(TEST_VALIDATIONS)]}}) as api:
        yield api


def test_the_gui_runs_validations_and_shows_their_results(vapi: Api, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    vapi.client.plans.create("oc", sample_plan_dir())
    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        console_errors: list[str] = []
        page.on("console", lambda m: console_errors.append(m.text)
                if m.type == "error" and not m.text.startswith("Failed to load resource")
                else None)
        shot = Shots(page, tmp_path / "screenshots", "validations")
        page.goto(vapi.url + "/")
        page.get_by_label("API token").fill(vapi.token)
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("link", name="Validations").click()
        expect(page.locator('tr[data-validation="check-cpu"]')).to_be_visible()
        expect(page.locator("#no-results")).to_contain_text("No results")

        # A group shows only its validations.
        page.get_by_label("Group", exact=True).select_option("tripleo-flow-tests")
        expect(page.locator('tr[data-validation="slow-sleep"]')).to_be_visible()
        expect(page.locator('tr[data-validation="check-cpu"]')).to_be_hidden()
        page.get_by_label("Group", exact=True).select_option("")
        shot("listed")

        # Extra vars that are not JSON: said at once, nothing started.
        before = len(vapi.client.executions.list())
        page.get_by_label("Select no-op").check()
        page.get_by_label("Extra vars (JSON)").fill("minimal_cpu_count=3")
        page.get_by_role("button", name="Run selected").click()
        expect(page.locator("#run-problem")).to_contain_text("Extra vars are not JSON")
        assert len(vapi.client.executions.list()) == before

        # A plan never deployed has no inventory: the workflow's refusal, as the CLI's.
        page.get_by_label("Extra vars (JSON)").fill("")
        page.get_by_label("Plan", exact=True).select_option("oc")
        page.get_by_role("button", name="Run selected").click()
        expect(page.locator("#validation-end")).to_contain_text("ERROR", timeout=STEP_MS)
        expect(page.locator("#validation-end")).to_contain_text("oc")
        expect(page.locator("#validation-end [role=alert]")).to_contain_text("inventory")
        shot("no-inventory")

        # On this machine, with the plan keeping the results: one passes, one fails.
        page.get_by_label("on this machine").check()
        page.get_by_label("Select check-cpu").check()
        page.get_by_label("Extra vars (JSON)").fill('{"minimal_cpu_count": 100000}')
        page.get_by_role("button", name="Run selected").click()
        expect(page.locator("#validation-end")).to_contain_text("SUCCESS", timeout=STEP_MS)
        expect(page.locator("#validation-end")).to_contain_text("1 PASSED")
        expect(page.locator("#validation-end")).to_contain_text("1 FAILED")
        events = page.locator("#validation-events")
        expect(events).to_contain_text("no-op: running")
        expect(events).to_contain_text("check-cpu: running")
        # the run's own table: status per validation and host
        run = page.locator("#run-table")
        expect(run.locator('tr[data-validation="no-op"]')).to_contain_text("PASSED")
        expect(run.locator('tr[data-validation="check-cpu"]')).to_contain_text(
            "localhost: FAILED")
        results = page.locator("#validation-results")
        expect(page.locator("#results-h")).to_contain_text("Results of plan oc")
        expect(results.locator('tr[data-validation="no-op"]')).to_contain_text("PASSED")
        failed = results.locator('tr[data-validation="check-cpu"]')
        expect(failed).to_contain_text("FAILED")
        expect(failed).to_contain_text("localhost: FAILED")
        expect(failed).to_contain_text("at least 100000")
        failed.get_by_role("button", name="Log of check-cpu").click()
        expect(page.locator("#result-log")).to_contain_text("PLAY RECAP")
        expect(page.locator("#result-detail")).to_contain_text("check-cpu: FAILED")
        shot("results")
        stored = vapi("GET", "/v1/validations/results", params={"plan": "oc"}).json()
        assert {r["validation"]: r["status"] for r in stored} == {
            "no-op": "PASSED", "check-cpu": "FAILED"}

        # A group, without a plan: its results are those of runs without one.
        page.get_by_label("Extra vars (JSON)").fill("")
        page.get_by_label("Plan", exact=True).select_option("")
        expect(page.locator("#no-results")).to_be_visible()
        page.get_by_label("Group", exact=True).select_option("no-op")
        page.get_by_role("button", name="Run the group").click()
        expect(page.locator("#validation-end")).to_contain_text("SUCCESS", timeout=STEP_MS)
        expect(page.locator("#results-h")).to_contain_text("without a plan")
        expect(page.locator('#validation-results tr[data-validation="no-op"]')).to_contain_text(
            "PASSED")

        # Stop: a long validation ends at once, the run says it was stopped.
        page.get_by_label("Group", exact=True).select_option("tripleo-flow-tests")
        page.get_by_label("Extra vars (JSON)").fill('{"sleep_seconds": 2718}')
        page.get_by_role("button", name="Run the group").click()
        expect(page.locator("#validation-events")).to_contain_text("slow-sleep: running",
                                                                   timeout=STEP_MS)
        page.wait_for_timeout(1000)  # let ansible-playbook start
        page.get_by_role("button", name="Stop").click()
        expect(page.locator("#validation-end")).to_contain_text("ERROR", timeout=STEP_MS)
        expect(page.locator("#validation-end [role=alert]")).to_contain_text("stopped")
        expect(page.locator('#validation-results tr[data-validation="slow-sleep"]')
               ).to_contain_text("STOPPED")
        shot("stopped")
        assert console_errors == []
