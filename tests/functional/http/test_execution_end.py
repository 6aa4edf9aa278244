"""Over the HTTP API, an execution that reads SUCCESS has its output (Mistral's
workflow execution gets its state and output in one update): a client polling
``GET /v1/executions/{id}`` right after completing the action its task waited for saw
SUCCESS with a null output in 2 of 25 runs before (the flow's end and the execution's
record were two writes, and readers took the first for the end)."""

from __future__ import annotations

import time

import pytest

from tests.functional.http.conftest import Api
from tests.functional.http.test_gui_operations import WORKBOOK, _started, _waiting

pytestmark = pytest.mark.functional

RUNS = 25


def test_an_execution_read_ended_has_its_output(api: Api) -> None:
    made = api("POST", "/v1/workbooks", json={"definition": WORKBOOK,
                                              "filename": "approvals.yaml"})
    assert made.status_code == 201, made.text
    seen = []
    for run in range(RUNS):
        execution = _started(api, "approve")
        _waiting(api, execution, 1)
        done = api("POST", f"/v1/executions/{execution}/tasks/ask/complete",
                   json={"state": "SUCCESS", "output": {"run": run}})
        assert done.status_code == 200, done.text
        deadline = time.monotonic() + 60
        while (record := api("GET", f"/v1/executions/{execution}").json())["state"] \
                == "RUNNING":
            assert time.monotonic() < deadline, f"{execution} still RUNNING"
            time.sleep(0.002)
        seen.append((record["state"], record["output"]))
    assert seen == [("SUCCESS", {"answer": {"run": run}}) for run in range(RUNS)]
