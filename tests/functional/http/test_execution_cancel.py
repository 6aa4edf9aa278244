"""Cancel over HTTP (``POST /v1/executions/{id}/cancel``, issue 26), as Mistral's
``execution-update -s CANCELLED``.

An execution an API user started, run by another process, is cancelled through the
real server: it reads CANCELLED at once with the message given, its running task
(``std.sleep``) ends, the next never starts and its process ends it CANCELLED.  A
resume then answers 200 with it unchanged (Mistral's resume of a workflow that is
not paused), a pause 409, a second cancel 200 unchanged.  Hostile or refused requests
(a body that is not ``{"state": "CANCELLED", "state_info": ...}``, an unknown id, an
execution started from the CLI) answer 400/404/409 and change nothing.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.engine_helpers import until
from tests.functional.http.conftest import finished, running_api
from tests.functional.http.test_execution_pause import (
    ROOT,
    RUN_AS_API_USER,
    _install,
    _state,
    _states,
)
from tests.functional.http.test_gui_browser import Shots, chromium_page, log_in

MSG = "Cancelled by user."
#: The chain (its slow task a ``std.sleep`` of 8 s that ends by itself) run as an API
#: user's execution in a separate process.
RUN_CHAIN_AS_API_USER = RUN_AS_API_USER.replace('"pausing_http.held"', '"pausing_http.chain"')
assert RUN_CHAIN_AS_API_USER != RUN_AS_API_USER


def test_cancel_over_http_an_execution_another_process_runs(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    from_cli = _install(data_dir, run_from_cli=True)
    proc = subprocess.Popen([sys.executable, "-c", RUN_CHAIN_AS_API_USER, str(data_dir)],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        ident = proc.stdout.readline().strip()
        with running_api(tmp_path) as api:
            until("the slow task", lambda: _states(api, ident).get("first") == "SUCCESS")
            time.sleep(0.5)  # the slow task runs (8 s)
            answers = [api("POST", f"/v1/executions/{ident}/cancel", json=body)
                       for body in ({"state": "PAUSED"}, {"state": "CANCELLED", "x": 1},
                                    {"state_info": 3}, [1])]
            answers.append(api("POST", f"/v1/executions/{ident}/cancel", data=b"{not json",
                               headers={"Content-Type": "application/json"}))
            assert [a.status_code for a in answers] == [400] * 5, [a.text for a in answers]
            assert api("POST", "/v1/executions/no-such-execution/cancel").status_code == 404
            refused = api("POST", f"/v1/executions/{from_cli}/cancel")
            assert refused.status_code == 409
            assert "not started through the HTTP API" in refused.json()["error"]["message"]
            assert _state(api, ident) == "RUNNING"
            assert api("GET", f"/v1/executions/{from_cli}").json()["state"] == "SUCCESS"

            asked = api("POST", f"/v1/executions/{ident}/cancel",
                        json={"state": "CANCELLED", "state_info": MSG})
            assert asked.status_code == 202, asked.text
            assert asked.headers["Location"] == f"/v1/executions/{ident}"
            assert (asked.json()["state"], asked.json()["state_info"]) == ("CANCELLED", MSG)
            assert proc.stdout.readline().strip() == "CANCELLED"
            assert proc.wait(60) == 0
            shown = api("GET", f"/v1/executions/{ident}").json()
            assert (shown["state"], shown["state_info"], shown["output"]) == (
                "CANCELLED", MSG, {"result": MSG})
            states = _states(api, ident)
            assert states["first"] == states["slow"] == "SUCCESS"
            assert states.get("after", "PENDING") == "PENDING"  # never started

            resumed = api("POST", f"/v1/executions/{ident}/resume")
            assert resumed.status_code == 200, resumed.text
            assert resumed.json()["state"] == "CANCELLED"
            paused = api("POST", f"/v1/executions/{ident}/pause")
            assert paused.status_code == 409 and "already ended (CANCELLED)" in paused.text
            again = api("POST", f"/v1/executions/{ident}/cancel", json={"state_info": "x"})
            assert again.status_code == 200, again.text
            assert again.json()["state_info"] == MSG  # the first message stays
            time.sleep(0.5)  # a resume would have started a task by now
            assert _state(api, ident) == "CANCELLED"
            assert _states(api, ident).get("after", "PENDING") == "PENDING"
            assert api("GET", f"/v1/executions/{from_cli}").json()["state"] == "SUCCESS"
            resumed_done = api("POST", f"/v1/executions/{from_cli}/resume")
            assert resumed_done.status_code == 409  # not started through the API
    finally:
        proc.kill()
        proc.wait(10)


def test_cancel_from_the_gui(tmp_path: Path) -> None:
    """The executions page of a running execution has a Cancel button beside Pause:
    clicked, the execution reads CANCELLED (its running task ends, the next never
    starts) and Pause, Resume and Cancel are gone."""
    _install(tmp_path / "data")
    with running_api(tmp_path) as api:
        started = api("POST", "/v1/workflows/pausing_http.chain/executions",
                      json={"input": {"seconds": 20}})
        assert started.status_code == 202, started.text
        ident = started.json()["id"]
        with chromium_page() as page:
            from playwright.sync_api import Page, expect

            assert isinstance(page, Page)
            shot = Shots(page, tmp_path / "screenshots", "cancel")
            log_in(page, api)
            page.get_by_role("link", name="Executions").click()
            page.get_by_role("link", name=ident).click()
            expect(page.locator('#graph g.node[data-task="slow"]')).to_have_attribute(
                "data-state", "RUNNING")
            expect(page.get_by_role("button", name="Pause")).to_be_visible()
            shot("running")
            page.get_by_role("button", name="Cancel").click()
            expect(page.get_by_text("CANCELLED").first).to_be_visible(timeout=30_000)
            for name in ("Pause", "Resume", "Cancel"):
                expect(page.get_by_role("button", name=name)).to_have_count(0)
            expect(page.locator('#graph g.node[data-task="slow"]')).to_have_attribute(
                "data-state", "SUCCESS", timeout=60_000)
            shot("cancelled")
        done = finished(api, ident)
        assert done["state"] == "CANCELLED", done
        assert _states(api, ident).get("after", "PENDING") == "PENDING"


def test_a_task_waiting_for_a_client_reads_cancelled(tmp_path: Path) -> None:
    """An execution cancelled while its task waits for a client (``std.async_noop``):
    once it ended, the task reads CANCELLED with the message as its ``state_info``
    (Mistral's task of a cancelled action execution), and its completion is refused."""
    _install(tmp_path / "data")
    with running_api(tmp_path) as api:
        started = api("POST", "/v1/workflows/pausing_http.held/executions", json={})
        assert started.status_code == 202, started.text
        ident = started.json()["id"]
        until("the waiting task", lambda: _states(api, ident).get("slow") == "RUNNING")
        asked = api("POST", f"/v1/executions/{ident}/cancel", json={"state_info": MSG})
        assert asked.status_code == 202, asked.text
        assert finished(api, ident)["state"] == "CANCELLED"
        tasks = {t["name"]: t for t in api("GET", f"/v1/executions/{ident}/tasks").json()}
        assert (tasks["slow"]["state"], tasks["slow"]["state_info"]) == ("CANCELLED", MSG)
        assert tasks["slow"]["waiting"] == [] and "after" not in tasks
        late = api("POST", f"/v1/executions/{ident}/tasks/slow/complete",
                   json={"state": "SUCCESS"})
        assert late.status_code == 409, late.text
        assert _states(api, ident) == {"first": "SUCCESS", "slow": "CANCELLED"}
