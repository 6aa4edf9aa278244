"""A Heat an HTTP API user leaves running (``tripleo.heat.launch``) holds no port other
users need, and such Heats are limited (``[api] launched_heats_max``)."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path
from typing import Any

import requests

from tests.functional.http.conftest import Api, finished, running_api
from tripleo_flow.heat.workdir import HeatDir

LAUNCH = "/v1/workflows/tripleo.heat.launch/executions"
KILL = "/v1/workflows/tripleo.heat.kill/executions"


def _one_place(tmp_path: Path, heat_venv: Path) -> dict[str, dict[str, Any]]:
    """Options of a server where one Heat launched over HTTP may run on."""
    return {"heat": {"venv": str(heat_venv), "clouds_yaml": str(tmp_path / "clouds.yaml"),
                     "api_timeout": 180.0},
            "api": {"launched_heats_max": 1}}


def _run(api: Api, path: str, heat_dir: str) -> dict[str, Any]:
    started = api("POST", path, json={"input": {"heat_dir": heat_dir, "heat_type": "native"}})
    assert started.status_code == 202, started.text
    body = finished(api, started.json()["id"], timeout=300)
    assert body["state"] == "SUCCESS", body
    return body


def test_a_heat_left_running_over_http_blocks_nobody_and_is_limited(
        tmp_path: Path, heat_venv: Path) -> None:
    with running_api(tmp_path, _one_place(tmp_path, heat_venv)) as api:
        work = Path(api.client.data_dir) / "work"
        try:
            # An API user launches a Heat and leaves it running after the execution.
            left = _run(api, LAUNCH, "left")["output"]["endpoint"]["endpoint"]
            assert requests.get(left.rsplit("/v1/", 1)[0] + "/", timeout=10).status_code < 500

            # Another user's plan still gets its parameter schema (a Heat of its own).
            assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}) \
                .status_code == 201
            schema = requests.get(f"{api.url}/v1/plans/p/parameters/schema",
                                  headers={"X-Auth-Token": api.token}, timeout=300)
            assert schema.status_code == 200, schema.text
            assert schema.json()["parameters"]

            # A second Heat left running is refused at the start, naming the way out.
            refused = api("POST", LAUNCH, json={"input": {"heat_dir": "second"}})
            assert refused.status_code == 409, refused.text
            error = refused.json()["error"]
            assert "[api] launched_heats_max" in error["message"]
            assert "left" in error["message"]
            assert "POST /v1/workflows/tripleo.heat.kill/executions" in error["message"]
            assert not HeatDir(work / "second").run_file.exists()

            # Once the first is stopped, there is room again.
            _run(api, KILL, "left")
            _run(api, LAUNCH, "second")
        finally:
            for name in ("left", "second"):
                api.client.heat.kill(str(work / name))


def test_two_launches_started_at_once_take_the_last_place_once(
        tmp_path: Path, heat_venv: Path) -> None:
    """Both starts pass the check at the start (no Heat runs yet); the launch action
    counts again under a lock, so only one Heat is left running."""
    with running_api(tmp_path, _one_place(tmp_path, heat_venv)) as api:
        work = Path(api.client.data_dir) / "work"
        try:
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                started = list(pool.map(lambda name: api("POST", LAUNCH, json={"input": {
                    "heat_dir": name, "heat_type": "native"}}), ("one", "two")))
            assert [s.status_code for s in started] == [202, 202], [s.text for s in started]
            ended = [finished(api, s.json()["id"], timeout=300) for s in started]
            assert sorted(e["state"] for e in ended) == ["ERROR", "SUCCESS"], ended
            [refused] = [e for e in ended if e["state"] != "SUCCESS"]
            assert "[api] launched_heats_max" in refused["error"], refused["error"]
            running = [n for n in ("one", "two") if HeatDir(work / n).run_file.exists()]
            assert len(running) == 1, running
        finally:
            for name in ("one", "two"):
                api.client.heat.kill(str(work / name))


#: A user's own workflow that reaches the launch action (not the shipped workflow).
OWN_LAUNCH = """version: '2.0'
name: mine
workflows:
  up:
    input: [heat_dir]
    tasks:
      maybe:
        action: std.noop
        on-success: launch
      launch:
        action: heat.launch heat_dir=<% $.heat_dir %> heat_type='native'
"""


def test_another_workflow_reaching_the_launch_fails_naming_the_limit(
        tmp_path: Path, heat_venv: Path) -> None:
    """A workflow other than tripleo.heat.launch is started (its start cannot know
    whether a task of it will launch a Heat: a 4xx there would refuse workflows that
    never do); the launch action refuses at its turn: the execution ends in ERROR
    naming [api] launched_heats_max and the way out, and no Heat was started."""
    options = _one_place(tmp_path, heat_venv)
    options["api"]["launched_heats_max"] = 0
    workbook = tmp_path / "mine.yaml"
    workbook.write_text(OWN_LAUNCH)
    with running_api(tmp_path, options) as api:
        work = Path(api.client.data_dir) / "work"
        api.client.workbooks.create(workbook)
        # The shipped workflow is refused at its start ...
        refused = api("POST", LAUNCH, json={"input": {"heat_dir": "shipped"}})
        assert refused.status_code == 409, refused.text
        assert "[api] launched_heats_max = 0" in refused.json()["error"]["message"]
        # ... a workflow of the user's own reaching the action fails in it, as clearly.
        started = api("POST", "/v1/workflows/mine.up/executions",
                      json={"input": {"heat_dir": "own"}})
        assert started.status_code == 202, started.text
        try:
            body = finished(api, started.json()["id"], timeout=300)
            assert body["state"] == "ERROR", body
            assert "[api] launched_heats_max = 0" in body["error"], body["error"]
            assert not HeatDir(work / "own").run_file.exists()
            assert not HeatDir(work / "shipped").run_file.exists()
        finally:
            api.client.heat.kill(str(work / "own"))
