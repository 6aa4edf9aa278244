"""Mistral's execution update over HTTP (``PUT /v1/executions/{id}``, issue 26), as
``PUT /v2/executions/{id}`` (``mistral execution-update``), and from the GUI.

Through the real server: ERROR stops a running execution (it reads FAILURE, our name
for Mistral's ERROR, with the message as its state_info and error; its running task
ends, the next never starts), SUCCESS stops one with that state, PAUSED then RUNNING
with ``params.env`` pauses it and resumes it with its env updated.  What Mistral
refuses and hostile bodies (an unknown state or field, wrong types, env with another
state than RUNNING, a description with a state, too long or not text, a body past
``[api] max_json_size``) answer 400 or 413 and change nothing; SUCCESS of an ended
execution 400 (Mistral's refused transition), ERROR of one 200 unchanged.  A
``description`` alone is kept and shown (Mistral's).
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.engine_helpers import until
from tests.functional.http.conftest import Api, finished, running_api
from tests.functional.http.test_execution_pause import _install, _state, _states
from tests.functional.http.test_gui_browser import Shots, chromium_page, log_in


def _chain(api: Api, seconds: int) -> str:
    started = api("POST", "/v1/workflows/pausing_http.chain/executions",
                  json={"input": {"seconds": seconds}, "env": {"k": "old", "keep": 1}})
    assert started.status_code == 202, started.text
    ident = str(started.json()["id"])
    until("the slow task", lambda: _states(api, ident).get("slow") == "RUNNING")
    return ident


def test_stop_with_error_over_http_and_what_is_refused(tmp_path: Path) -> None:
    from_cli = _install(tmp_path / "data", run_from_cli=True)
    with running_api(tmp_path, {"api": {"max_json_size": 4096}}) as api:
        ident = _chain(api, 10)
        url = f"/v1/executions/{ident}"
        bodies = [{}, {"state": "SKIPPED"}, {"state": "FAILURE"}, {"state": 3},
                  {"state": "ERROR", "state_info": 3}, {"state": "ERROR", "x": 1},
                  {"description": 3}, {"description": "d" * 256},
                  {"state": "ERROR", "description": "d"},
                  {"params": {"env": 1}}, {"params": {"other": 1}}, {"params": []},
                  {"state": "PAUSED", "params": {"env": {"a": 1}}},
                  {"id": "another", "state": "ERROR"}, [1], "ERROR"]
        answers = [api("PUT", url, json=body) for body in bodies]
        answers.append(api("PUT", url, data=b"{not json",
                           headers={"Content-Type": "application/json"}))
        assert [a.status_code for a in answers] == [400] * len(answers), \
            [a.text for a in answers]
        huge = api("PUT", url, json={"state": "ERROR", "state_info": "x" * 10_000})
        assert huge.status_code == 413, huge.text
        assert api("PUT", "/v1/executions/no-such-execution",
                   json={"state": "ERROR"}).status_code == 404
        refused = api("PUT", f"/v1/executions/{from_cli}", json={"state": "ERROR"})
        assert refused.status_code == 409
        assert "not started through the HTTP API" in refused.json()["error"]["message"]
        assert api("GET", f"/v1/executions/{from_cli}").json()["state"] == "SUCCESS"
        assert _state(api, ident) == "RUNNING"
        shown = api("GET", url).json()
        assert shown["env"] == {"k": "old", "keep": 1} and shown["state_info"] is None
        assert shown["description"] is None
        described = api("PUT", url, json={"description": "the nightly run"})
        assert described.status_code == 200, described.text
        assert (described.json()["description"], described.json()["state"]) == (
            "the nightly run", "RUNNING")
        assert api("GET", url).json()["description"] == "the nightly run"

        asked = api("PUT", url, json={"state": "ERROR", "state_info": "Failure"})
        assert asked.status_code == 200, asked.text
        assert (asked.json()["state"], asked.json()["state_info"],
                asked.json()["error"]) == ("ERROR", "Failure", "Failure")
        done = finished(api, ident)
        assert (done["state"], done["state_info"], done["output"]) == (
            "ERROR", "Failure", {"result": "Failure"})
        states = _states(api, ident)
        assert states["first"] == "SUCCESS" and states.get("after", "PENDING") == "PENDING"

        again = api("PUT", url, json={"state": "SUCCESS"})
        assert again.status_code == 400, again.text  # Mistral's WorkflowException
        unchanged = api("PUT", url, json={"state": "ERROR", "state_info": "again"})
        assert unchanged.status_code == 200
        assert unchanged.json()["state_info"] == "Failure"
        resumed = api("PUT", url, json={"state": "RUNNING"})
        assert resumed.status_code == 200 and resumed.json()["state"] == "ERROR"
        time.sleep(0.5)  # a resume would have started a task by now
        assert _states(api, ident).get("after", "PENDING") == "PENDING"


def test_stop_with_success_and_pause_then_resume_with_env(tmp_path: Path) -> None:
    """Mistral's ``test_stop_failed`` over HTTP, then a pause and a resume that updates
    the env (``params.env``, merged into the old one)."""
    _install(tmp_path / "data")
    with running_api(tmp_path) as api:
        ident = _chain(api, 10)
        asked = api("PUT", f"/v1/executions/{ident}",
                    json={"state": "SUCCESS", "state_info": "Force stop"})
        assert asked.status_code == 200, asked.text
        done = finished(api, ident)
        assert (done["state"], done["state_info"], done["output"]) == (
            "SUCCESS", "Force stop", {})
        assert _states(api, ident).get("after", "PENDING") == "PENDING"

        ident = _chain(api, 3)
        url = f"/v1/executions/{ident}"
        paused = api("PUT", url, json={"state": "PAUSED"})
        assert paused.status_code == 200 and paused.json()["state"] == "PAUSED"
        until("paused", lambda: not api("GET", url).json()["pausing"])
        assert _states(api, ident).get("after", "PENDING") == "PENDING"
        resumed = api("PUT", url, json={"state": "RUNNING", "params": {"env": {"k": "new"}}})
        assert resumed.status_code == 200, resumed.text
        done = finished(api, ident)
        assert done["state"] == "SUCCESS" and done["env"] == {"k": "new", "keep": 1}
        assert _states(api, ident) == dict.fromkeys(("first", "slow", "after", "last"),
                                                    "SUCCESS")


def test_fail_from_the_gui(tmp_path: Path) -> None:
    """The page of a running execution has Fail and Succeed buttons beside Cancel:
    Fail stops it with ERROR (it reads FAILURE), and the buttons are gone."""
    _install(tmp_path / "data")
    with running_api(tmp_path) as api:
        ident = _chain(api, 10)
        with chromium_page() as page:
            from playwright.sync_api import Page, expect

            assert isinstance(page, Page)
            shot = Shots(page, tmp_path / "screenshots", "fail")
            log_in(page, api)
            page.get_by_role("link", name="Executions").click()
            page.get_by_role("link", name=ident).click()
            expect(page.get_by_role("button", name="Succeed")).to_be_visible()
            page.get_by_role("button", name="Fail").click()
            expect(page.get_by_text("ERROR").first).to_be_visible(timeout=30_000)
            for name in ("Pause", "Cancel", "Fail", "Succeed"):
                expect(page.get_by_role("button", name=name)).to_have_count(0)
            shot("failed")
        done = finished(api, ident)
        assert done["state"] == "ERROR", done
        assert _states(api, ident).get("after", "PENDING") == "PENDING"
