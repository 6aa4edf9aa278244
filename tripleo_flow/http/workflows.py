"""Workflow and execution resources: list workflows, start one by name (202),
list and show executions and their tasks, stream an execution's events."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING

import falcon

from tripleo_flow import exceptions
from tripleo_flow.api import idempotency
from tripleo_flow.api.execution_updates import STATES
from tripleo_flow.api.paths import ServerPaths
from tripleo_flow.engine.store.cancels import ENDED
from tripleo_flow.http import events, media
from tripleo_flow.http.plans import field, json_object

if TYPE_CHECKING:
    from tripleo_flow.api import Client

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
                  "state": {"type": "string", "enum": ["RUNNING"]},
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
                      for w in self.client.list_workflows()]


class Workflow:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.media = self.client.workflow_graph(name)


class WorkflowExecutions:
    """``POST /v1/workflows/{name}/executions``: start a run in the background.

    With an ``Idempotency-Key`` header, a retried start (same key, same workflow,
    input and target) answers the execution the first one made, even from
    another server process sharing the executions database
    (:meth:`Client.start_workflow_once`).  With Keystone, keys belong to the
    user who sent them (``X-User-Id``), so two users never collide.
    """

    def __init__(self, client: Client, paths: ServerPaths | None = None) -> None:
        self.client = client
        self.paths = paths

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        media = json_object(req) if req.content_length else {}
        inputs = field(media, "input", dict, {})
        target = field(media, "target", str, None)
        env = field(media, "env", dict, None)
        evaluate_env = field(media, "evaluate_env", bool, True)
        key = req.get_header(IDEMPOTENCY_HEADER)
        if key is None:
            execution = self.client.run_workflow(name, inputs, wait=False, target=target,
                                                 paths=self.paths, api_user=True, env=env,
                                                 evaluate_env=evaluate_env)
        else:
            execution = self.client.start_workflow_once(
                key, name, inputs, target=target, env=env, paths=self.paths, api_user=True,
                owner=getattr(req.context, "user_id", ""), evaluate_env=evaluate_env)
        resp.status = falcon.HTTP_202
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)
        if self.paths is not None:
            made = {k: self.paths.download_id(v) for k, v in execution.input.items()}
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
        page, marker = self.client.page_executions(limit, req.get_param("marker"), workflow,
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
    /v2/executions/{id}`` (:meth:`Client.update_execution`): ``{"state": "PAUSED" |
    "RUNNING" | "CANCELLED" | "ERROR" | "SUCCESS", "state_info": "why", "params":
    {"env": {...}}}`` or ``{"description": "text"}``, answering 200 with the execution,
    only one an API user started."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        resp.media = execution_body(self.client.get_execution(execution_id))

    def on_put(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        body = json_object(req)
        unknown = sorted(set(body) - {"id", "state", "state_info", "params", "description"})
        if unknown:
            raise exceptions.InvalidInput(
                f"Unknown field(s) {', '.join(repr(k[:40]) for k in unknown[:5])}: an "
                "execution update takes 'state', 'state_info', 'description' and 'params' "
                "({'env': {...}}).")
        if body.get("id") not in (None, execution_id):
            raise exceptions.InvalidInput("The body's 'id' is not the execution's.")
        params = field(body, "params", dict, {})
        if set(params) - {"env"}:
            raise exceptions.InvalidInput("An execution update's 'params' takes 'env' only.")
        execution = self.client.update_execution(
            execution_id, field(body, "state", str, None), field(body, "state_info", str, None),
            field(params, "env", dict, None), api_user=True,
            description=field(body, "description", str, None))
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)


class ResumeExecution:
    """``POST /v1/executions/{id}/resume``: continue it, answering at once (202); only
    an execution an API user started (it runs with the rights of whoever started it)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_post(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        if req.content_length:
            json_object(req)  # an empty object, or nothing: there is nothing to give
        ended = self.client.get_execution(execution_id).state in ENDED
        execution = self.client.resume_execution(execution_id, wait=False, api_user=True)
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
        media = json_object(req) if req.content_length else {}
        if set(media) - {"state"}:
            raise exceptions.InvalidInput(
                'A pause request takes no field but "state": its body is empty, {} or '
                '{"state": "PAUSED"}.')
        if media.get("state", "PAUSED") != "PAUSED":
            raise exceptions.InvalidInput(
                'A pause request sets the state PAUSED only ({"state": "PAUSED"}); '
                "resume an execution with POST /v1/executions/ID/resume.")
        execution = self.client.pause_execution(execution_id, api_user=True)
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
        media = json_object(req) if req.content_length else {}
        if set(media) - {"state", "state_info"}:
            raise exceptions.InvalidInput(
                'A cancel request takes no field but "state" and "state_info": its body is '
                'empty, {} or {"state": "CANCELLED", "state_info": "why"}.')
        if media.get("state", "CANCELLED") != "CANCELLED":
            raise exceptions.InvalidInput(
                'A cancel request sets the state CANCELLED only ({"state": "CANCELLED"}).')
        message = media.get("state_info")
        if message is not None and not isinstance(message, str):
            raise exceptions.InvalidInput('A cancel request\'s "state_info" must be text.')
        before = self.client.get_execution(execution_id)
        execution = self.client.cancel_execution(execution_id, message, api_user=True)
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
        body = json_object(req)
        unknown = sorted(set(body) - {"state", "output", "item"})
        if unknown:
            raise exceptions.InvalidInput(
                f"Unknown field(s) {', '.join(repr(k[:40]) for k in unknown[:5])}: a completion "
                "takes 'state', 'output' and 'item'.")
        state = field(body, "state", str)
        item = field(body, "item", int, None)  # (a boolean is refused by complete_task)
        done = self.client.complete_task(execution_id, task, state, body.get("output"),
                                         item=item, api_user=True)
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
        body = json_object(req)
        unknown = sorted(set(body) - {"state", "reset", "env"})
        if unknown:
            raise exceptions.InvalidInput(
                f"Unknown field(s) {', '.join(repr(k[:40]) for k in unknown[:5])}: a task "
                "rerun takes 'state' (RUNNING), 'reset' and 'env'.")
        if body.get("state") != "RUNNING":
            raise exceptions.InvalidInput(
                'Only a rerun updates a task: send {"state": "RUNNING"} (with "reset" and '
                '"env" if needed).')
        execution = self.client.rerun_task(
            execution_id, task, field(body, "reset", bool, True), field(body, "env", dict, None),
            wait=False, api_user=True)
        resp.status = falcon.HTTP_202
        resp.location = f"/v1/executions/{execution.id}"
        resp.media = execution_body(execution)


class ExecutionTasks:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, execution_id: str) -> None:
        resp.media = [media.task(t) for t in self.client.execution_tasks(execution_id)]


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
        self.client.get_execution(execution_id)  # 404 before the stream starts
        # A keepalive each second: writing to a client that has left fails within
        # two, and waitress then says it is gone (or ends the stream itself).
        gone = req.env.get("waitress.client_disconnected") or (lambda: False)
        messages = events.follow(self.client, execution_id, self.interval,
                                 keepalive=events.STREAM_KEEPALIVE, redact=self.redact,
                                 gone=gone)
        resp.stream = self.slots.open(messages) if self.slots else messages
        resp.content_type = "text/event-stream"
        resp.cache_control = ["no-cache"]
