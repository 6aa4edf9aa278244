"""The HTTP API over real HTTP (waitress on 127.0.0.1): auth, plans, errors, workflows."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import requests

from tests.functional.http.conftest import Api
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import exceptions


def tarball(tree: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(tree.rglob("*")):
            if path.is_file():
                archive.add(path, arcname=str(path.relative_to(tree)))
    return buffer.getvalue()


def sse(response: requests.Response) -> list[tuple[str, dict[str, Any]]]:
    """The (event, data) messages of a text/event-stream response, read to its end."""
    messages, event = [], None
    for line in response.iter_lines(decode_unicode=True):
        if line.startswith("event: "):
            event = line[len("event: "):]
        elif line.startswith("data: "):
            messages.append((event or "message", json.loads(line[len("data: "):])))
    return messages


def test_requests_without_a_valid_token_get_401(api: Api) -> None:
    for headers in ({}, {"X-Auth-Token": "wrong"}):
        response = requests.get(api.url + "/v1/plans", headers=headers, timeout=30)
        assert response.status_code == 401
        assert response.json()["error"]["kind"] == "unauthorized"
        assert "X-Auth-Token" in response.json()["error"]["message"]
    assert requests.get(api.url + "/v1/openapi.json", timeout=30).status_code == 200


def test_errors_carry_the_message_in_the_apis_words_and_the_status_of_their_kind(
        api: Api) -> None:
    missing = api("GET", "/v1/plans/nope")
    assert missing.status_code == 404
    assert missing.json() == {"error": {
        "kind": "not-found",
        "message": "Plan 'nope' does not exist. Create it with: POST /v1/plans?name=nope",
        "hints": [{"command": "tripleo-flow plan create nope --templates DIR",
                   "request": "POST /v1/plans?name=nope"}]}}

    bad_name = api("POST", "/v1/plans", params={"name": "bad_name!", "sample": "true"})
    assert bad_name.status_code == 400
    assert bad_name.json()["error"] == {"kind": "invalid-input",
                                        "message": str(exceptions.InvalidPlanName("bad_name!"))}

    assert api("POST", "/v1/plans", params={"name": "one", "sample": "true"}).status_code == 201
    again = api("POST", "/v1/plans", params={"name": "one", "sample": "true"})
    assert again.status_code == 409
    error = exceptions.PlanExists("one")
    assert again.json()["error"] == {"kind": "conflict",
                                     "message": error.render(exceptions.API),
                                     "hints": [h.as_json() for h in error.hints]}
    assert "tripleo-flow" not in again.json()["error"]["message"]

    not_json = api("PUT", "/v1/plans/one/parameters", data=b"{",
                   headers={"Content-Type": "application/json"})
    assert not_json.status_code == 400 and not_json.json()["error"]["kind"] == "invalid-input"
    wrong_type = api("PUT", "/v1/plans/one/parameters", json={"parameters": [1]})
    assert wrong_type.status_code == 400
    assert "'parameters' must be of type dict" in wrong_type.json()["error"]["message"]
    assert api("GET", "/v1/no/such/route").json()["error"]["kind"] == "not-found"
    assert api("GET", "/v1/executions/none").status_code == 404
    assert api("POST", "/v1/workflows/nope/executions", json={}).status_code == 404


def test_plan_lifecycle(api: Api, tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "tree", basic_tree())
    created = api("POST", "/v1/plans", params={"name": "overcloud", "description": "mine"},
                  data=tarball(tree), headers={"Content-Type": "application/gzip"})
    assert created.status_code == 201, created.text
    assert created.headers["Location"].endswith("/v1/plans/overcloud")
    assert [p["name"] for p in api("GET", "/v1/plans").json()] == ["overcloud"]
    assert api("GET", "/v1/plans/overcloud").json()["description"] == "mine"

    names = api("GET", "/v1/plans/overcloud/passwords").json()
    assert names and all(isinstance(n, str) for n in names)
    # Secrets never leave the server: no password values, secret parameters masked.
    refused = api("GET", "/v1/plans/overcloud/passwords", params={"values": "true"})
    assert refused.status_code == 400 and "never served" in refused.json()["error"]["message"]
    password = api.client.passwords.get("overcloud")[names[0]]
    assert password not in refused.text

    changed = api("PUT", "/v1/plans/overcloud/parameters",
                  json={"parameters": {"ComputeCount": 3, "MySecretPassword": "hunter22",
                                       "ExtraConfig": {"url": f"mysql://root:{password}@db"}}})
    assert changed.json() == {"changed": ["ComputeCount", "ExtraConfig", "MySecretPassword"]}
    shown = api("GET", "/v1/plans/overcloud/parameters")
    assert shown.json() == {"ComputeCount": 3, "MySecretPassword": "<secret>",
                            "ExtraConfig": {"url": "<secret>"}}
    assert "hunter22" not in shown.text and password not in shown.text
    # A masked value sent back is refused, not stored as the password.
    masked = api("PUT", "/v1/plans/overcloud/parameters",
                 json={"parameters": {"MySecretPassword": "<secret>"}})
    assert masked.status_code == 400, masked.text
    assert api.client.parameters.get("overcloud")["MySecretPassword"] == "hunter22"
    assert api("POST", "/v1/plans/overcloud/parameters/reset",
               json={"names": ["MySecretPassword", "ExtraConfig"]}).status_code == 200
    assert api("GET", "/v1/plans/overcloud/parameters").json() == {"ComputeCount": 3}
    history = api("GET", "/v1/plans/overcloud/history").json()
    assert len(history) >= 2
    assert api("POST", "/v1/plans/overcloud/parameters/reset",
               json={"names": ["ComputeCount"]}).json() == {"reset": ["ComputeCount"]}
    assert api("GET", "/v1/plans/overcloud/parameters").json() == {}

    roles = api("GET", "/v1/plans/overcloud/roles").json()
    assert roles and isinstance(roles, list)
    assert isinstance(api("GET", "/v1/plans/overcloud/networks").json(), list)
    capabilities = api("GET", "/v1/plans/overcloud/capabilities")
    assert capabilities.status_code == 200 and isinstance(capabilities.json(), dict)

    export = api("GET", "/v1/plans/overcloud/export")
    assert export.headers["Content-Type"] == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(export.content), mode="r:gz") as archive:
        assert "plan-environment.yaml" in archive.getnames()

    updated = api("PUT", "/v1/plans/overcloud", data=tarball(tree),
                  headers={"Content-Type": "application/gzip"})
    assert updated.status_code == 200 and updated.json()["name"] == "overcloud"

    assert api("GET", "/v1/plans/overcloud/deployment").json()["deployment_status"] == "NONE"
    assert api("GET", "/v1/plans/overcloud/deployment/failures").json() == []
    assert api("DELETE", "/v1/plans/overcloud").status_code == 204
    assert api("GET", "/v1/plans").json() == []


def test_idempotency_key_makes_a_retried_start_return_the_same_execution(api: Api) -> None:
    assert api("POST", "/v1/plans", params={"name": "p1", "sample": "true"}).status_code == 201
    body = {"input": {"plan": "p1", "parameters": {"ComputeCount": 2}}}
    key = {"Idempotency-Key": "start-1"}
    first = api("POST", "/v1/workflows/update_parameters/executions", json=body, headers=key)
    retry = api("POST", "/v1/workflows/update_parameters/executions", json=body, headers=key)
    assert first.status_code == retry.status_code == 202
    assert first.json()["id"] == retry.json()["id"]
    other = api("POST", "/v1/workflows/update_parameters/executions",
                json={"input": {"plan": "p1", "parameters": {"ComputeCount": 5}}}, headers=key)
    assert other.status_code == 409
    fresh = api("POST", "/v1/workflows/update_parameters/executions", json=body)
    assert fresh.status_code == 202 and fresh.json()["id"] != first.json()["id"]
    _wait_ended(api, fresh.json()["id"])
    _wait_ended(api, first.json()["id"])
    # (creating the plan p1 is an execution too, of another workflow)
    ids = [e["id"] for e in api("GET", "/v1/executions",
                                params={"workflow": "update_parameters"}).json()]
    assert sorted(ids) == sorted({first.json()["id"], fresh.json()["id"]})


def test_a_start_with_bad_inputs_is_refused_before_it_runs(api: Api) -> None:
    response = api("POST", "/v1/workflows/update_parameters/executions",
                   json={"input": {"parameters": {}}})
    assert response.status_code == 400
    assert "plan" in response.json()["error"]["message"]
    assert api("GET", "/v1/executions").json() == []


def _wait_ended(api: Api, execution_id: str) -> dict[str, Any]:
    with api("GET", f"/v1/executions/{execution_id}/events", stream=True) as response:
        messages = sse(response)
    assert messages[-1][0] == "execution"
    return messages[-1][1]


def test_the_gui_journey(api: Api, tmp_path: Path) -> None:
    """Upload a plan tarball, create the plan by workflow, set parameters by workflow,
    follow each run's events to the end and read the status."""
    tree = write_tree(tmp_path / "tree", basic_tree())
    upload = api("POST", "/v1/uploads", data=tarball(tree),
                 headers={"Content-Type": "application/gzip"})
    assert upload.status_code == 201
    started = api("POST", "/v1/workflows/create_deployment_plan/executions",
                  json={"input": {"plan": "gui", "templates": upload.json()["path"]}})
    assert started.status_code == 202
    execution_id = started.json()["id"]
    assert started.headers["Location"].endswith(f"/v1/executions/{execution_id}")

    with api("GET", f"/v1/executions/{execution_id}/events", stream=True) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        messages = sse(response)
    tasks = [(data["name"], data["state"]) for event, data in messages if event == "task"]
    assert ("generate_passwords", "SUCCESS") in tasks
    assert messages[-1][0] == "execution" and messages[-1][1]["state"] == "SUCCESS"
    assert api("DELETE", f"/v1/uploads/{upload.json()['id']}").status_code == 204

    started = api("POST", "/v1/workflows/update_parameters/executions",
                  json={"input": {"plan": "gui", "parameters": {"ControllerCount": 3}}})
    final = _wait_ended(api, started.json()["id"])
    assert final["state"] == "SUCCESS"
    assert api("GET", "/v1/plans/gui/parameters").json() == {"ControllerCount": 3}
    shown = api("GET", f"/v1/executions/{started.json()['id']}").json()
    assert shown["workflow"].endswith("update_parameters") and shown["finished_at"]
    tasks_list = api("GET", f"/v1/executions/{started.json()['id']}/tasks").json()
    assert tasks_list and all(t["state"] == "SUCCESS" for t in tasks_list)
    status = api("GET", "/v1/plans/gui/deployment").json()
    assert status["plan"] == "gui" and status["deployment_status"] == "NONE"


def test_a_failed_workflow_streams_its_failure(api: Api, tmp_path: Path) -> None:
    bad = write_tree(tmp_path / "bad", basic_tree() | {"broken.j2.yaml": "{% for %}\n"})
    upload = api("POST", "/v1/uploads", data=tarball(bad),
                 headers={"Content-Type": "application/gzip"}).json()
    started = api("POST", "/v1/workflows/create_deployment_plan/executions",
                  json={"input": {"plan": "bad", "templates": upload["path"]}}).json()
    final = _wait_ended(api, started["id"])
    assert final["state"] == "ERROR" and final["failed_task"] == "process_templates"
    assert api("GET", "/v1/plans/bad").status_code == 404


def test_workflows_are_listed_with_their_inputs(api: Api) -> None:
    workflows = {w["name"]: w for w in api("GET", "/v1/workflows").json()}
    create = next(w for n, w in workflows.items() if n.endswith("create_deployment_plan"))
    assert [i["name"] for i in create["inputs"]] == ["plan", "templates", "description",
                                                      "data_files", "user_environments"]


def test_openapi_names_every_route(api: Api) -> None:
    from tripleo_flow.http import ROUTES

    document = requests.get(api.url + "/v1/openapi.json", timeout=30).json()
    assert set(document["paths"]) == {r.path for r in ROUTES}
    public = {r.path for r in ROUTES if all(op.public for op in r.operations.values())}
    assert public == {"/v1/openapi.json", "/v1/auth", "/v1/auth/tokens"}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert operation["responses"], (path, method)
            if path not in public or path == "/v1/auth/tokens":  # (a refused login: 401)
                assert "401" in operation["responses"], (path, method)


def test_a_workflow_started_with_an_env_reads_it(api: Api) -> None:
    from tests.engine_helpers import WORKBOOKS
    from tests.functional.http.conftest import finished

    api.client.workbooks.create(WORKBOOKS / "good" / "std_only.yaml")
    started = api("POST", "/v1/workflows/std_only.greet/executions", json={
        "input": {"who": "api", "times": 0}, "env": {"salutation": "hey"}})
    assert started.status_code == 202, started.text
    assert started.json()["env"] == {"salutation": "hey"}
    body = finished(api, started.json()["id"])
    assert body["state"] == "SUCCESS" and body["output"]["greeting"] == "hey api"
    assert body["env"] == {"salutation": "hey"}
    for bad in ([1], "salutation=hey"):
        refused = api("POST", "/v1/workflows/std_only.greet/executions",
                      json={"input": {"who": "api"}, "env": bad})
        assert refused.status_code == 400, refused.text
        assert "'env' must be of type dict" in refused.json()["error"]["message"]
    deep: dict[str, Any] = {}
    for _ in range(200):
        deep = {"d": deep}
    refused = api("POST", "/v1/workflows/std_only.greet/executions",
                  json={"input": {"who": "api"}, "env": deep})
    assert refused.status_code == 400, refused.text


def test_a_workflow_started_with_evaluate_env_false_reads_its_env_as_given(api: Api) -> None:
    """Mistral's evaluate_env start parameter, in the start request's body."""
    from tests.engine_helpers import WORKBOOKS
    from tests.functional.http.conftest import finished

    api.client.workbooks.create(WORKBOOKS / "good" / "std_only.yaml")
    env = {"salutation": "<% env().word %>", "word": "yo"}
    for evaluate, greeting in ((True, "yo api"), (False, "<% env().word %> api")):
        started = api("POST", "/v1/workflows/std_only.greet/executions", json={
            "input": {"who": "api", "times": 0}, "env": env, "evaluate_env": evaluate})
        assert started.status_code == 202, started.text
        body = finished(api, started.json()["id"])
        assert body["state"] == "SUCCESS" and body["output"]["greeting"] == greeting
    refused = api("POST", "/v1/workflows/std_only.greet/executions",
                  json={"input": {"who": "api"}, "env": env, "evaluate_env": "no"})
    assert refused.status_code == 400, refused.text
    assert "'evaluate_env' must be of type bool" in refused.json()["error"]["message"]


def test_a_failed_executions_error_is_in_the_apis_words(api: Api) -> None:
    from tests.functional.http.conftest import finished

    started = api("POST", "/v1/workflows/tripleo.parameters.update_parameters/executions",
                  json={"input": {"plan": "ghost", "parameters": {"A": 1}}})
    assert started.status_code == 202, started.text
    body = finished(api, started.json()["id"])
    assert body["state"] == "ERROR" and body["failed_task"] == "update_parameters"
    assert body["error"] == "Plan 'ghost' does not exist. Create it with: POST /v1/plans?name=ghost"
    assert body["hints"] == [{"command": "tripleo-flow plan create ghost --templates DIR",
                              "request": "POST /v1/plans?name=ghost"}]
    assert "error_api" not in body
    [listed] = [e for e in api("GET", "/v1/executions").json() if e["id"] == body["id"]]
    assert listed["error"] == body["error"]
    # The CLI and Python callers read the CLI's words.
    record = api.client.executions.get(body["id"])
    assert record.error == str(exceptions.PlanNotFound("ghost"))
    ok = api("POST", "/v1/workflows/tripleo.parameters.update_parameters/executions",
             json={"input": {"plan": "ghost2", "parameters": {}}})
    assert finished(api, ok.json()["id"])["hints"] == [
        {"command": "tripleo-flow plan create ghost2 --templates DIR",
         "request": "POST /v1/plans?name=ghost2"}]
