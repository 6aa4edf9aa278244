"""The route table of the HTTP API and the OpenAPI document built from it.

Each :class:`Route` names a path, the resource that serves it and one
:class:`Operation` per method; :func:`openapi` turns the table into an
OpenAPI 3.0 document, so the document cannot drift from what is served.
No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tripleo_flow import __version__

PLAN_NAME = {"type": "string", "pattern": "^[a-zA-Z0-9][a-zA-Z0-9-]*$", "maxLength": 128}
OBJECT: dict[str, Any] = {"type": "object"}
ARRAY: dict[str, Any] = {"type": "array", "items": {}}
GZIP = "application/gzip"
JSON = "application/json"
SSE = "text/event-stream"

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {
        "type": "object", "required": ["kind", "message"],
        "properties": {"kind": {"type": "string"}, "message": {"type": "string"},
                       "hints": {"type": "array", "items": {
                           "type": "object", "required": ["command", "request"],
                           "properties": {"command": {"type": "string", "nullable": True},
                                          "request": {"type": "string", "nullable": True}}}},
                       "reason": {"type": "string"}, "details": {"type": "object"}}}},
}


@dataclass(frozen=True)
class Param:
    """A query or header parameter."""

    name: str
    schema: dict[str, Any]
    where: str = "query"
    required: bool = False
    description: str = ""


@dataclass(frozen=True)
class Operation:
    """One method of a route: what it does, what it takes, what it answers."""

    summary: str
    status: int = 200
    response: dict[str, Any] | None = field(default_factory=lambda: OBJECT)
    response_type: str = JSON
    body: dict[str, Any] | None = None
    body_type: str = JSON
    body_required: bool = True
    params: tuple[Param, ...] = ()
    errors: tuple[int, ...] = (400, 404, 409, 503)
    public: bool = False
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Route:
    path: str
    resource: str
    operations: dict[str, Operation]


def _path_params(path: str) -> list[dict[str, Any]]:
    params = []
    for part in path.split("/"):
        if part.startswith("{") and part.endswith("}"):
            name = part[1:-1]
            schema = PLAN_NAME if name == "name" else {"type": "string", "minLength": 1}
            params.append({"name": name, "in": "path", "required": True, "schema": schema})
    return params


def _operation(route: Route, method: str, op: Operation) -> dict[str, Any]:
    responses: dict[str, Any] = {}
    if op.response is None:
        responses[str(op.status)] = {"description": op.summary}
    elif op.response_type == JSON:
        responses[str(op.status)] = {"description": op.summary,
                                     "content": {JSON: {"schema": op.response}}}
    else:
        responses[str(op.status)] = {
            "description": op.summary,
            "content": {op.response_type: {"schema": {"type": "string",
                                                      "format": "binary"}}}}
    codes = set(op.errors) | ({400} if op.params or op.body else set())
    if not op.public:
        codes |= {401, 403}  # 403: a Keystone token without the roles the method needs
    for code in sorted(codes):
        responses[str(code)] = {"description": "Error", "content": {
            JSON: {"schema": {"$ref": "#/components/schemas/Error"}}}}
    doc: dict[str, Any] = {
        "operationId": f"{method}_{route.resource}",
        "summary": op.summary,
        "parameters": _path_params(route.path) + [
            {"name": p.name, "in": p.where, "required": p.required, "schema": p.schema,
             "description": p.description} for p in op.params],
        "responses": responses,
    }
    if op.tags:
        doc["tags"] = list(op.tags)
    if op.body is not None:
        schema = op.body if op.body_type == JSON else {"type": "string", "format": "binary"}
        doc["requestBody"] = {"required": op.body_required,
                              "content": {op.body_type: {"schema": schema}}}
    if not op.public:
        doc["security"] = [{"token": []}]
    return doc


def openapi(routes: list[Route]) -> dict[str, Any]:
    """The OpenAPI 3.0 document of ``routes``."""
    paths: dict[str, Any] = {}
    for route in routes:
        paths[route.path] = {method: _operation(route, method, op)
                             for method, op in route.operations.items()}
    return {
        "openapi": "3.0.3",
        "info": {"title": "tripleo-flow", "version": __version__,
                 "description": "Plans, workflows and deployments of tripleo-flow. Errors are "
                                "{\"error\": {\"kind\", \"message\", \"hints\"}}: the "
                                "next steps a message suggests are this API's requests "
                                "(hints also name the CLI command that does the same on "
                                "the server, null when only this API does it)."},
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR_SCHEMA},
            "securitySchemes": {"token": {"type": "apiKey", "in": "header",
                                          "name": "X-Auth-Token"}},
        },
    }
