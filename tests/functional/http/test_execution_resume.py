"""Resume over HTTP (``POST /v1/executions/{id}/resume``) and from the GUI: an
execution an API user started and whose process was killed goes on from its last
completed task in the background; one started from the CLI, one that has ended and
an unknown one are refused and change nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.engine_helpers import Host
from tests.functional.http.conftest import Api, finished, running_api
from tests.functional.http.test_gui_browser import Shots, chromium_page

ROOT = Path(__file__).resolve().parents[3]

#: Starts std_only.greet, kills its own process once its first task has succeeded.
KILLED_RUN = textwrap.dedent("""\
    import os, signal, sys, time
    from pathlib import Path
    from tests.engine_helpers import Host

    def killer(event):
        if event.event == "succeeded" and event.task == "say":
            os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(10)

    Host(Path(sys.argv[1])).executions.create("std_only.greet", {"who": "gui"},
                                         listeners=[killer], api_user=sys.argv[2] == "api")
    """)


def _interrupted(data_dir: Path, origin: str) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_RUN, str(data_dir), origin],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == -9, (done.returncode, done.stderr[-2000:])


def _states(api: Api, execution_id: str) -> dict[str, str]:
    tasks = api("GET", f"/v1/executions/{execution_id}/tasks").json()
    return {t["name"]: t["state"] for t in tasks}


def test_resume_over_http_and_from_the_gui(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    host = Host(data_dir)
    try:
        host.install("std_only")
    finally:
        host._session.close_workflows()
    _interrupted(data_dir, "cli")
    _interrupted(data_dir, "api")
    _interrupted(data_dir, "api")

    with running_api(tmp_path) as api:
        listed = api("GET", "/v1/executions").json()
        assert [e["state"] for e in listed] == ["INTERRUPTED"] * 3, listed
        from_cli, from_api, for_gui = (e["id"] for e in listed)

        refused = api("POST", f"/v1/executions/{from_cli}/resume")
        assert refused.status_code == 409, refused.text
        assert "not started through the HTTP API" in refused.json()["error"]["message"]
        assert api("GET", f"/v1/executions/{from_cli}").json()["state"] == "INTERRUPTED"
        assert api("POST", "/v1/executions/no-such-execution/resume").status_code == 404

        assert _states(api, from_api)["say"] == "SUCCESS"
        resumed = api("POST", f"/v1/executions/{from_api}/resume")
        assert resumed.status_code == 202, resumed.text
        assert resumed.headers["Location"] == f"/v1/executions/{from_api}"
        body = finished(api, from_api)
        assert body["state"] == "SUCCESS", body
        assert body["output"]["greeting"] == "hello gui"
        assert set(_states(api, from_api).values()) == {"SUCCESS"}
        again = api("POST", f"/v1/executions/{from_api}/resume")  # unchanged, as Mistral's
        assert again.status_code == 200 and again.json()["state"] == "SUCCESS", again.text

        with chromium_page() as page:
            from playwright.sync_api import Page, expect

            assert isinstance(page, Page)
            shot = Shots(page, tmp_path / "screenshots", "resume")
            page.goto(api.url + "/")
            page.get_by_label("API token").fill(api.token)
            page.get_by_role("button", name="Log in").click()
            page.get_by_role("link", name="Executions").click()
            page.get_by_role("link", name=for_gui).click()
            expect(page.locator("#graph g.node")).to_have_count(2)
            expect(page.locator('#graph g.node[data-task="say"]')).to_have_attribute(
                "data-state", "SUCCESS")
            shot("interrupted")
            page.get_by_role("button", name="Resume").click()
            expect(page.locator('#graph g.node[data-task="repeat"]')).to_have_attribute(
                "data-state", "SUCCESS")
            expect(page.get_by_role("button", name="Resume")).to_have_count(0)
            shot("resumed")
        assert finished(api, for_gui)["state"] == "SUCCESS"
