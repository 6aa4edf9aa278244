"""Pause over HTTP (``POST /v1/executions/{id}/pause``, issue 26) and from the GUI.

An execution an API user started, run by another process, is paused through the real
server: its running task (``std.async_noop``, completed by the test) is left to its
completion, the next never starts, it reads PAUSED;
resumed over HTTP it ends SUCCESS with each task run once.  Hostile or refused requests
(a body that is not ``{"state": "PAUSED"}``, an unknown id, an execution started from
the CLI, a paused or ended one) answer 400/404/409 and change nothing.  In the GUI, an
execution the server runs is paused with its Pause button, then resumed.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.engine_helpers import Host, until
from tests.functional.http.conftest import Api, finished, running_api
from tests.functional.http.test_gui_browser import Shots, chromium_page, log_in

ROOT = Path(__file__).resolve().parents[3]

WORKBOOK = textwrap.dedent("""\
    version: '2.0'
    name: pausing_http
    workflows:
      chain:
        input:
          - seconds: 8
        tasks:
          first:
            action: std.echo output="first"
            on-success: [slow]
          slow:
            action: std.sleep seconds=<% $.seconds %>
            on-success: [after]
          after:
            action: std.echo output="after"
            on-success: [last]
          last:
            action: std.echo output="last"
      held:
        tasks:
          first:
            action: std.echo output="first"
            on-success: [slow]
          slow:
            action: std.async_noop
            on-success: [after]
          after:
            action: std.echo output="after"
            on-success: [last]
          last:
            action: std.echo output="last"
    """)
TASKS = ["first", "slow", "after", "last"]

#: Runs pausing_http.chain as an HTTP API user's execution, in this separate process.
RUN_AS_API_USER = textwrap.dedent("""\
    import sys
    from pathlib import Path
    from tests.engine_helpers import Host
    host = Host(Path(sys.argv[1]))
    runner = host._session.runner()
    fd = runner.start("pausing_http.held", {}, origin="api")
    print(fd.uuid, flush=True)
    print(runner.execute(fd).state, flush=True)
    host._session.close_workflows()
    """)


def _states(api: Api, execution_id: str) -> dict[str, str]:
    tasks = api("GET", f"/v1/executions/{execution_id}/tasks").json()
    return {t["name"]: t["state"] for t in tasks}


def _state(api: Api, execution_id: str) -> str:
    return str(api("GET", f"/v1/executions/{execution_id}").json()["state"])




def _install(data_dir: Path, run_from_cli: bool = False) -> str | None:
    """Install WORKBOOK; with ``run_from_cli``, run its chain once (not as an API
    user): that execution's id."""
    (data_dir.parent / "pausing_http.yaml").write_text(WORKBOOK)
    host = Host(data_dir)
    try:
        host.workbooks.create(data_dir.parent / "pausing_http.yaml")
        return host.executions.create("pausing_http.chain", {"seconds": 0}).id if run_from_cli \
            else None
    finally:
        host._session.close_workflows()


def test_pause_over_http_an_execution_another_process_runs(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    from_cli = _install(data_dir, run_from_cli=True)
    proc = subprocess.Popen([sys.executable, "-c", RUN_AS_API_USER, str(data_dir)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        ident = proc.stdout.readline().strip()
        with running_api(tmp_path) as api:
            # slow waits for its completion (an asynchronous action), however long this
            # machine takes to get the server up
            until("the slow task", lambda: _states(api, ident).get("slow") == "RUNNING")
            answers = [api("POST", f"/v1/executions/{ident}/pause", json=body)
                       for body in ({"state": "RUNNING"}, {"state": "PAUSED", "x": 1}, [1])]
            answers.append(api("POST", f"/v1/executions/{ident}/pause", data=b"{not json",
                               headers={"Content-Type": "application/json"}))
            assert [a.status_code for a in answers] == [400] * 4, [a.text for a in answers]
            assert api("POST", "/v1/executions/no-such-execution/pause").status_code == 404
            refused = api("POST", f"/v1/executions/{from_cli}/pause")
            assert refused.status_code == 409
            assert "not started through the HTTP API" in refused.json()["error"]["message"]
            assert _state(api, ident) == "RUNNING"
            assert api("GET", f"/v1/executions/{from_cli}").json()["state"] == "SUCCESS"

            asked = api("POST", f"/v1/executions/{ident}/pause", json={"state": "PAUSED"})
            assert asked.status_code == 202, asked.text
            assert asked.headers["Location"] == f"/v1/executions/{ident}"
            # Mistral's PAUSED at once, its engine stopping (pausing)
            assert (asked.json()["state"], asked.json()["pausing"]) == ("PAUSED", True)
            assert proc.stdout.readline().strip() == "PAUSED"
            assert proc.wait(60) == 0
            assert _state(api, ident) == "PAUSED"
            # slow's action completed while paused: the task reads SUCCESS at once and
            # the execution stays PAUSED; nothing after it starts (Mistral's)
            done = api("POST", f"/v1/executions/{ident}/tasks/slow/complete",
                       json={"state": "SUCCESS"})
            assert done.status_code == 200, done.text
            assert _state(api, ident) == "PAUSED"
            states = _states(api, ident)
            assert (states["first"], states["slow"]) == ("SUCCESS", "SUCCESS")
            assert states.get("after", "PENDING") == "PENDING"  # never started

            # Paused already: left as it is (Mistral's pause of a paused workflow).
            again = api("POST", f"/v1/executions/{ident}/pause")
            assert again.status_code == asked.status_code, again.text
            assert (again.json()["state"], again.json()["pausing"]) == ("PAUSED", False)

            resumed = api("POST", f"/v1/executions/{ident}/resume")
            assert resumed.status_code == 202, resumed.text
            body = finished(api, ident)
            assert body["state"] == "SUCCESS", body
            assert _states(api, ident) == dict.fromkeys(TASKS, "SUCCESS")  # each once
            ended = api("POST", f"/v1/executions/{ident}/pause", json={})
            assert ended.status_code == 409 and "already ended (SUCCESS)" in ended.text
            assert _state(api, ident) == "SUCCESS"
            for answer in (*answers, refused, again, ended):
                assert api.token not in answer.text
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_pause_then_resume_from_the_gui(tmp_path: Path) -> None:
    _install(tmp_path / "data")
    with running_api(tmp_path) as api:
        # The slow task waits for its completion (an asynchronous action), not for a
        # time: the page sees it RUNNING however long the browser takes to get there.
        started = api("POST", "/v1/workflows/pausing_http.held/executions", json={})
        assert started.status_code == 202, started.text
        ident = started.json()["id"]
        with chromium_page() as page:
            from playwright.sync_api import Page, expect

            assert isinstance(page, Page)
            shot = Shots(page, tmp_path / "screenshots", "pause")
            log_in(page, api)
            page.get_by_role("link", name="Executions").click()
            page.get_by_role("link", name=ident).click()
            expect(page.locator('#graph g.node[data-task="slow"]')).to_have_attribute(
                "data-state", "RUNNING")
            shot("running")
            page.get_by_role("button", name="Pause").click()
            until("the pause request", lambda: _state(api, ident) == "PAUSED")
            # The page drawn while paused, slow still awaiting its completion: the view
            # keeps following it (its event stream does not end while a task runs).
            page.reload()
            expect(page.get_by_role("button", name="Resume")).to_be_visible(timeout=30_000)
            expect(page.locator('#graph g.node[data-task="slow"]')).to_have_attribute(
                "data-state", "RUNNING")
            done = api("POST", f"/v1/executions/{ident}/tasks/slow/complete",
                       json={"state": "SUCCESS"})
            assert done.status_code == 200, done.text
            expect(page.get_by_role("button", name="Pause")).to_have_count(0)
            # As Mistral: the completion taken while the execution is paused makes the
            # task SUCCESS at once; nothing after it starts until the resume.
            expect(page.locator('#graph g.node[data-task="slow"]')).to_have_attribute(
                "data-state", "SUCCESS")
            shot("paused")
            assert _state(api, ident) == "PAUSED"
            assert _states(api, ident)["slow"] == "SUCCESS"
            assert _states(api, ident).get("after", "PENDING") == "PENDING"
            page.get_by_role("button", name="Resume").click()
            expect(page.locator('#graph g.node[data-task="last"]')).to_have_attribute(
                "data-state", "SUCCESS", timeout=30_000)
            expect(page.get_by_role("button", name="Resume")).to_have_count(0)
            shot("resumed")
        assert finished(api, ident)["state"] == "SUCCESS"
        assert _states(api, ident) == dict.fromkeys(TASKS, "SUCCESS")
