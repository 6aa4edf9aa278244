"""Over HTTP, ``deploy`` takes the baremetal deployment file's text as an input."""

from __future__ import annotations

from pathlib import Path

from tests.functional.http.conftest import Api
from tests.functional.http.test_api import sse

EXAMPLE = (Path(__file__).resolve().parents[3] / "tripleo_flow" / "examples"
           / "baremetal-deployment.yaml")


def test_the_deployed_servers_task_runs_first_and_a_refusal_changes_nothing(api: Api) -> None:
    created = api("POST", "/v1/plans", params={"name": "bm", "sample": "true"})
    assert created.status_code == 201, created.text
    before = api("GET", "/v1/plans/bm/environments").json()
    started = api("POST", "/v1/workflows/deploy/executions", json={"input": {
        "plan": "bm", "work_dir": "bm", "baremetal_deployment": EXAMPLE.read_text()}})
    assert started.status_code == 202, started.text
    with api("GET", f"/v1/executions/{started.json()['id']}/events", stream=True) as response:
        messages = sse(response)
    tasks = {data["name"]: data for event, data in messages if event == "task"}
    # The sample plan's templates have no deployed-server ports: refused, by name,
    # before the deployment starts (no status change, no Heat).
    assert tasks["deployed_servers"]["state"] == "ERROR", tasks  # failed (as Mistral reads it)
    assert "start" not in tasks or tasks["start"]["state"] not in ("SUCCESS",), tasks
    final = messages[-1][1]
    assert final["state"] != "SUCCESS"
    assert "deployed-server/deployed-neutron-port.yaml" in str(final), final
    assert api("GET", "/v1/plans/bm/environments").json() == before
