"""Mistral's task rerun over HTTP (``PUT /v1/executions/{id}/tasks/{task}``, as
``PUT /v2/tasks/{id}``) and from the CLI (``tripleo-flow task rerun``, as
``mistral task-rerun``), issue 26.

The workflow's second task fails while the execution's env says ``ok: false``
(``fail-on``); its rerun with ``env: {"ok": true}`` (merged into the execution's env,
as Mistral's) succeeds and the workflow goes on to its end, its first task not run
again.  Through the real server: hostile or refused bodies (a state other than
RUNNING, wrong types, unknown fields, ``reset: false`` of a task without with-items,
a task that did not fail, a body past ``[api] max_json_size``) answer 400 or 413 and
change nothing; an unknown execution or task 404; an execution the CLI started or one
that did not fail 409.  In the GUI, a failed task's Rerun button.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from tests.engine_helpers import Host
from tests.functional.http.conftest import Api, finished, running_api
from tests.functional.http.test_gui_browser import Shots, chromium_page, log_in

ROOT = Path(__file__).resolve().parents[3]

WORKBOOK = textwrap.dedent("""\
    version: '2.0'
    name: rerun_http
    workflows:
      chain:
        tasks:
          first:
            action: std.echo output="first"
            on-success: [check]
          check:
            action: std.echo output=<% env().ok %>
            fail-on: <% not env().ok %>
            on-success: [last]
          last:
            action: std.echo output="last"
    """)


def _install(data_dir: Path) -> None:
    (data_dir.parent / "rerun_http.yaml").write_text(WORKBOOK)
    host = Host(data_dir)
    try:
        host.workbooks.create(data_dir.parent / "rerun_http.yaml")
    finally:
        host._session.close_workflows()


def _tasks(api: Api, ident: str) -> dict[str, tuple[str, Any]]:
    tasks = api("GET", f"/v1/executions/{ident}/tasks").json()
    return {t["name"]: (t["state"], t["result"]) for t in tasks}


def _started(api: Api, ident: str, task: str) -> float:
    tasks = api("GET", f"/v1/executions/{ident}/tasks").json()
    return float(next(t["started_at"] for t in tasks if t["name"] == task))


def test_rerun_over_http_and_what_is_refused(tmp_path: Path) -> None:
    _install(tmp_path / "data")
    with running_api(tmp_path, {"api": {"max_json_size": 4096}}) as api:
        started = api("POST", "/v1/workflows/rerun_http.chain/executions",
                      json={"env": {"ok": False, "keep": 1}})
        assert started.status_code == 202, started.text
        ident = str(started.json()["id"])
        failed = finished(api, ident)
        assert (failed["state"], failed["failed_task"]) == ("ERROR", "check"), failed
        first_started = _started(api, ident, "first")
        url = f"/v1/executions/{ident}/tasks/check"
        bodies = [{}, {"state": "SUCCESS"}, {"state": "ERROR"}, {"state": 3},
                  {"state": "RUNNING", "reset": "no"}, {"state": "RUNNING", "env": 1},
                  {"state": "RUNNING", "env": []}, {"state": "RUNNING", "x": 1},
                  {"state": "RUNNING", "reset": False}, [1], "RUNNING"]
        answers = [api("PUT", url, json=body) for body in bodies]
        answers.append(api("PUT", url, data=b"{not json",
                           headers={"Content-Type": "application/json"}))
        answers.append(api("PUT", f"/v1/executions/{ident}/tasks/first",
                           json={"state": "RUNNING"}))
        assert [a.status_code for a in answers] == [400] * len(answers), \
            [a.text for a in answers]
        no_reset = answers[8].json()["error"]["message"]
        assert "only a with-items task" in no_reset, no_reset
        assert "only a failed task" in answers[-1].json()["error"]["message"]
        huge = api("PUT", url, json={"state": "RUNNING", "env": {"k": "x" * 10_000}})
        assert huge.status_code == 413, huge.text
        assert api("PUT", "/v1/executions/no-such-execution/tasks/check",
                   json={"state": "RUNNING"}).status_code == 404
        assert api("PUT", f"/v1/executions/{ident}/tasks/nope",
                   json={"state": "RUNNING"}).status_code == 404
        assert api("GET", f"/v1/executions/{ident}").json()["state"] == "ERROR"

        rerun = api("PUT", url, json={"state": "RUNNING", "reset": True,
                                      "env": {"ok": True}})
        assert rerun.status_code == 202, rerun.text
        assert rerun.headers["Location"] == f"/v1/executions/{ident}"
        done = finished(api, ident)
        assert (done["state"], done["error"], done["failed_task"]) == ("SUCCESS", None, None)
        assert done["env"] == {"ok": True, "keep": 1}
        tasks = _tasks(api, ident)
        assert tasks["check"] == ("SUCCESS", True) and tasks["last"] == ("SUCCESS", "last")
        assert tasks["first"] == ("SUCCESS", "first")
        assert _started(api, ident, "first") == first_started  # not run again
        again = api("PUT", url, json={"state": "RUNNING"})
        assert again.status_code == 409, again.text
        assert "only a task of a failed execution" in again.json()["error"]["message"]

        spec = api("GET", "/v1/openapi.json").json()
        put = spec["paths"]["/v1/executions/{execution_id}/tasks/{task}"]["put"]
        assert "202" in put["responses"]


def _cli(conf: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "tripleo_flow.cli.main", "--config-file",
                           str(conf), *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == code, (done.stdout, done.stderr)
    return done


def test_rerun_from_the_cli_and_not_over_http(tmp_path: Path) -> None:
    """``task rerun ID check --env '{"ok": true}'``: SUCCESS, with the progress of
    ``execution resume``; ``--no-reset`` of a task without with-items exits 2; over
    HTTP the CLI's execution is refused (409)."""
    data_dir = tmp_path / "data"
    _install(data_dir)
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {data_dir}\n")
    _cli(conf, "workflow", "run", "rerun_http.chain", "--env", "ok=false", code=6)
    (ident,) = [e["ID"] for e in json.loads(
        _cli(conf, "execution", "list", "-f", "json").stdout)]
    with running_api(tmp_path) as api:
        refused = api("PUT", f"/v1/executions/{ident}/tasks/check",
                      json={"state": "RUNNING", "env": {"ok": True}})
        assert refused.status_code == 409, refused.text
        assert "not started through the HTTP API" in refused.json()["error"]["message"]
    no_reset = _cli(conf, "task", "rerun", ident, "check", "--no-reset", code=2)
    assert "only a with-items task" in no_reset.stderr
    done = _cli(conf, "task", "rerun", ident, "check", "--env", '{"ok": true}', "-f", "json")
    shown = json.loads(done.stdout)
    assert (shown["State"], shown["Error"]) == ("SUCCESS", ""), shown
    assert "tasks done" in done.stderr, done.stderr
    tasks = {t["Task"]: t["State"] for t in json.loads(
        _cli(conf, "execution", "tasks", ident, "-f", "json").stdout)}
    assert tasks == {"first": "SUCCESS", "check": "SUCCESS", "last": "SUCCESS"}


def test_rerun_from_the_gui(tmp_path: Path) -> None:
    """The page of a failed execution has a Rerun button on its failed task only (none
    on the tasks that completed): the task is rerun (its env fixed first over HTTP,
    as Mistral's ``env`` of a rerun would), the execution goes on and ends SUCCESS,
    and the buttons are gone."""
    _install(tmp_path / "data")
    with running_api(tmp_path) as api:
        started = api("POST", "/v1/workflows/rerun_http.chain/executions",
                      json={"env": {"ok": False}})
        ident = str(started.json()["id"])
        assert finished(api, ident)["state"] == "ERROR"
        fixed = api("PUT", f"/v1/executions/{ident}", json={"params": {"env": {"ok": True}}})
        assert fixed.status_code == 200, fixed.text
        with chromium_page() as page:
            from playwright.sync_api import Page, expect

            assert isinstance(page, Page)
            shot = Shots(page, tmp_path / "screenshots", "rerun")
            log_in(page, api)
            page.get_by_role("link", name="Executions").click()
            page.get_by_role("link", name=ident).click()
            rerun = page.get_by_role("button", name="Rerun task check")
            expect(rerun).to_be_visible()
            # The failed task reads ERROR, as Mistral's; ours undid it: "(undone)".
            expect(page.locator("tr[data-task=check]")).to_contain_text("ERROR (undone)")
            expect(page.get_by_role("button", name="Rerun task first")).to_have_count(0)
            expect(page.get_by_role("button", name="Rerun task last")).to_have_count(0)
            shot("failed")
            rerun.click()
            expect(page.locator("tr[data-task=last]")).to_contain_text("SUCCESS",
                                                                      timeout=30_000)
            expect(page.get_by_role("button", name="Rerun task check")).to_have_count(0)
            shot("rerun")
        done = finished(api, ident)
        assert done["state"] == "SUCCESS", done
        assert _tasks(api, ident)["check"] == ("SUCCESS", True)
