"""The validation routes of the HTTP API run the same workflow, with real Ansible runs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.http.conftest import Api, finished, running_api
from tests.functional.validations.conftest import TEST_VALIDATIONS
from tripleo_flow.client.plans import sample_plan_dir

pytestmark = pytest.mark.functional


@pytest.fixture
def vapi(tmp_path: Path, validations_venv: Path) -> Iterator[Api]:
    with running_api(tmp_path, {"validations": {
            "venv": str(validations_venv),
            "validations_dirs": [str(TEST_VALIDATIONS)]}}) as api:
        yield api


def test_list_show_run_and_results_over_http(vapi: Api) -> None:
    listed = vapi("GET", "/v1/validations", params={"group": "no-op"})
    assert listed.status_code == 200 and [v["id"] for v in listed.json()] == ["no-op"]
    shown = vapi("GET", "/v1/validations/check-cpu").json()
    assert shown["parameters"] == {"minimal_cpu_count": 8} and "path" not in shown
    assert vapi("GET", "/v1/validations/ghost").status_code == 404

    vapi.client.plans.create("oc", sample_plan_dir())
    started = vapi("POST", "/v1/validations/run", json={
        "validations": ["no-op", "check-cpu"], "plan": "oc", "inventory": "localhost",
        "extra_vars": {"minimal_cpu_count": 100000}})
    assert started.status_code == 202, started.text
    assert started.json()["workflow"] == "tripleo.validations.run"
    done = finished(vapi, started.json()["id"], timeout=120)
    assert done["state"] == "SUCCESS", done
    statuses = {r["validation"]: r["status"] for r in done["output"]["results"]}
    assert statuses == {"no-op": "PASSED", "check-cpu": "FAILED"}

    results = vapi("GET", "/v1/validations/results", params={"plan": "oc"}).json()
    assert {r["validation"] for r in results} == {"no-op", "check-cpu"}
    failed = next(r for r in results if r["status"] == "FAILED")
    one = vapi("GET", f"/v1/validations/results/{failed['id']}", params={"plan": "oc"})
    assert one.status_code == 200 and "at least 100000" in one.json()["reasons"][0]["reason"]
    assert "PLAY RECAP" in one.json()["log"]
    assert vapi("GET", f"/v1/validations/results/{failed['id']}").status_code == 404


@pytest.mark.parametrize("body", [
    {"validations": ["no-op"], "inventory": "/etc/ansible/hosts"},
    {"validations": ["no-op"], "inventory": "localhost", "extra": 1},
    {"validations": "no-op"},
    {"validations": ["no-op"], "extra_vars": ["a=1"]},
    {"inventory": "localhost"},
])
def test_bad_run_requests_start_nothing(vapi: Api, body: dict) -> None:  # type: ignore[type-arg]
    before = len(vapi.client.executions.list())
    answer = vapi("POST", "/v1/validations/run", json=body)
    assert answer.status_code == 400, answer.text
    assert len(vapi.client.executions.list()) == before


def test_stop_over_http(vapi: Api) -> None:
    started = vapi("POST", "/v1/validations/run", json={
        "validations": ["slow-sleep"], "extra_vars": {"sleep_seconds": 2718}})
    assert started.status_code == 202, started.text
    execution = started.json()["id"]
    deadline = time.monotonic() + 60
    while True:
        tasks = vapi("GET", f"/v1/executions/{execution}/tasks").json()
        if any(t["name"] == "run_validations" and t["state"] == "RUNNING" for t in tasks):
            break
        assert time.monotonic() < deadline
        time.sleep(0.2)
    time.sleep(1.0)  # let ansible-playbook start
    stopped = vapi("POST", "/v1/validations/stop", json={"execution": execution})
    assert stopped.status_code == 200, stopped.text
    done = finished(vapi, execution)
    assert done["state"] == "ERROR" and "stopped" in done["error"]
    again = vapi("POST", "/v1/validations/stop", json={"execution": execution})
    assert again.status_code == 409
