"""The last CLI operations reached from the GUI (issue 30), in the real browser (Debian's
chromium) against a real ``api serve``: completing the asynchronous action a task
waits for (``execution complete``: a form per waiting action on the execution's page,
with-items items each their own, the server's refusal shown beside it), and rendering
a plan's templates again (``plan render``: the Roles and networks tab, the same
workflow, followed live).

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import io
import shutil
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.functional.http.conftest import Api
from tests.functional.http.test_gui_browser import (
    STEP_MS,
    Shots,
    chromium_page,
    console_errors,
    log_in,
)
from tripleo_flow.client.plans import sample_plan_dir

pytestmark = pytest.mark.functional

WORKBOOK = """\
version: '2.0'
name: approvals
workflows:
  approve:
    output:
      answer: <% $.answer %>
    tasks:
      ask:
        action: std.async_noop
        timeout: 600
        publish:
          answer: <% task().result %>
  approve_each:
    tasks:
      ask:
        with-items: who in <% ['ann', 'bob'] %>
        action: std.async_noop
        timeout: 600
"""


def _waiting(api: Api, execution: str, count: int) -> list[dict[str, Any]]:
    """The actions task ``ask`` of ``execution`` waits for, once there are ``count``."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        tasks = api("GET", f"/v1/executions/{execution}/tasks").json()
        waiting = [w for t in tasks if t["name"] == "ask" for w in t["waiting"]]
        if len(waiting) == count:
            return waiting
        time.sleep(0.2)
    raise AssertionError(f"task ask of {execution} does not wait for {count} action(s)")


def _started(api: Api, workflow: str) -> str:
    started = api("POST", f"/v1/workflows/approvals.{workflow}/executions", json={})
    assert started.status_code == 202, started.text
    return str(started.json()["id"])


def test_the_gui_completes_the_actions_a_task_waits_for(api: Api, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    made = api("POST", "/v1/workbooks", json={"definition": WORKBOOK,
                                              "filename": "approvals.yaml"})
    assert made.status_code == 201, made.text
    one = _started(api, "approve")
    _waiting(api, one, 1)
    each = _started(api, "approve_each")
    items = sorted(w["item"] for w in _waiting(api, each, 2))
    assert items == [0, 1]

    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        errors = console_errors(page)
        shot = Shots(page, tmp_path / "screenshots", "complete")
        log_in(page, api)
        expect(page.locator("h1")).to_have_text("Plans", timeout=STEP_MS)

        # One waiting action: its output typed as JSON becomes the task's result.
        page.goto(f"{api.url}/#/executions/{one}")
        form = page.get_by_role("form", name="Complete task ask")
        expect(form).to_be_visible(timeout=STEP_MS)
        form.get_by_label("Output to complete task ask with").fill('{"approved": true}')
        shot("one-filled")
        form.get_by_role("button", name="Complete").click()
        expect(page.locator("main")).to_contain_text("Workflow approvals.approve: SUCCESS",
                                                     timeout=STEP_MS)
        expect(page.get_by_role("form", name="Complete task ask")).to_have_count(0)
        shot("one-done")
        assert api("GET", f"/v1/executions/{one}").json()["output"] == {
            "answer": {"approved": True}}

        # Two items wait: a form each.  Item 0 is completed behind the page's back while
        # its event stream is held (a slow network), so the page still offers it: its
        # completion is refused in the server's words, beside the form.
        events = f"**/v1/executions/{each}/events"
        page.route(events, lambda route: None)  # held: never answered
        page.goto(f"{api.url}/#/executions/{each}")
        first = page.get_by_role("form", name="Complete item 0 of task ask")
        second = page.get_by_role("form", name="Complete item 1 of task ask")
        expect(first).to_be_visible(timeout=STEP_MS)
        expect(second).to_be_visible()
        shot("items-waiting")
        behind = api("POST", f"/v1/executions/{each}/tasks/ask/complete",
                     json={"state": "SUCCESS", "output": "ann says yes", "item": 0})
        assert behind.status_code == 200, behind.text
        first.get_by_role("button", name="Complete item 0").click()
        refusal = first.get_by_role("alert")
        expect(refusal).not_to_be_empty(timeout=STEP_MS)
        refused = api("POST", f"/v1/executions/{each}/tasks/ask/complete",
                      json={"state": "SUCCESS", "item": 0})
        assert refused.status_code == 409, refused.text
        assert refusal.text_content() == refused.json()["error"]["message"]
        shot("item-refused")

        # With its events flowing again, item 0 no longer offers a form.
        page.unroute(events)
        page.reload()
        expect(second).to_be_visible(timeout=STEP_MS)
        expect(first).to_have_count(0)

        # Item 1 fails: text that is not JSON is its error, as the CLI's --output reads it.
        second.get_by_label("State to complete item 1 of task ask with").select_option("ERROR")
        second.get_by_label("Output to complete item 1 of task ask with").fill("bob says no")
        second.get_by_role("button", name="Complete item 1").click()
        expect(page.locator("main")).to_contain_text("Workflow approvals.approve_each: ERROR",
                                                     timeout=STEP_MS)
        expect(page.locator('tr[data-task="ask"]')).to_contain_text("bob says no")
        shot("items-done")
        tasks = api("GET", f"/v1/executions/{each}/tasks").json()
        assert [t["state"] for t in tasks if t["name"] == "ask"] == ["ERROR"]
        assert errors == []


def test_the_gui_renders_a_plans_templates_again(api: Api, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    assert api("POST", "/v1/plans", params={"name": "rp", "sample": "true"}).status_code == 201
    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        errors = console_errors(page)
        shot = Shots(page, tmp_path / "screenshots", "render")
        log_in(page, api)
        page.get_by_role("link", name="rp", exact=True).click()
        page.get_by_role("link", name="Roles and networks").click()
        page.get_by_role("button", name="Render templates").click()
        done = page.locator("#render-done")
        expect(done).to_contain_text("Rendered", timeout=STEP_MS)
        runs = [e for e in api("GET", "/v1/executions").json()
                if e["workflow"] == "tripleo.plan.render_deployment_plan"]
        assert [r["state"] for r in runs] == ["SUCCESS"]
        out = api("GET", f"/v1/executions/{runs[0]['id']}").json()["output"]
        assert out["rendered"] > 0
        assert done.text_content() == (f"Rendered {out['rendered']} template(s): "
                                       f"{out['written']} written, {out['removed']} removed.")
        expect(page.locator("#render-progress")).to_contain_text("process_templates")
        shot("rendered")

        # The plan gone meanwhile: the workflow fails, in the server's words; and a
        # start the server refuses outright is shown beside the button.
        assert api("DELETE", "/v1/plans/rp").status_code in (200, 204)
        page.get_by_role("button", name="Render templates").click()
        end = page.locator("#render-progress #execution-end")
        expect(end).to_contain_text("ERROR", timeout=STEP_MS)
        failed = [e for e in api("GET", "/v1/executions").json()
                  if e["workflow"] == "tripleo.plan.render_deployment_plan"
                  and e["state"] == "ERROR"]
        assert len(failed) == 1
        error = api("GET", f"/v1/executions/{failed[0]['id']}").json()["error"]
        assert "'rp' does not exist" in error
        expect(end).to_contain_text(error)
        expect(done).to_be_empty()
        shot("failed")
        assert errors == []


ENV_ONE = "parameter_defaults:\n  ComputeCount: 2\n"
ENV_TWO = "parameter_defaults:\n  ControllerCount: 1\n"


def _environments(api: Api, plan: str) -> list[dict[str, Any]]:
    listed = api("GET", f"/v1/plans/{plan}/environments")
    assert listed.status_code == 200, listed.text
    return list(listed.json())


def test_the_gui_adds_and_removes_a_plans_user_environments(api: Api, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    assert api("POST", "/v1/plans", params={"name": "ue", "sample": "true"}).status_code == 201
    before = _environments(api, "ue")
    assert before and not any(e["user"] for e in before)
    (tmp_path / "one.yaml").write_text(ENV_ONE)
    (tmp_path / "two.yaml").write_text(ENV_TWO)
    (tmp_path / "bad.yaml").write_text("parameter_defaults: [unclosed\n")
    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        errors = console_errors(page)
        page.on("dialog", lambda dialog: dialog.accept())
        shot = Shots(page, tmp_path / "screenshots", "userenvs")
        log_in(page, api)
        page.get_by_role("link", name="ue", exact=True).click()
        page.get_by_role("link", name="Environments").click()
        rows = page.locator("tr[data-environment]")
        expect(rows).to_have_count(len(before), timeout=STEP_MS)

        # Two files added, in the order chosen, after the plan's own.
        page.set_input_files("#add-environment-files", [str(tmp_path / "one.yaml"),
                                                        str(tmp_path / "two.yaml")])
        page.get_by_role("button", name="Add environments").click()
        expect(rows).to_have_count(len(before) + 2, timeout=STEP_MS)
        added = _environments(api, "ue")
        users = [e["path"] for e in added if e["user"]]
        assert len(users) == 2 and users[0].endswith("one.yaml") and users[1].endswith("two.yaml")
        assert [r.get_attribute("data-environment") for r in rows.all()] == [
            e["path"] for e in added]
        shot("added")

        # A file that is not YAML is refused, in the server's words, and nothing changes.
        page.set_input_files("#add-environment-files", [str(tmp_path / "bad.yaml")])
        page.get_by_role("button", name="Add environments").click()
        problem = page.locator("#user-environments-error")
        expect(problem).not_to_be_empty(timeout=STEP_MS)
        assert _environments(api, "ue") == added
        refused = api("POST", "/v1/plans/ue/environments", json={"environments": [
            {"name": "bad.yaml", "files": {"bad.yaml": "parameter_defaults: [unclosed\n"}}]})
        assert refused.status_code >= 400
        assert problem.text_content() == refused.json()["error"]["message"]
        shot("refused")

        # One removed (after the confirmation the CLI does not ask for).
        page.get_by_role("button", name=f"Remove environment {users[0]}").click()
        expect(rows).to_have_count(len(before) + 1, timeout=STEP_MS)
        left = _environments(api, "ue")
        assert [e["path"] for e in left if e["user"]] == [users[1]]
        shot("removed")
        assert errors == []


def _archive(folder: Path, extra: dict[str, str]) -> Path:
    """The sample plan's templates with ``extra`` files, as a .tar.gz."""
    tree = folder / "tree"
    shutil.copytree(sample_plan_dir(), tree)
    for name, text in extra.items():
        (tree / name).write_text(text)
    path = folder / "templates.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for item in sorted(tree.iterdir()):
            tar.add(item, arcname=item.name)
    return path


def _plan_files(api: Api, plan: str) -> list[str]:
    """The files of ``plan``, from its export."""
    exported = api("GET", f"/v1/plans/{plan}/export")
    assert exported.status_code == 200, exported.text
    with tarfile.open(fileobj=io.BytesIO(exported.content), mode="r:gz") as tar:
        return sorted(m.name for m in tar.getmembers() if m.isfile())


def test_the_gui_updates_a_plans_templates(api: Api, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    assert api("POST", "/v1/plans", params={"name": "up", "sample": "true"}).status_code == 201
    assert api("PUT", "/v1/plans/up/parameters",
               json={"parameters": {"ComputeCount": 3}}).status_code == 200
    files_before = _plan_files(api, "up")
    archive = _archive(tmp_path, {"notes.yaml": "heat_template_version: rocky\n"})
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"not a gzip archive")
    with chromium_page() as opened:
        page: Page = opened  # type: ignore[assignment]
        errors = console_errors(page)
        shot = Shots(page, tmp_path / "screenshots", "update")
        log_in(page, api)
        form = page.get_by_role("form", name="Update a plan's templates")
        expect(form).to_be_visible(timeout=STEP_MS)

        # Not an archive: refused in the server's words, the plan unchanged.
        page.select_option("#update-plan-name", "up")
        page.set_input_files("#update-plan-file", str(broken))
        form.get_by_role("button", name="Update plan").click()
        problem = page.locator("#update-plan-error")
        expect(problem).not_to_be_empty(timeout=STEP_MS)
        assert _plan_files(api, "up") == files_before
        shot("refused")

        page.set_input_files("#update-plan-file", str(archive))
        form.get_by_role("button", name="Update plan").click()
        expect(page.locator("#status")).to_contain_text("Plan up updated", timeout=STEP_MS)
        expect(problem).to_be_empty()
        files_after = _plan_files(api, "up")
        assert "notes.yaml" in files_after and "notes.yaml" not in files_before
        # Its parameter values are kept, as plan update keeps them.
        values = api("GET", "/v1/plans/up/parameters").json()
        assert values["ComputeCount"] == 3
        shot("updated")
        assert errors == []
