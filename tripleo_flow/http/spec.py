"""The OpenAPI document of the HTTP API, built from the routes the resource modules
declare (:mod:`tripleo_flow.http.routes`), so the document cannot drift from what is
served; and ``GET /v1/openapi.json``, which serves it.  No I/O here.
"""

from __future__ import annotations

from typing import Any

import falcon

from tripleo_flow import __version__
from tripleo_flow.http.routes import GZIP, JSON, PLAN_NAME, Operation, Param, Route

__all__ = ["GZIP", "JSON", "PLAN_NAME", "ROUTES", "Operation", "Param", "Route", "openapi"]

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
        "operationId": f"{method}_{route.name}",
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


def openapi(routes: list[Route] | tuple[Route, ...]) -> dict[str, Any]:
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


class OpenAPI:
    """``GET /v1/openapi.json``: the document of every route the app serves."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.document


ROUTES = [
    Route("/v1/openapi.json", "openapi", lambda s: OpenAPI(openapi(s.routes)), {
        "get": Operation("This OpenAPI document", public=True, errors=())}),
]
