"""``POST /v1/action_executions`` over a real server: an allowed action runs as an
execution of its own (recorded as ``action:NAME``, read back at
``/v1/executions/{id}``), every refusal is a 400 before anything is recorded, and the
shipped one-action workflows keep their names, inputs and outputs over
``/v1/workflows/{name}/executions``."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.functional.http.conftest import Api, finished, running_api

START = "/v1/action_executions"


def _executions(api: Api) -> list[str]:
    return [e["id"] for e in api("GET", "/v1/executions").json()]


def test_an_allowed_action_runs_as_an_execution_and_is_read_back(api: Api) -> None:
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    started = api("POST", START, json={"name": "plan.export",
                                       "input": {"plan": "p", "output": "p.tar.gz"},
                                       "params": {"run_sync": False, "save_result": True}})
    assert started.status_code == 202, started.text
    body = started.json()
    assert started.headers["Location"] == f"/v1/executions/{body['id']}"
    assert body["workflow"] == "action:plan.export"
    done = finished(api, body["id"])
    assert done["state"] == "SUCCESS" and set(done["output"]) == {"result"}
    listed = api("GET", "/v1/executions?workflow=action:plan.export").json()
    assert [e["id"] for e in listed] == [body["id"]]
    [task] = api("GET", f"/v1/executions/{body['id']}/tasks").json()
    assert (task["name"], task["state"]) == ("plan.export", "SUCCESS")
    archive = api("GET", body["downloads"]["output"])
    assert archive.status_code == 200
    with tarfile.open(fileobj=io.BytesIO(archive.content)) as opened:
        assert "plan-environment.yaml" in opened.getnames()
    # A retried start with the same Idempotency-Key answers the same execution.
    key = {"Idempotency-Key": "render-p-1"}
    first = api("POST", START, json={"name": "templates.process", "input": {"plan": "p"}},
                headers=key)
    again = api("POST", START, json={"name": "templates.process", "input": {"plan": "p"}},
                headers=key)
    assert first.status_code == again.status_code == 202, first.text
    assert first.json()["id"] == again.json()["id"]
    assert finished(api, first.json()["id"])["state"] == "SUCCESS"


@pytest.mark.parametrize(("request_body", "words"), [
    ({"name": "plan.create", "input": {"plan": "x", "templates": "/etc"}},
     "'plan.create' may not be run as an action execution over the HTTP API"),
    ({"name": "std.echo", "input": {"output": "hello"}}, "never std.* actions"),
    ({"name": "no.such.action"}, "'no.such.action' may not be run"),
    ({"name": "plan.delete", "input": {"plan": "p", "purge": True}},
     "has no input 'purge'; its inputs are: force, plan"),
    ({"name": "plan.restore", "input": {"plan": "p"}}, "needs input 'version'"),
    ({"name": "plan.export", "input": {"plan": "p", "output": "/tmp/stolen.tar.gz"}},
     "must be a plain file name"),
    ({"name": "plan.export", "input": {"plan": "p", "output": "p.tar.gz", "secrets": True}},
     "must be false"),
    ({"name": "heat.launch", "input": {"heat_dir": "/etc"}}, "must be a plain name"),
    # the body's own schema
    ({"input": {"plan": "p"}}, "name"),
    ({"name": "templates.process", "params": {"run_sync": True}}, "run_sync"),
    ({"name": "templates.process", "input": {"plan": "p"}, "workflow": "x"}, "workflow"),
])
def test_a_refused_action_execution_starts_nothing(api: Api, request_body: dict[str, Any],
                                                    words: str) -> None:
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    before = _executions(api)
    response = api("POST", START, json=request_body)
    assert response.status_code == 400, response.text
    assert words in response.json()["error"]["message"], response.text
    assert _executions(api) == before
    assert not (api.client._session.data_dir / "downloads").exists()


def test_the_one_action_workflows_keep_their_names_inputs_and_outputs(api: Api) -> None:
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    listed = {w["name"]: w for w in api("GET", "/v1/workflows").json()}
    assert [i["name"] for i in listed["tripleo.heat.launch"]["inputs"]] == [
        "heat_dir", "heat_type", "restore_db"]
    assert listed["tripleo.plan.render_deployment_plan"]["workbook"] == "tripleo.plan"
    started = api("POST", "/v1/workflows/tripleo.plan.render_deployment_plan/executions",
                  json={"input": {"plan": "p"}})
    assert started.status_code == 202, started.text
    done = finished(api, started.json()["id"])
    assert done["workflow"] == "tripleo.plan.render_deployment_plan"
    assert done["state"] == "SUCCESS" and set(done["output"]) == {"rendered", "written",
                                                                   "removed"}
    refused = api("POST", "/v1/workflows/tripleo.heat.launch/executions",
                  json={"input": {"heat_dir": "/etc"}})
    assert refused.status_code == 400 and "must be a plain name" in refused.text
    workbook = api("GET", "/v1/workbooks/tripleo.heat").json()
    assert workbook["shipped"] and "action: heat.launch" in workbook["definition"]


def test_the_openapi_document_declares_the_route_and_its_body(api: Api) -> None:
    document = api("GET", "/v1/openapi.json").json()
    post = document["paths"]["/v1/action_executions"]["post"]
    schema = post["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["name"] and "202" in post["responses"]


def test_a_one_action_workflow_runs_only_while_its_action_is_allowed(tmp_path: Path) -> None:
    with running_api(tmp_path, {"api": {"action_executions_allowed": ["plan.delete"]}}) as api:
        assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
        refused = api("POST", "/v1/workflows/tripleo.plan.render_deployment_plan/executions",
                      json={"input": {"plan": "p"}})
        assert refused.status_code == 400, refused.text
        assert "'templates.process' may not be run" in refused.json()["error"]["message"]
        assert _executions(api) == [e["id"] for e in api("GET", "/v1/executions").json()
                                    if e["workflow"] == "tripleo.plan.create_deployment_plan"]
        deleted = api("POST", START, json={"name": "plan.delete", "input": {"plan": "p"}})
        assert deleted.status_code == 202, deleted.text
        assert finished(api, deleted.json()["id"])["output"] == {"result": "p"}
