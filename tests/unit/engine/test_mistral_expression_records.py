"""Conformance with Mistral (issue 26): what ``task()`` and ``execution()`` give, and
how a failed execution names its failed tasks.

Each test runs, on the real engine, the workflow of the Mistral test its docstring
names (mistral/tests/unit/engine/test_yaql_functions.py ...) and asserts what that
test asserts; where ours differs, the docstring says so.  ``std.mistral_http``'s
headers are checked against a real local HTTP server.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_conformance import Run
from tripleo_flow import exceptions
from tripleo_flow.actions import std_remote
from tripleo_flow.actions.base import Rerun


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", {**ACTIONS, "std.mistral_http": std_remote.MistralHttp})
    yield host
    host._session.close_workflows()


def _task_ids(host: Host) -> dict[str, str]:
    """Task name -> the id of its task execution (its atom detail), as stored."""
    execution = host.executions.list()[-1]
    fd = host._session.runner().store.flow_detail(execution.id)
    return {ad.name: ad.uuid for ad in fd}


def test_task_function(host: Host, tmp_path: Path) -> None:
    """Ported from test_yaql_functions.py: test_task_function (spec, state_info)."""
    run = Run(host, tmp_path, """
        wf:
          type: direct
          tasks:
            task1:
              description: This is task 1
              tags: ['t1']
              action: std.echo output=1
              publish:
                name: <% task(task1).name %>
                description: <% task(task1).spec.description %>
                tags: <% task(task1).spec.tags %>
                state: <% task(task1).state %>
                state_info: <% task(task1).state_info %>
                res: <% task(task1).result %>
              on-success:
                - task2
            task2:
              action: std.echo output=<% task(task1).result + 1 %>
              publish:
                name: <% task(task1).name %>
                description: <% task(task1).spec.description %>
                tags: <% task(task1).spec.tags %>
                state: <% task(task1).state %>
                state_info: <% task(task1).state_info %>
                res: <% task(task1).result %>
                task2_res: <% task(task2).result %>
        """)
    assert run.state == "SUCCESS", run.error
    first = {"name": "task1", "description": "This is task 1", "tags": ["t1"],
             "state": "SUCCESS", "state_info": None, "res": 1}
    assert run.published["task1"] == first
    assert run.published["task2"] == {**first, "task2_res": 2}


def test_task_function_no_arguments(host: Host, tmp_path: Path) -> None:
    """Ported from test_yaql_functions.py: test_task_function_no_arguments (the id is
    the task execution's)."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.echo output=1
              publish:
                task1_id: <% task().id %>
                task1_result: <% task().result %>
                task1_state: <% task().state %>
              on-success: task2
            task2:
              action: std.echo output=2
              publish:
                task2_id: <% task().id %>
                task2_result: <% task().result %>
                task2_state: <% task().state %>
        """)
    assert run.state == "SUCCESS", run.error
    ids = _task_ids(host)
    assert run.published["task1"] == {"task1_id": ids["task1"], "task1_result": 1,
                                      "task1_state": "SUCCESS"}
    assert run.published["task2"] == {"task2_id": ids["task2"], "task2_result": 2,
                                      "task2_state": "SUCCESS"}
    assert ids["task1"] != ids["task2"]


@pytest.mark.parametrize("loop", [False, True])
def test_task_function_in_the_output(host: Host, tmp_path: Path, loop: bool) -> None:
    """Ported from test_yaql_functions.py: test_task_function_returns_null (a task
    that did not run is null in the output); ``loop`` runs it on the state machine."""
    run = Run(host, tmp_path, """
        wf:
          output:
            task1: <% task(task1).result %>
            task1_id: <% task(task1).id %>
            task2: <% task(task2) %>
            task2bool: <% task(task2) = null %>
          tasks:
            task0:
              action: std.noop
              on-success: [task1]
            task1:
              action: std.echo output=7
              on-success:
                - task2: <% false %>
            task2:
              action: std.noop
              on-success: {back}
        """.format(back="[task1]" if loop else "[]"))
    assert run.state == "SUCCESS", run.error
    assert run.output == {"task1": 7, "task1_id": _task_ids(host)["task1"],
                          "task2": None, "task2bool": True}


def test_task_function_non_existing(host: Host, tmp_path: Path) -> None:
    """Ported from test_yaql_functions.py: test_task_function_non_existing (the
    workflow fails, naming the task)."""
    run = Run(host, tmp_path, """
        wf:
          type: direct
          output:
            task_name: <% task(non_existing_task).name %>
          tasks:
            task1:
              action: std.noop
        """)
    assert run.state == "ERROR" and "non_existing_task" in str(run.error)


def test_execution_function(host: Host, tmp_path: Path) -> None:
    """Ported from test_yaql_functions.py: test_execution_function.  Ours has no
    start params but the environment: ``params`` is ``{"env": ...}`` when one is
    given, else ``{}`` (Mistral: the start params and ``namespace``)."""
    run = Run(host, tmp_path, """
        wf:
          input:
            - k1
            - k2: v2_default
          tasks:
            task1:
              action: std.echo output=<% execution() %>
              publish:
                result: <% task(task1).result %>
        """, k1="v1")
    assert run.state == "SUCCESS", run.error
    execution = run.published["task1"]["result"]
    spec = execution["spec"]
    assert spec["version"] == "2.0" and spec["name"] == "wf" and len(spec["tasks"]) == 1
    assert execution["input"] == {"k1": "v1", "k2": "v2_default"}
    assert execution["params"] == {}
    record = host.executions.list()[-1]
    assert execution["id"] == record.id
    assert execution["created_at"] is not None and record.created_at is not None
    assert execution["created_at"] == time.strftime("%Y-%m-%d %H:%M:%S",
                                                    time.gmtime(record.created_at))


def test_an_execution_error_names_each_failed_task(host: Host, tmp_path: Path) -> None:
    """Mistral's workflow state info lists every task that failed unhandled ("Failure
    caused by error in tasks: task1, task2", mistral/workflow/... error handling).
    Both fail with only an 'on-complete' (which runs first), so both are unhandled;
    ours names them in the error of the execution."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.fail
              on-complete: [task3]
            task2:
              action: std.fail
              on-complete: [task3]
            task3:
              action: std.noop
        """)
    assert run.state == "ERROR" and run.error is not None
    message = str(run.error)
    assert "tasks 'task1', 'task2' failed" in message or \
        "tasks 'task2', 'task1' failed" in message, message


class _Recorder(BaseHTTPRequestHandler):
    headers_seen: list[dict[str, str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        type(self).headers_seen.append(dict(self.headers))
        body = json.dumps({"ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[str]:
    _Recorder.headers_seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    # shutdown() waits for serve_forever's next look (every 0.5 s by default)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


MISTRAL_HTTP = """
    wf:
      input:
        - url
      tasks:
        call:
          action: std.mistral_http
          input:
            url: <% $.url %>
            headers:
              X-Mine: kept
          publish:
            status: <% task().result.status %>
    """


def test_mistral_http_sends_the_execution_headers(host: Host, tmp_path: Path,
                                                  server: str) -> None:
    """Mistral's std.mistral_http (MistralHTTPAction): std.http plus the execution's
    headers.  Ours completes with the response (Mistral's waits for a callback)."""
    run = Run(host, tmp_path, MISTRAL_HTTP, url=server)
    assert run.state == "SUCCESS", run.error
    assert run.published["call"] == {"status": 200}
    [seen] = _Recorder.headers_seen
    record = host.executions.list()[-1]
    task_id = _task_ids(host)["call"]
    assert seen["X-Mine"] == "kept"
    assert seen["Mistral-Workflow-Name"] == record.workflow
    assert seen["Mistral-Workflow-Execution-Id"] == record.id
    assert seen["Mistral-Task-Id"] == task_id
    assert seen["Mistral-Action-Execution-Id"] == task_id


def test_an_api_user_cannot_run_mistral_http_unless_the_server_allows_it(
        host: Host, tmp_path: Path, server: str) -> None:
    path = tmp_path / "api.yaml"
    path.write_text("version: '2.0'\nname: api\nworkflows:\n" + "\n".join(
        "  " + line[4:] for line in MISTRAL_HTTP.strip("\n").splitlines()) + "\n")
    host.workbooks.create(path)
    with pytest.raises(exceptions.WorkflowFailed, match=r"\[api\] allow_outbound_actions"):
        host.executions.create("api.wf", {"url": server}, api_user=True)
    assert _Recorder.headers_seen == []
    host._session.close_workflows()
    host.conf.set_override("allow_outbound_actions", True, group="api")
    assert host.executions.create("api.wf", {"url": server}, api_user=True).state == "SUCCESS"
    assert len(_Recorder.headers_seen) == 1


def test_a_second_run_of_mistral_http_sends_the_request_again(host: Host, tmp_path: Path,
                                                              server: str) -> None:
    """std.mistral_http is Rerun.CALLER, as std.http: a resumed task sends it again."""
    assert std_remote.MistralHttp.rerun is Rerun.CALLER
    for attempt in range(2):
        assert Run(host, tmp_path / str(attempt), MISTRAL_HTTP,
                   url=server).state == "SUCCESS"
    assert len(_Recorder.headers_seen) == 2
