"""The GUI's Workflows page in a real browser (Debian's chromium) against the real
server (issue 30): the shipped workbooks read-only, a user workbook validated (bad
YAML refused in the server's words), refused when it would replace a shipped one,
created from a file, its workflow run from a form of its declared inputs (a missing
input refused in the server's words) and followed on its execution page, edited,
updated and deleted; the actions listed.

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.engine_helpers import WORKBOOKS
from tests.functional.http.conftest import Api
from tests.functional.http.test_gui_browser import (
    STEP_MS,
    Shots,
    answer_dialogs,
    chromium_page,
    console_errors,
    log_in,
)

pytestmark = pytest.mark.functional

GOOD = WORKBOOKS / "good" / "std_only.yaml"


def test_the_gui_validates_creates_runs_updates_and_deletes_a_user_workbook(
        api: Api, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        errors = console_errors(page)
        shot = Shots(page, tmp_path / "screenshots", "workflows")
        log_in(page, api)
        page.get_by_role("link", name="Workflows").click()
        shipped = page.locator('[data-workbook="tripleo.heat"]')
        expect(shipped).to_contain_text("shipped (read-only)", timeout=STEP_MS)
        expect(shipped.get_by_role("button")).to_have_count(0)  # no Edit, no Delete
        shipped.locator('[data-workflow="tripleo.heat.launch"] summary').click()
        expect(page.get_by_role("form", name="Run tripleo.heat.launch")).to_be_visible()
        shot("shipped")

        # Bad YAML: the server's refusal, word for word; nothing added.
        text = page.get_by_label("Workbook (YAML)")
        text.fill("name: mine\nworkflows: [\n")
        page.get_by_role("button", name="Validate").click()
        problem = page.locator("#workbook-problem")
        expect(problem).to_contain_text("Invalid workbook:")
        expect(problem).to_contain_text("workbook.yaml: not valid YAML at line 3")
        shot("bad-yaml")

        # A name that would replace a shipped workbook.
        text.fill(GOOD.read_text().replace("name: std_only", "name: tripleo.heat"))
        page.get_by_role("button", name="Create").click()
        expect(problem).to_contain_text(
            "Workbook 'tripleo.heat' ships with tripleo-flow; give yours another name.")
        assert [w["name"] for w in api("GET", "/v1/workbooks").json() if not w["shipped"]] == []

        # From a file: valid, then created; its workflows listed.
        page.get_by_label("From a file").set_input_files(str(GOOD))
        expect(text).to_have_value(GOOD.read_text())
        page.get_by_role("button", name="Validate").click()
        expect(page.locator("#workbook-done")).to_have_text("std_only.yaml: valid")
        page.get_by_role("button", name="Create").click()
        expect(page.locator("#workbook-done")).to_contain_text(
            "Workbook std_only created: broken, greet", timeout=STEP_MS)
        mine = page.locator('[data-workbook="std_only"]')
        expect(mine).to_contain_text("user workbook (std_only.yaml)")
        shot("created")

        # Run std_only.greet: first without its required input (refused), then with it.
        mine.locator('[data-workflow="std_only.greet"] summary').click()
        form = page.get_by_role("form", name="Run std_only.greet")
        expect(form).to_contain_text("(required)")
        expect(form).to_contain_text("default 2")
        form.get_by_role("button", name="Run std_only.greet").click()
        expect(page.locator("#run-std_only-greet-problem")).to_contain_text(
            "Workflow 'std_only.greet' needs input 'who'.")
        shot("missing-input")
        form.get_by_label("who").fill("gui")
        form.get_by_label("times").fill("3")
        form.get_by_role("button", name="Run std_only.greet").click()
        expect(page).to_have_url(re.compile(r"#/executions/"))
        expect(page.locator("main")).to_contain_text("Workflow std_only.greet: SUCCESS",
                                                     timeout=STEP_MS)
        expect(page.locator("main")).to_contain_text('"greeting": "hello gui"')
        [run] = api("GET", "/v1/executions?workflow=std_only.greet").json()
        assert run["input"] == {"who": "gui", "times": 3} and run["state"] == "SUCCESS"
        shot("ran")

        # Edit: the server's text in the editor; Update replaces it.
        page.get_by_role("link", name="Workflows").click()
        page.get_by_role("button", name="Edit workbook std_only").click()
        expect(text).to_have_value(GOOD.read_text())
        text.fill(GOOD.read_text().replace("Uses only", "Updated, uses only"))
        page.get_by_role("button", name="Update").click()
        expect(page.locator("#workbook-done")).to_contain_text("Workbook std_only updated",
                                                               timeout=STEP_MS)
        expect(page.locator('[data-workbook="std_only"]')).to_contain_text("Updated, uses only")

        # Actions, read when opened.
        page.locator("#actions summary").click()
        expect(page.locator('tr[data-action="std.echo"]')).to_contain_text("output")
        shot("updated-and-actions")

        # Delete: dismissed, then confirmed.
        said = answer_dialogs(page, [False, True])
        delete = page.get_by_role("button", name="Delete workbook std_only")
        delete.click()
        expect(page.locator('[data-workbook="std_only"]')).to_be_visible()
        delete.click()
        expect(page.locator('[data-workbook="std_only"]')).to_have_count(0, timeout=STEP_MS)
        assert said == ["Delete workbook std_only and its workflows?"] * 2
        assert api("GET", "/v1/workbooks/std_only").status_code == 404
        shot("deleted")
        assert errors == []


def test_the_gui_starts_a_workflow_with_an_env_and_refuses_a_bad_one(
        api: Api, tmp_path: Path) -> None:
    """The Run form's env: JSON that is not an object refused in the page (nothing
    sent), one the server refuses shown in its words (400), then a good one read by
    the task's env() and shown on the execution page with its secret masked."""
    from playwright.sync_api import Page, expect

    made = api("POST", "/v1/workbooks", json={"definition": GOOD.read_text(),
                                              "filename": "std_only.yaml"})
    assert made.status_code == 201, made.text
    sent: list[str] = []
    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        errors = console_errors(page)
        page.on("request", lambda r: sent.append(r.url) if r.method == "POST" else None)
        shot = Shots(page, tmp_path / "screenshots", "workflow-env")
        log_in(page, api)
        page.get_by_role("link", name="Workflows").click()
        page.locator('[data-workflow="std_only.greet"] summary').click()
        form = page.get_by_role("form", name="Run std_only.greet")
        form.get_by_label("who").fill("gui")
        env = form.get_by_label("Environment (env)")
        problem = page.locator("#run-std_only-greet-problem")
        run = form.get_by_role("button", name="Run std_only.greet")

        # Not JSON, then JSON that is not an object: refused in the page, nothing sent.
        env.fill("{salutation: bonjour}")
        run.click()
        expect(problem).to_contain_text("The environment (env) is not valid JSON:")
        expect(env).to_have_attribute("aria-invalid", "true")
        shot("bad-json")
        env.fill('["bonjour"]')
        run.click()
        expect(problem).to_contain_text(
            'The environment (env) must be a JSON object ({"name": value, ...}), not a list.')
        assert [u for u in sent if "/executions" in u] == []

        # An object the server refuses (nested deeper than [limits] yaml_max_depth): its 400.
        env.fill('{"a": ' * 120 + "1" + "}" * 120)
        run.click()
        expect(problem).to_contain_text("The request body nests deeper than 100 levels",
                                      timeout=STEP_MS)
        shot("server-refused")
        assert len([u for u in sent if "/executions" in u]) == 1
        assert api("GET", "/v1/executions?workflow=std_only.greet").json() == []

        # A good env: the task reads it; its secret is masked on the execution page.
        env.fill('{"salutation": "bonjour", "password": "s3cret-env"}')
        run.click()
        expect(page).to_have_url(re.compile(r"#/executions/"))
        expect(page.locator("main")).to_contain_text("Workflow std_only.greet: SUCCESS",
                                                     timeout=STEP_MS)
        expect(page.locator("main")).to_contain_text('"greeting": "bonjour gui"')
        expect(page.locator("#execution-env")).to_contain_text('"salutation": "bonjour"')
        assert "s3cret-env" not in page.content()
        [done] = api("GET", "/v1/executions?workflow=std_only.greet").json()
        assert done["env"]["salutation"] == "bonjour"
        assert done["env"]["password"] != "s3cret-env"
        shot("ran-with-env")
        assert errors == []
