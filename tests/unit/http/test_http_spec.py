"""Pure parts of the HTTP API: the SSE wire format and the OpenAPI document."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest

from tripleo_flow.engine.store.executions import Execution
from tripleo_flow.http import ROUTES
from tripleo_flow.http.events import ended, format_event
from tripleo_flow.http.server import BODY_SLACK, waitress_body_limit
from tripleo_flow.http.spec import Operation, Route, openapi


@pytest.mark.parametrize(("event", "data", "event_id", "expected"), [
    ("task", {"b": 1, "a": "x"}, 3, b'id: 3\nevent: task\ndata: {"a": "x", "b": 1}\n\n'),
    ("execution", [1, 2], None, b"event: execution\ndata: [1, 2]\n\n"),
    ("task", "two\nlines", 1, b'id: 1\nevent: task\ndata: "two\\nlines"\n\n'),
])
def test_format_event(event: str, data: object, event_id: int | None, expected: bytes) -> None:
    assert format_event(event, data, event_id) == expected


@pytest.mark.parametrize(("state", "finished_at", "over"), [
    ("RUNNING", None, False), ("PENDING", None, False), ("SUCCESS", None, False),
    ("SUCCESS", 1.0, True), ("ERROR", 2.0, True), ("INTERRUPTED", None, True),
])
def test_ended(state: str, finished_at: float | None, over: bool) -> None:
    assert ended(Execution("id", "wf", state, {}, finished_at=finished_at)) is over


@pytest.mark.parametrize(("task_states", "over"), [
    ((), True), (("SUCCESS", "PENDING"), True), (("SUCCESS", "RUNNING"), False)])
def test_a_paused_execution_is_followed_while_a_task_awaits_its_completion(
        task_states: tuple[str, ...], over: bool) -> None:
    """An asynchronous action's completion can still end a task of a paused execution
    (Mistral's): its stream (and the GUI's view) goes on until no task runs."""
    tasks = [SimpleNamespace(state=state) for state in task_states]
    assert ended(Execution("id", "wf", "PAUSED", {}), tasks) is over


def test_openapi_documents_statuses_security_and_path_parameters() -> None:
    doc = openapi([Route("/v1/things/{name}", "thing", lambda services: None, {
        "get": Operation("Show"), "delete": Operation("Delete", status=204, response=None)})])
    get = doc["paths"]["/v1/things/{name}"]["get"]
    assert sorted(get["responses"]) == ["200", "400", "401", "403", "404", "409", "503"]
    assert get["security"] == [{"token": []}]
    assert get["parameters"][0]["name"] == "name" and get["parameters"][0]["in"] == "path"
    assert "content" not in doc["paths"]["/v1/things/{name}"]["delete"]["responses"]["204"]
    json.dumps(doc)


def test_every_route_has_a_unique_operation_id() -> None:
    ids = [op["operationId"] for item in openapi(ROUTES)["paths"].values()
           for op in item.values()]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(("path", "method"), [
    ("/v1/uploads", "post"), ("/v1/plans", "post"), ("/v1/plans/{name}", "put")])
def test_archive_bodies_document_413(path: str, method: str) -> None:
    assert "413" in openapi(ROUTES)["paths"][path][method]["responses"]


@pytest.mark.parametrize(("max_upload", "expected"), [
    (0, sys.maxsize), (1, 1 + BODY_SLACK), (1 << 30, (1 << 30) + BODY_SLACK)])
def test_waitress_gets_a_limit_above_max_upload_size(max_upload: int, expected: int) -> None:
    assert waitress_body_limit(max_upload) == expected
