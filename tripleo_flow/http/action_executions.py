"""``POST /v1/action_executions``: run an action as an execution, as Mistral's ``POST
/v2/action_executions`` (``name``, ``input``, ``params``), through
:meth:`Client.action_executions.create`.

The execution is any other's (recorded as ``action:NAME``, its output ``{"result":
...}``): read, followed, paused, resumed and cancelled at ``/v1/executions/{id}``.
Unlike Mistral's, it is always recorded and always runs in the background (``params``
may only say so), so the answer is 202 with the execution as it starts.  Only an
action of ``[api] action_executions_allowed`` runs, and its inputs are checked as a
workflow's (unknown, missing, server paths): a refusal is a 400 before anything is
recorded.  The shipped one-action workflows (``tripleo.heat.launch`` ...) run the same
way through ``POST /v1/workflows/{name}/executions``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import falcon

from tripleo_flow.client.paths import ServerPaths
from tripleo_flow.http.json_bodies import body
from tripleo_flow.http.routes import OBJECT, Operation, Route
from tripleo_flow.http.workflows import IDEMPOTENCY_HEADER, IDEMPOTENCY_PARAM, TAGS, started

if TYPE_CHECKING:
    from tripleo_flow.client import Client

#: The body of ``POST /v1/action_executions`` (Mistral's, but for what it cannot be here).
BODY = {"type": "object", "required": ["name"], "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 255,
                     "description": "The action to run (one of [api] "
                                    "action_executions_allowed)"},
            "input": {**OBJECT, "description": "The action's inputs by name"},
            "params": {"type": "object", "additionalProperties": False, "properties": {
                "run_sync": {"type": "boolean", "enum": [False],
                             "description": "Always false: it runs in the background "
                                            "(follow /v1/executions/ID)"},
                "save_result": {"type": "boolean", "enum": [True],
                                "description": "Always true: every action execution is "
                                              "recorded"}}}}}


class ActionExecutions:
    """``POST /v1/action_executions``: start an action execution (202)."""

    def __init__(self, client: Client, paths: ServerPaths) -> None:
        self.client = client
        self.paths = paths

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        given = body(req)
        execution = self.client.action_executions.create(
            given["name"], given.get("input") or {}, wait=False, paths=self.paths,
            api_user=True, key=req.get_header(IDEMPOTENCY_HEADER),
            owner=getattr(req.context, "user_id", ""))
        started(resp, execution, self.paths)


ROUTES = [
    Route("/v1/action_executions", "action_executions",
          lambda s: ActionExecutions(s.client, s.paths), {
              "post": Operation(
                  "Run action NAME as an execution (Mistral's action execution: recorded as "
                  "action:NAME, its output {\"result\": ...}) in the background; 202 with "
                  "the execution, read at /v1/executions/ID; 400, with nothing recorded, "
                  "for an action [api] action_executions_allowed does not list, an unknown "
                  "or missing input, or a server path the API may not use",
                  status=202, body=BODY, tags=TAGS, params=(IDEMPOTENCY_PARAM,))}),
]
