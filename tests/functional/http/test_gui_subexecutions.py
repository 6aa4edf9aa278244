"""A task that runs a sub-workflow as an execution of its own links, on its
execution's page, to that child execution (issue 30), in the real browser (Debian's
chromium) against the real server: while the task runs (the child found by its
``parent_id`` and ``parent_task``), and once it has ended (the task record's
``executions``: one per item of a with-items task); each link opens the child's page
with its tasks, and a link back to the parent.

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.functional.http.conftest import Api
from tests.functional.http.test_gui_browser import (
    STEP_MS,
    Shots,
    chromium_page,
    console_errors,
    log_in,
)

pytestmark = pytest.mark.functional

WORKBOOK = """\
version: '2.0'
name: nested
workflows:
  parent:
    tasks:
      hold:
        workflow: wait_here
        on-success: many
      many:
        with-items: who in <% ['ann', 'bob'] %>
        workflow: greet_one
        input:
          who: <% $.who %>
  wait_here:
    tasks:
      approve:
        action: std.async_noop
        timeout: 600
  greet_one:
    input: [who]
    output:
      said: <% $.said %>
    tasks:
      say:
        action: std.echo output="hi <% $.who %>"
        publish:
          said: <% task().result %>
"""


def _children(api: Api, parent: str, task: str) -> list[str]:
    """The child executions ``task`` of execution ``parent`` started, as the API lists them."""
    return [e["id"] for e in api("GET", "/v1/executions").json()
            if e["parent_id"] == parent and e["parent_task"] == task]


def _waiting_child(api: Api, parent: str) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for child in _children(api, parent, "hold"):
            tasks = api("GET", f"/v1/executions/{child}/tasks").json()
            if any(t["name"] == "approve" and t["waiting"] for t in tasks):
                return child
        time.sleep(0.2)
    raise AssertionError(f"no child of {parent} waits")


def test_a_workflow_task_links_to_its_child_executions(api: Api, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    made = api("POST", "/v1/workbooks", json={"definition": WORKBOOK,
                                              "filename": "nested.yaml"})
    assert made.status_code == 201, made.text
    started = api("POST", "/v1/workflows/nested.parent/executions", json={})
    assert started.status_code == 202, started.text
    parent = started.json()["id"]
    waiting = _waiting_child(api, parent)

    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        errors = console_errors(page)
        shot = Shots(page, tmp_path / "screenshots", "subexecutions")
        log_in(page, api)
        expect(page.locator("h1")).to_have_text("Plans", timeout=STEP_MS)
        page.goto(f"{api.url}/#/executions/{parent}")

        # While hold runs: its child, found by parent_id and parent_task.
        hold = page.locator('tr[data-task="hold"]')
        expect(hold).to_contain_text("RUNNING", timeout=STEP_MS)
        link = hold.get_by_role("link", name="Execution of task hold")
        expect(link).to_have_attribute("href", f"#/executions/{waiting}", timeout=STEP_MS)
        shot("parent-running")

        # The link opens the child's page, with its task.
        link.click()
        expect(page).to_have_url(re.compile(f"#/executions/{waiting}$"))
        expect(page.locator("main")).to_contain_text("Workflow nested.wait_here: RUNNING",
                                                     timeout=STEP_MS)
        expect(page.locator('tr[data-task="approve"]')).to_contain_text("RUNNING")
        expect(page.locator("#parent-execution")).to_have_text(
            f"Sub-workflow of task hold of execution {parent}")
        shot("child-waiting")
        done = api("POST", f"/v1/executions/{waiting}/tasks/approve/complete",
                   json={"state": "SUCCESS", "output": "ok"})
        assert done.status_code == 200, done.text
        expect(page.locator("main")).to_contain_text("Workflow nested.wait_here: SUCCESS",
                                                     timeout=STEP_MS)

        # Back on the parent once it ended: a link per child, from the task records.
        page.go_back()
        expect(page.locator("main")).to_contain_text("Workflow nested.parent: SUCCESS",
                                                     timeout=STEP_MS)
        tasks = {t["name"]: t for t in api("GET", f"/v1/executions/{parent}/tasks").json()}
        assert tasks["hold"]["executions"] == [waiting]
        items = tasks["many"]["executions"]
        assert len(items) == 2 and sorted(items) == sorted(_children(api, parent, "many"))
        expect(hold.get_by_role("link", name="Execution of task hold")).to_have_attribute(
            "href", f"#/executions/{waiting}")
        many = page.locator('tr[data-task="many"]')
        expect(many.get_by_role("link")).to_have_count(2)
        for n, child in enumerate(items, 1):
            expect(many.get_by_role("link", name=f"Execution {n} of task many")
                   ).to_have_attribute("href", f"#/executions/{child}")
        shot("parent-ended")

        # The second item's child: greet_one for bob, its task shown.
        many.get_by_role("link", name="Execution 2 of task many").click()
        expect(page).to_have_url(re.compile(f"#/executions/{items[1]}$"))
        expect(page.locator("main")).to_contain_text("Workflow nested.greet_one: SUCCESS",
                                                     timeout=STEP_MS)
        expect(page.locator('tr[data-task="say"]')).to_contain_text('"said": "hi bob"')
        assert api("GET", f"/v1/executions/{items[1]}").json()["input"] == {"who": "bob"}
        shot("child-item")
        # ... and its link back to the parent.
        page.locator("#parent-execution").get_by_role("link", name=parent).click()
        expect(page.locator("main")).to_contain_text("Workflow nested.parent: SUCCESS",
                                                     timeout=STEP_MS)
        expect(page.locator('tr[data-task="many"]').get_by_role("link")).to_have_count(2)
        assert errors == []
