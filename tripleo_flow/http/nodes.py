"""Node resources: list and show nodes; start the node workflows (202, an execution).

A change to nodes runs the same ``tripleo.nodes`` workflow the CLI runs, in the
background; follow it at ``/v1/executions/{id}`` (``/events`` streams each node's
progress).  A node list to import is checked before the execution starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import falcon

from tripleo_flow.http.plans import json_object
from tripleo_flow.http.workflows import execution_body

if TYPE_CHECKING:
    from tripleo_flow.api import Client

#: What ``POST /v1/nodes`` (workflow register) takes besides the node list.
IMPORT_KEYS = ("initial_state", "introspect", "provide")
#: Workflows a ``POST /v1/nodes/<verb>`` starts, and the body keys each takes.
VERBS = {
    "introspect": ("nodes", "all_manageable", "provide"),
    "provide": ("nodes", "all_manageable"),
    "manage": ("nodes",),
    "clean": ("nodes", "all_manageable", "steps"),
    "delete": ("nodes",),
    "provision": ("plan", "baremetal_deployment"),
    "unprovision": ("plan", "baremetal_deployment", "hostnames", "all_nodes"),
}


def _start(client: Client, resp: falcon.Response, workflow: str, inputs: dict[str, Any]) -> None:
    execution = client.start_nodes_workflow(workflow, inputs, api_user=True)
    resp.status = falcon.HTTP_202
    resp.location = f"/v1/executions/{execution.id}"
    resp.media = execution_body(execution)


class Nodes:
    """``GET /v1/nodes`` lists; ``POST /v1/nodes`` imports ``{"nodes": [...]}`` (to
    manageable, or ``initial_state``; ``introspect`` and ``provide`` as the CLI's)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.client.list_nodes()

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        options = {k: body[k] for k in IMPORT_KEYS if body.get(k) is not None}
        _start(self.client, resp, "register", {"nodes": body.get("nodes"), **options})


class Node:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, node: str) -> None:
        resp.media = self.client.show_node(node)


class NodeWorkflow:
    """``POST /v1/nodes/<verb>``: start that node workflow with the body's inputs."""

    def __init__(self, client: Client, verb: str) -> None:
        self.client = client
        self.verb = verb

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req) if req.content_length else {}
        inputs = {k: body[k] for k in VERBS[self.verb] if body.get(k) is not None}
        _start(self.client, resp, self.verb, inputs)
