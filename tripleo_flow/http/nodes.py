"""Node resources: list and show nodes; start the node workflows (202, an execution).

A change to nodes runs the same ``tripleo.nodes`` workflow the CLI runs, in the
background; follow it at ``/v1/executions/{id}`` (``/events`` streams each node's
progress).  A node list to import is checked before the execution starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import falcon

from tripleo_flow.core.servers.nodes import INITIAL_STATES
from tripleo_flow.http.json_bodies import body
from tripleo_flow.http.routes import ARRAY, BOOL, OBJECT, STRING, Operation, Route, with_client
from tripleo_flow.http.workflows import execution_body

if TYPE_CHECKING:
    from tripleo_flow.client import Client

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
    execution = client.nodes.start_workflow(workflow, inputs, api_user=True)
    resp.status = falcon.HTTP_202
    resp.location = f"/v1/executions/{execution.id}"
    resp.media = execution_body(execution)


class Nodes:
    """``GET /v1/nodes`` lists; ``POST /v1/nodes`` imports ``{"nodes": [...]}`` (to
    manageable, or ``initial_state``; ``introspect`` and ``provide`` as the CLI's)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.client.nodes.list()

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        given = body(req)
        options = {k: given[k] for k in IMPORT_KEYS if k in given}
        _start(self.client, resp, "register", {"nodes": given["nodes"], **options})


class Node:
    def __init__(self, client: Client) -> None:
        self.client = client

    def on_get(self, req: falcon.Request, resp: falcon.Response, node: str) -> None:
        resp.media = self.client.nodes.get(node)


class NodeWorkflow:
    """``POST /v1/nodes/<verb>``: start that node workflow with the body's inputs."""

    def __init__(self, client: Client, verb: str) -> None:
        self.client = client
        self.verb = verb

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        given = body(req)
        inputs = {k: given[k] for k in VERBS[self.verb] if k in given}
        _start(self.client, resp, self.verb, inputs)


TAGS = ("nodes",)
#: Inputs of the node workflows, as request body properties.
NODE_INPUTS: dict[str, Any] = {
    "nodes": {"type": "array", "items": STRING, "description": "Node names or UUIDs."},
    "all_manageable": BOOL, "provide": BOOL,
    "steps": {"type": "array", "items": OBJECT,
              "description": "Manual clean steps (default: erase devices' metadata)."},
    "plan": {**STRING, "description": "The plan the nodes are provisioned for (default "
                                      "overcloud)."},
    "baremetal_deployment": {**STRING, "description": "TripleO's baremetal deployment "
                                                      "file (its YAML text)."},
    "hostnames": {"type": "array", "items": STRING,
                  "description": "Host names whose nodes are released."},
    "all_nodes": BOOL,
}
#: What an import does after registering (workflow tripleo.nodes.register).
IMPORT_INPUTS: dict[str, Any] = {
    "initial_state": {"type": "string", "enum": list(INITIAL_STATES),
                      "description": "Where the nodes found in enroll are left (default "
                                     "manageable, as TripleO)."},
    "introspect": {**BOOL, "description": "Then introspect every node of the list."},
    "provide": {**BOOL, "description": "Then make every node of the list available."},
}


def _verb_route(verb: str, keys: tuple[str, ...]) -> Route:
    """``POST /v1/nodes/<verb>``: every input is optional but provision's (an empty body
    starts the workflow with its defaults)."""
    return Route(f"/v1/nodes/{verb}", f"nodes_{verb}",
                 lambda s: NodeWorkflow(s.client, verb), {
        "post": Operation(f"Start workflow tripleo.nodes.{verb}; 202 with the execution",
                          status=202, tags=TAGS, body_required=verb == "provision",
                          body={"type": "object",
                                "properties": {k: NODE_INPUTS[k] for k in keys},
                                **({"required": ["baremetal_deployment"]}
                                   if verb == "provision" else {})})})


ROUTES = [
    Route("/v1/nodes", "nodes", with_client(Nodes), {
        "get": Operation("Bare metal nodes in Ironic, with their (introspected) properties",
                         response=ARRAY, errors=(404, 503), tags=TAGS),
        "post": Operation(
            "Register or update nodes (instackenv.json's node list) with workflow "
            "tripleo.nodes.register; 202 with the execution", status=202, tags=TAGS,
            body={"type": "object", "required": ["nodes"],
                  "properties": {"nodes": {"type": "array", "minItems": 1,
                                           "items": OBJECT},
                                 **IMPORT_INPUTS}})}),
    *(_verb_route(verb, keys) for verb, keys in VERBS.items()),
    Route("/v1/nodes/{node}", "node", with_client(Node), {
        "get": Operation("Show a node (name or UUID): states, properties, capabilities, "
                         "ports", tags=TAGS)}),
]
