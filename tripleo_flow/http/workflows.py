"""Workflow and execution resources: list workflows, start one by name (202),
list and show executions and their tasks, stream an execution's events."""

from __future__ import annotations

import collections
import dataclasses
import json
import threading
from typing import Any

import falcon

from tripleo_flow import exceptions
from tripleo_flow.http import events
from tripleo_flow.http.plans import field, json_object

IDEMPOTENCY_HEADER = "Idempotency-Key"


class IdempotencyKeys:
    """Which execution a start with a given Idempotency-Key made (the newest ``size``
    keys, kept in this server's memory)."""

    def __init__(self, size: int = 10000) -> None:
        self._keys: collections.OrderedDict[str, tuple[str, str]] = collections.OrderedDict()
        self._size = size
        self.lock = threading.Lock()

    def lookup(self, key: str, fingerprint: str) -> str | None:
        """The execution id of an earlier start with ``key`` (Conflict if it differed)."""
        entry = self._keys.get(key)
        if entry is None:
            return None
        if entry[0] != fingerprint:
            raise exceptions.Conflict(
                f"Idempotency-Key {key!r} was used for a different workflow start; send a "
                "new key for a new start.")
        return entry[1]

    def remember(self, key: str, fingerprint: str, execution_id: str) -> None:
        self._keys[key] = (fingerprint, execution_id)
        while len(self._keys) > self._size:
            self._keys.popitem(last=False)


def execution_body(execution: Any) -> dict[str, Any]:
    return dataclasses.asdict(execution)


class Workflows:
    def __init__(self, client: Any) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = [{"name": w.full_name, "workbook": w.workbook, "type": w.type,
                       "description": w.description,
                       "inputs": [dataclasses.asdict(i) for i in w.inputs]}
                      for w in self.client.list_workflows()]


class WorkflowExecutions:
    """``POST /v1/workflows/{name}/executions``: start a run in the background."""

    def __init__(self, client: Any, keys: IdempotencyKeys) -> None:
        self.client = client
        self.keys = keys

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        media = json_object(req) if req.content_length else {}
        inputs = field(media, "input", dict, {})
        target = field(media, "target", str, None)
        key = req.get_header(IDEMPOTENCY_HEADER)
        if key is None:
            execution = self.client.run_workflow(name, inputs, wait=False, target=target)
        else:
            fingerprint = json.dumps([name, inputs, target], sort_keys=True, default=str)
            with self.keys.lock:
                known = self.keys.lookup(key, fingerprint)
                if known is not None:
                    execution = self.client.get_execution(known)
                else:
                    execution = self.client.run_workflow(name, inputs, wait=False,
                                                         target=target)
                    self.keys.remember(key, fingerprint, execution.id)
        resp.status = falcon.HTTP_202
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)


class Executions:
    def __init__(self, client: Any) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = [execution_body(e)
                      for e in self.client.list_executions(req.get_param("workflow"))]


class Execution:
    def __init__(self, client: Any) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        resp.media = execution_body(self.client.get_execution(execution_id))


class ExecutionTasks:
    def __init__(self, client: Any) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        resp.media = [dataclasses.asdict(t) for t in self.client.execution_tasks(execution_id)]


class ExecutionEvents:
    """``text/event-stream`` of task state changes, ending with the execution's end."""

    def __init__(self, client: Any, interval: float = 0.2) -> None:
        self.client = client
        self.interval = interval

    def on_get(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        self.client.get_execution(execution_id)  # 404 before the stream starts
        resp.content_type = "text/event-stream"
        resp.cache_control = ["no-cache"]
        resp.stream = events.follow(self.client, execution_id, self.interval)
