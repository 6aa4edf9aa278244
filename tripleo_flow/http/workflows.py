"""Workflow and execution resources: list workflows, start one by name (202),
list and show executions and their tasks, stream an execution's events."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import falcon

from tripleo_flow import exceptions
from tripleo_flow.client import idempotency
from tripleo_flow.client.execution_updates import STATES
from tripleo_flow.client.executions import EXECUTION_ID_PATTERN
from tripleo_flow.client.paths import ServerPaths
from tripleo_flow.config_api import EXECUTIONS_PAGE_MAX
from tripleo_flow.engine.store.cancels import ENDED
from tripleo_flow.http import events, media
from tripleo_flow.http.json_bodies import body
from tripleo_flow.http.routes import (
    ARRAY,
    OBJECT,
    SSE,
    STRING,
    UPLOAD_ERRORS,
    Operation,
    Param,
    Route,
    with_client,
)

if TYPE_CHECKING:
    from tripleo_flow.client import Client

IDEMPOTENCY_HEADER = idempotency.HEADER


execution_body = media.execution

#: The body of ``PUT /v1/executions/{id}`` (Mistral's execution update).
UPDATE_BODY = {"type": "object", "additionalProperties": False, "properties": {
    "id": {"type": "string"}, "state": {"type": "string", "enum": list(STATES)},
    "state_info": {"type": "string"},
    "description": {"type": "string", "maxLength": 255,
                    "description": "kept on the execution; without state, as Mistral's"},
    "params": {"type": "object", "additionalProperties": False,
               "properties": {"env": {"type": "object"}}}}}

#: The body of ``PUT /v1/executions/{id}/tasks/{task}`` (Mistral's task rerun).
RERUN_BODY = {"type": "object", "required": ["state"], "additionalProperties": False,
              "properties": {
                  "state": {"type": "string", "enum": ["RUNNING"],
                            "description": "Only a rerun updates a task."},
                  "reset": {"type": "boolean", "default": True,
                            "description": "false: a with-items task reruns its failed "
                                           "items only"},
                  "env": {"type": "object",
                          "description": "merged into the execution's env first"}}}


class Workflows:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = [{"name": w.full_name, "workbook": w.workbook, "type": w.type,
                       "description": w.description,
                       "inputs": [media.fields(i) for i in w.inputs]}
                      for w in self.client.workflows.list()]


class Workflow:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.workflows.graph(name)


class WorkflowExecutions:
    """``POST /v1/workflows/{name}/executions``: start a run in the background.

    With an ``Idempotency-Key`` header, a retried start (same key, same workflow,
    input and target) answers the execution the first one made, even from
    another server process sharing the executions database
    (:meth:`Client.executions.create_once`).  With Keystone, keys belong to the
    user who sent them (``X-User-Id``), so two users never collide.
    """

    def __init__(self, client: Client, paths: ServerPaths | None = None) -> None:
        self.client = client
        self.paths = paths

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        given = body(req)
        inputs, target = given.get("input", {}), given.get("target")
        env, evaluate_env = given.get("env"), given.get("evaluate_env", True)
        key = req.get_header(IDEMPOTENCY_HEADER)
        if key is None:
            execution = self.client.executions.create(name, inputs, wait=False, target=target,
                                                      paths=self.paths, api_user=True, env=env,
                                                      evaluate_env=evaluate_env)
        else:
            execution = self.client.executions.create_once(
                key, name, inputs, target=target, env=env, paths=self.paths, api_user=True,
                owner=getattr(req.context, "user_id", ""), evaluate_env=evaluate_env)
        started(resp, execution, self.paths)


def started(resp: falcon.Response, execution: Any, paths: ServerPaths | None) -> None:
    """Answer 202 with ``execution`` as it starts (and its output paths' downloads)."""
    resp.status = falcon.HTTP_202
    resp.location = f"/v1/executions/{execution.id}"
    resp.media = execution_body(execution)
    if paths is not None:
        made = {k: paths.download_id(v) for k, v in execution.input.items()}
        resp.media["downloads"] = {k: f"/v1/downloads/{d}" for k, d in made.items() if d}


class Executions:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """A page of executions (``limit``, ``marker``, ``sort_dir``, as Mistral pages
        them); a ``Link: <...>; rel="next"`` header names the next page, if any.  As
        Mistral's list, each execution comes without its output unless
        ``include_output=true``, and a page holds fewer executions when their
        records are large (``[api] executions_page_max_bytes``)."""
        workflow = req.get_param("workflow")
        limit_text = req.get_param("limit")
        limit = None
        if limit_text is not None:
            if not limit_text.isascii() or not limit_text.isdigit() or len(limit_text) > 9:
                raise exceptions.InvalidInput(
                    f"limit must be a positive whole number, not {limit_text[:40]!r}.")
            limit = int(limit_text)
        sort_dir = req.get_param("sort_dir") or "asc"
        include_output = req.get_param_as_bool("include_output", default=False)
        page, marker = self.client.executions.page(limit, req.get_param("marker"), workflow,
                                                   sort_dir)
        resp.media = [execution_body(e) for e in page]
        if not include_output:
            for body in resp.media:
                body.pop("output", None)
        if marker is not None:
            query = {"marker": marker, "sort_dir": sort_dir,
                     **({"limit": str(limit)} if limit is not None else {}),
                     **({"include_output": "true"} if include_output else {}),
                     **({"workflow": workflow} if workflow else {})}
            resp.append_link("/v1/executions?" + urllib.parse.urlencode(query), "next")


class Execution:
    """``GET /v1/executions/{id}``; ``PUT``: change its state as Mistral's ``PUT
    /v2/executions/{id}`` (:meth:`Client.executions.update`): ``{"state": "PAUSED" |
    "RUNNING" | "CANCELLED" | "ERROR" | "SUCCESS", "state_info": "why", "params":
    {"env": {...}}}`` or ``{"description": "text"}``, answering 200 with the execution,
    only one an API user started."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        resp.media = execution_body(self.client.executions.get(execution_id))

    def on_put(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        given = body(req)
        if given.get("id") not in (None, execution_id):
            raise exceptions.InvalidInput("The body's 'id' is not the execution's.")
        execution = self.client.executions.update(
            execution_id, given.get("state"), given.get("state_info"),
            given.get("params", {}).get("env"), api_user=True,
            description=given.get("description"))
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)


class ResumeExecution:
    """``POST /v1/executions/{id}/resume``: continue it, answering at once (202); only
    an execution an API user started (it runs with the rights of whoever started it)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        ended = self.client.executions.get(execution_id).state in ENDED
        execution = self.client.executions.resume(execution_id, wait=False, api_user=True)
        # One that had ended is returned unchanged (200), as Mistral's resume of a
        # workflow that is not paused.  Decided before: a resumed run whose last task
        # ends at once may read SUCCESS by the time its record is read back (202 still).
        resp.status = falcon.HTTP_200 if ended else falcon.HTTP_202
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)


class PauseExecution:
    """``POST /v1/executions/{id}/pause``: pause a running execution, wherever it runs
    (its running tasks end, no new one starts; it then reads PAUSED), answering at
    once (202); only an execution an API user started, as for a resume.  The body
    may be empty, ``{}``, or Mistral's ``{"state": "PAUSED"}``; anything else is 400."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        execution = self.client.executions.pause(execution_id, api_user=True)
        resp.status = falcon.HTTP_202
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)


class CancelExecution:
    """``POST /v1/executions/{id}/cancel``: cancel an execution, wherever it runs (it
    reads CANCELLED at once; its running tasks end, no new one starts, it is never
    resumed), answering at once (202; 200 with one that ended, left unchanged); only
    an execution an API user started, as for a pause.  The body may be empty, ``{}``,
    or Mistral's ``{"state": "CANCELLED", "state_info": "why"}``; anything else is 400."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        message = body(req).get("state_info")
        before = self.client.executions.get(execution_id)
        execution = self.client.executions.cancel(execution_id, message, api_user=True)
        resp.status = falcon.HTTP_200 if before.state in ENDED else falcon.HTTP_202
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)


class CompleteTask:
    """``POST /v1/executions/{id}/tasks/{task}/complete``: complete the asynchronous
    action a task execution (its name or id) waits for, as Mistral's action execution
    update: ``{"state": "SUCCESS" | "ERROR", "output": any JSON, "item": N}``."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, execution_id: str,
                task: str) -> None:
        given = body(req)
        done = self.client.tasks.complete(execution_id, task, given["state"],
                                          given.get("output"), item=given.get("item"),
                                          api_user=True)
        resp.media = media.fields(done)


class ExecutionTask:
    """``PUT /v1/executions/{id}/tasks/{task}``: rerun a failed task execution (its name
    or id) of a failed execution, as Mistral's ``PUT /v2/tasks/{id}``: ``{"state":
    "RUNNING", "reset": true | false, "env": {...}}`` (``env`` merged into the
    execution's); 202 with the execution, which goes on in the background; only one an
    API user started."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_put(self, req: falcon.Request, resp: falcon.Response, execution_id: str,
               task: str) -> None:
        given = body(req)
        execution = self.client.tasks.rerun(
            execution_id, task, given.get("reset", True), given.get("env"), wait=False,
            api_user=True)
        resp.status = falcon.HTTP_202
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)


class ExecutionTasks:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        resp.media = [media.task(t) for t in self.client.tasks.list(execution_id)]


class ExecutionEvents:
    """``text/event-stream`` of task state changes, ending with the execution's end."""

    def __init__(self, client: Client, interval: float = 0.2,
                 redact: Callable[[bytes], bytes] = lambda data: data,
                 slots: events.StreamSlots | None = None) -> None:
        """:param slots: the streams that may be open at once (default: no limit)"""
        self.client = client
        self.interval = interval
        self.redact = redact
        self.slots = slots

    def on_get(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        self.client.executions.get(execution_id)  # 404 before the stream starts
        # A keepalive each second: writing to a client that has left fails within
        # two, and waitress then says it is gone (or ends the stream itself).
        gone = req.env.get("waitress.client_disconnected") or (lambda: False)
        messages = events.follow(self.client, execution_id, self.interval,
                                 keepalive=events.STREAM_KEEPALIVE, redact=self.redact,
                                 gone=gone)
        resp.stream = self.slots.open(messages) if self.slots else messages
        resp.content_type = "text/event-stream"
        resp.cache_control = ["no-cache"]


TAGS = ("workflows",)
#: The header a retried start sends again.
IDEMPOTENCY_PARAM = Param(IDEMPOTENCY_HEADER, {"type": "string", "maxLength": 255},
                          where="header",
                          description="A retried start with the same key returns the same "
                                      "execution.")
#: The body of ``POST /v1/executions/{id}/pause``: empty, {} or Mistral's.
PAUSE_BODY = {"type": "object", "additionalProperties": False, "properties": {
    "state": {"type": "string", "enum": ["PAUSED"],
              "description": "Resume an execution with POST /v1/executions/ID/resume."}}}
#: The body of ``POST /v1/executions/{id}/cancel``: empty, {} or Mistral's.
CANCEL_BODY = {"type": "object", "additionalProperties": False, "properties": {
    "state": {"type": "string", "enum": ["CANCELLED"]}, "state_info": STRING}}
#: The body of ``POST /v1/executions/{id}/tasks/{task}/complete``.
COMPLETE_BODY = {"type": "object", "required": ["state"], "additionalProperties": False,
                 "properties": {
                     "state": {"type": "string", "enum": ["SUCCESS", "ERROR"]},
                     "output": {"description": "Any JSON value: the action's result, or its "
                                               "error (masked as other records)"},
                     "item": {"type": "integer", "minimum": 0,
                              "description": "The item of a with-items task (when several "
                                             "wait)"}}}
EXECUTIONS_QUERY = (
    Param("workflow", STRING),
    Param("limit", {"type": "integer", "minimum": 1, "maximum": EXECUTIONS_PAGE_MAX},
          description=f"At most [api] executions_page_max ({EXECUTIONS_PAGE_MAX} unless "
                      "configured)"),
    Param("marker", {"type": "string", "pattern": EXECUTION_ID_PATTERN},
          description="The id of the last execution of the previous page (404 when there "
                      "is none)"),
    Param("sort_dir", {"type": "string", "enum": ["asc", "desc"]}),
    Param("include_output", {"type": "boolean"},
          description="Each execution with its output (default: false)"))


def _events(s: Any) -> ExecutionEvents:
    return ExecutionEvents(s.client, s.sse_interval, s.redact, s.stream_slots)


WORKFLOW_ROUTES = [
    Route("/v1/workflows", "workflows", with_client(Workflows), {
        "get": Operation("List workflows with their inputs", response=ARRAY, errors=(503,),
                         tags=TAGS)}),
    Route("/v1/workflows/{name}", "workflow", with_client(Workflow), {
        "get": Operation("A workflow's task graph: its tasks and their transitions",
                         tags=TAGS)}),
    Route("/v1/workflows/{name}/executions", "workflow_executions",
          lambda s: WorkflowExecutions(s.client, s.paths), {
              "post": Operation(
                  "Start workflow NAME in the background; 202 with the execution; 400, with "
                  "nothing recorded, for an input or env over [limits] input_max_size bytes",
                  status=202, body_required=False, tags=TAGS,
                  body={"type": "object", "properties": {
                      "input": OBJECT, "target": STRING, "env": OBJECT,
                      "evaluate_env": {"type": "boolean"}}},
                  params=(IDEMPOTENCY_PARAM,))}),
]

EXECUTION_ROUTES = [
    Route("/v1/executions", "executions", with_client(Executions), {
        "get": Operation("List a page of executions, oldest first (sort_dir desc: newest "
                         "first), without their output unless include_output=true (as "
                         "Mistral's); a page ends early when its executions' records take "
                         "over [api] executions_page_max_bytes; a Link header with "
                         "rel=\"next\" gives the next page",
                         response=ARRAY, tags=TAGS, params=EXECUTIONS_QUERY)}),
    Route("/v1/executions/{execution_id}", "execution", with_client(Execution), {
        "get": Operation("Show an execution", tags=TAGS),
        "put": Operation(
            "Change an execution's state as Mistral's PUT /v2/executions/{id} (RUNNING "
            "resumes, PAUSED, CANCELLED, ERROR or SUCCESS stops it); 200 with the execution, "
            "400 for a transition Mistral refuses (SUCCESS of a paused or ended one), 409 "
            "when it cannot change so now", body=UPDATE_BODY, tags=TAGS,
            errors=UPLOAD_ERRORS)}),
    Route("/v1/executions/{execution_id}/resume", "execution_resume",
          with_client(ResumeExecution), {
              "post": Operation(
                  "Continue a paused, suspended or interrupted execution that was started "
                  "through this API, in the background (on a conductor with a jobboard); "
                  "202 with the execution (200 with one that ended, left unchanged, as "
                  "Mistral's resume)", status=202,
                  body_required=False, body={"type": "object"}, tags=TAGS)}),
    Route("/v1/executions/{execution_id}/cancel", "execution_cancel",
          with_client(CancelExecution), {
              "post": Operation(
                  "Cancel a running, paused or interrupted execution that was started "
                  "through this API, wherever it runs, with its sub-workflow executions: it "
                  "reads CANCELLED at once (state_info: the message given, output: "
                  "{\"result\": message}), its running tasks end, no new one starts and it "
                  "is never resumed; body empty, {} or {\"state\": \"CANCELLED\", "
                  "\"state_info\": \"why\"}; 202 with the execution (200 with one that "
                  "ended, left unchanged, as Mistral's cancel)",
                  status=202, body_required=False, body=CANCEL_BODY, tags=TAGS)}),
    Route("/v1/executions/{execution_id}/pause", "execution_pause",
          with_client(PauseExecution), {
              "post": Operation(
                  "Pause a running execution that was started through this API, wherever "
                  "it runs: its running tasks end and no new one starts (then it reads "
                  "PAUSED; resume continues it); 202 with the execution (a paused one is "
                  "left as it is), 409 when it ended or was interrupted",
                  status=202, body_required=False, body=PAUSE_BODY, tags=TAGS)}),
    Route("/v1/executions/{execution_id}/tasks", "execution_tasks",
          with_client(ExecutionTasks), {
              "get": Operation("Tasks of an execution; a workflow: task that has ended "
                               "lists its child executions in executions (one per item and "
                               "attempt), each naming it in its parent_id and parent_task",
                               response=ARRAY, tags=TAGS)}),
    Route("/v1/executions/{execution_id}/tasks/{task}", "execution_task",
          with_client(ExecutionTask), {
              "put": Operation(
                  "Rerun a failed task execution (its name, as poll[2], or id) of a failed "
                  "execution that was started through this API, as Mistral's PUT "
                  "/v2/tasks/{id}: the tasks that completed keep their results, it runs "
                  "again and the execution goes on in the background; 202 with the "
                  "execution, 400 when the task did not fail, reset is false without "
                  "with-items or a completed task was undone (its action reverts), 409 "
                  "when the execution did not fail",
                  status=202, body=RERUN_BODY, tags=TAGS)}),
    Route("/v1/executions/{execution_id}/tasks/{task}/complete", "execution_task_complete",
          with_client(CompleteTask), {
              "post": Operation(
                  "Complete the asynchronous action (std.async_noop...) a task execution "
                  "waits for, named by its name (poll[2]) or id: SUCCESS makes output its "
                  "result, ERROR its error (its on-error runs); 409 when it does not wait",
                  tags=TAGS, body=COMPLETE_BODY)}),
    Route("/v1/executions/{execution_id}/events", "execution_events", _events, {
        "get": Operation("Server-sent events (task, then execution at the end)",
                         response={}, response_type=SSE, tags=TAGS)}),
]
