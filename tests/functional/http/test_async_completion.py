"""Completing an asynchronous action over HTTP (``POST /v1/executions/{id}/tasks/{task}/
complete``), as Mistral's ``PUT /v2/action_executions/<id>``, on the real server: the
waiting task is listed RUNNING with its id and the action execution it waits for;
hostile bodies are refused (400, 413) and change nothing; unknown ids are 404, a task
that does not wait 409; the output is masked as every record; the workflow goes on
with the output, or runs on-error with an ERROR; a server stopped while a task waits
leaves the execution completable by the next one."""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path
from typing import Any

from tests.functional.http.conftest import Api, finished, running_api

WORKBOOK = """\
version: '2.0'
name: approvals
workflows:
  wf:
    output:
      answer: <% $.answer %>
    tasks:
      approve:
        action: std.async_noop
        timeout: 600
        publish:
          answer: <% task().result %>
        publish-on-error:
          answer: <% task().result %>
        on-success: [deploy]
        on-error: [rejected]
      deploy:
        action: std.echo output=<% $.answer.ok %>
      rejected:
        action: std.echo output="rejected"
"""


def _start(api: Api) -> str:
    started = api("POST", "/v1/workflows/approvals.wf/executions", json={})
    assert started.status_code == 202, started.text
    return str(started.json()["id"])


def _waiting(api: Api, execution_id: str, task: str = "approve") -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        tasks = api("GET", f"/v1/executions/{execution_id}/tasks").json()
        found = [t for t in tasks if t["name"] == task and t["waiting"]]
        if found:
            return dict(found[0])
        time.sleep(0.1)
    raise AssertionError(f"{task} of {execution_id} does not wait")


def _complete(api: Api, execution_id: str, task: str, **kwargs: Any) -> Any:
    return api("POST", f"/v1/executions/{execution_id}/tasks/"
               f"{urllib.parse.quote(task, safe='')}/complete", **kwargs)


def test_complete_over_http(tmp_path: Path) -> None:
    workbook = tmp_path / "approvals.yaml"
    workbook.write_text(WORKBOOK)
    with running_api(tmp_path, {"api": {"max_json_size": 4096}}) as api:
        api.client.workbooks.create(workbook)
        execution_id = _start(api)
        task = _waiting(api, execution_id)
        assert task["state"] == "RUNNING" and task["id"]
        (action,) = task["waiting"]
        assert action["attempt"] == 1 and action["item"] is None and action["deadline"]
        assert api("GET", f"/v1/executions/{execution_id}").json()["state"] == "RUNNING"

        hostile: list[tuple[Any, int]] = [
            ({"data": b"not json", "headers": {"Content-Type": "application/json"}}, 400),
            ({"json": ["SUCCESS"]}, 400),
            ({"json": {}}, 400),
            ({"json": {"state": "DONE"}}, 400),
            ({"json": {"state": "CANCELLED"}}, 400),
            ({"json": {"state": "SUCCESS", "bogus": 1}}, 400),
            ({"json": {"state": "SUCCESS", "item": "0"}}, 400),
            ({"json": {"state": "SUCCESS", "item": True}}, 400),
            ({"json": {"state": "SUCCESS", "item": -1}}, 400),
            ({"data": b'{"state": "SUCCESS", "output": ' + b"[" * 150 + b"]" * 150 + b"}",
              "headers": {"Content-Type": "application/json"}}, 400),
            ({"json": {"state": "SUCCESS", "output": "x" * 5000}}, 413),
        ]
        for kwargs, status in hostile:
            answer = _complete(api, execution_id, "approve", **kwargs)
            assert answer.status_code == status, (kwargs.get("json"), answer.text)
            assert "error" in answer.json()
        assert _complete(api, "no-such-execution", "approve",
                         json={"state": "SUCCESS"}).status_code == 404
        unknown = _complete(api, execution_id, "nope", json={"state": "SUCCESS"})
        assert unknown.status_code == 404 and "has no task execution" in unknown.text
        assert _complete(api, execution_id, "approve", json={
            "state": "SUCCESS", "item": 3}).status_code == 404
        assert _waiting(api, execution_id)["waiting"] == [action]  # nothing changed

        done = _complete(api, execution_id, task["id"], json={
            "state": "SUCCESS", "output": {"ok": True, "db_password": "s3cr3t-value"}})
        assert done.status_code == 200, done.text
        body = done.json()
        assert body["id"] == action["id"] and body["state"] == "SUCCESS"
        assert body["output"] == {"ok": True, "db_password": "<secret>"}
        ended = finished(api, execution_id)
        assert ended["state"] == "SUCCESS", ended
        assert ended["output"] == {"answer": {"ok": True, "db_password": "<secret>"}}
        tasks = api("GET", f"/v1/executions/{execution_id}/tasks").json()
        assert [t["name"] for t in tasks] == ["approve", "deploy"]
        assert "s3cr3t-value" not in str(tasks)
        again = _complete(api, execution_id, "approve", json={"state": "SUCCESS"})
        assert again.status_code == 409 and "does not wait" in again.text
        not_async = _complete(api, execution_id, "deploy", json={"state": "SUCCESS"})
        assert not_async.status_code == 409, not_async.text

        rejected = _start(api)
        _waiting(api, rejected)
        answer = _complete(api, rejected, "approve", json={"state": "ERROR",
                                                           "output": "not today"})
        assert answer.status_code == 200, answer.text
        ended = finished(api, rejected)
        assert ended["state"] == "SUCCESS" and ended["output"] == {"answer": "not today"}
        states = {t["name"]: t["state"] for t in
                  api("GET", f"/v1/executions/{rejected}/tasks").json()}
        assert states == {"approve": "ERROR", "rejected": "SUCCESS"}

        spec = api("GET", "/v1/openapi.json").json()
        assert "/v1/executions/{execution_id}/tasks/{task}/complete" in spec["paths"]


def test_a_server_stopped_while_a_task_waits(tmp_path: Path) -> None:
    """The server stops (its waiting execution is suspended, not waited for); the next
    server completes the task, which resumes the execution to its end."""
    workbook = tmp_path / "approvals.yaml"
    workbook.write_text(WORKBOOK)
    with running_api(tmp_path) as api:
        api.client.workbooks.create(workbook)
        execution_id = _start(api)
        _waiting(api, execution_id)
    with running_api(tmp_path) as api:
        assert api("GET", f"/v1/executions/{execution_id}").json()["state"] == "SUSPENDED"
        assert _waiting(api, execution_id)["state"] == "RUNNING"
        answer = _complete(api, execution_id, "approve", json={"state": "SUCCESS",
                                                               "output": {"ok": "later"}})
        assert answer.status_code == 200, answer.text
        ended = finished(api, execution_id)
        assert ended["state"] == "SUCCESS" and ended["output"] == {"answer": {"ok": "later"}}
