"""The GUI deploys: plan from the sample, parameters set, ``deploy`` started by name,
its events followed to the end, the deployment status read — on a real native heat-all."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.functional.heat.conftest import DEFAULT_VENV
from tests.functional.http.conftest import Api
from tests.functional.http.test_api import sse
from tests.functional.mariadb import free_port


def test_the_gui_deploys_the_sample_plan(api: Api, tmp_path: Path) -> None:
    venv = Path(os.environ.get("TRIPLEO_FLOW_HEAT_VENV", DEFAULT_VENV))
    if not (venv / "bin" / "heat-all").exists():
        pytest.fail(f"No Heat virtualenv at {venv}: run tools/setup-heat.sh")
    api.client.conf.set_override("venv", str(venv), group="heat")
    # A port of its own: Heat's default one may be held by another Heat on this machine.
    api.client.conf.set_override("api_port", free_port(), group="heat")

    created = api("POST", "/v1/plans", params={"name": "gui", "sample": "true"})
    assert created.status_code == 201, created.text
    changed = api("PUT", "/v1/plans/gui/parameters", json={"parameters": {"ComputeCount": 2}})
    assert changed.status_code == 200, changed.text

    # Over HTTP a work directory is a plain name in the server's own work area.
    started = api("POST", "/v1/workflows/deploy/executions",
                  json={"input": {"plan": "gui", "heat_type": "native", "work_dir": "gui"}})
    assert started.status_code == 202, started.text
    with api("GET", f"/v1/executions/{started.json()['id']}/events", stream=True) as response:
        messages = sse(response)
    tasks = [(data["name"], data["state"]) for event, data in messages if event == "task"]
    assert any(state == "SUCCESS" for _, state in tasks), tasks
    # While the stack is created the GUI sees its resources complete of total.
    stack = [data["progress"] for event, data in messages
             if event == "task" and data["name"] == "deploy_stack" and data["progress"]]
    assert stack and all(p["stage"] == "stack" for p in stack), messages
    assert [p["done"] for p in stack] == sorted(p["done"] for p in stack)
    assert stack[-1]["total"] > 0 and stack[-1]["status"].startswith("CREATE_")
    assert messages[-1][0] == "execution" and messages[-1][1]["state"] == "SUCCESS", messages[-1]

    status = api("GET", "/v1/plans/gui/deployment").json()
    assert status["deployment_status"] == "DEPLOY_SUCCESS", status
    # Answers name the deployment, not where the server keeps it.
    work = Path(api.client.data_dir) / "work" / "gui"
    assert status["work_dir"] == "<data>/work/gui"
    execution = api("GET", f"/v1/executions/{started.json()['id']}").text
    tasks_text = api("GET", f"/v1/executions/{started.json()['id']}/tasks").text
    for answer in (execution, tasks_text, json.dumps(messages)):
        assert str(api.client.data_dir) not in answer and "<data>/work/gui" in answer
    inventory = (work / "config-download" / "tripleo-ansible-inventory.yaml").read_text()
    assert inventory.count("novacompute-") >= 2  # the two computes set through the API
    assert api("GET", "/v1/plans/gui/deployment/failures").json() == []
