"""JSON request bodies checked against the schema their operation declares, in one place,
before any handler runs.

:class:`JsonBodies` (falcon middleware) parses the body of every operation that declares
a JSON body (:class:`tripleo_flow.http.routes.Operation`), checks it against that schema
(:mod:`tripleo_flow.http.schema_check`, in linear time) and leaves it in
``req.context.body`` (read with :func:`body`); a body that does not conform gets a 400
naming the field and what it must be, never echoing the value sent.  As before the
schemas, a field given as null counts as left out.  The parser itself refuses what is
too deep or too large (:mod:`tripleo_flow.http.media`,
:class:`tripleo_flow.http.bodies.JsonBodyLimit`).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any

import falcon

from tripleo_flow import exceptions
from tripleo_flow.http.routes import JSON, Route, shadows
from tripleo_flow.http.schema_check import Problem, problems, supported

#: JSON types as the refusals name them (as the Python API's checks always did).
TYPE_NAMES = {"object": "dict", "array": "list", "string": "str", "boolean": "bool",
              "integer": "int", "number": "float", "null": "None"}
#: JSON types in words, for a choice between fields.
TYPE_WORDS = {"object": "an object", "array": "a list", "string": "a string",
              "boolean": "true or false", "integer": "an integer", "number": "a number"}
NOT_AN_OBJECT = "The request body must be a JSON object."


def body(req: falcon.Request) -> dict[str, Any]:
    """The request's JSON body, as :class:`JsonBodies` checked it (``{}`` when an optional
    body was left out)."""
    checked: dict[str, Any] = req.context.body
    return checked


def parsed(req: falcon.Request) -> Any:
    """The request's JSON body (None when empty); 400 when it is not JSON, or the parser
    refused it (too deep, too many values: :mod:`tripleo_flow.http.media`)."""
    try:
        return req.get_media(default_when_empty=None)
    except falcon.MediaMalformedError as exc:
        cause = exc.__cause__
        if isinstance(cause, exceptions.TripleoFlowError):  # refused by http.media.loads
            raise cause from None
        raise exceptions.InvalidInput(
            f"The request body is not valid JSON: {cause or exc}") from exc


def without_nulls(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` without the null fields of its objects that declare properties."""
    properties = schema.get("properties")
    if not isinstance(value, dict) or not properties:
        return value
    return {k: without_nulls(v, properties.get(k, {})) for k, v in value.items()
            if v is not None}


class JsonBodies:
    """Falcon middleware: the JSON body of each operation of ``routes`` that declares one
    is checked before its handler runs.  A resource may refuse a request before its body
    is read (``refuse_early(req)``: a login on a server without Keystone)."""

    def __init__(self, routes: Iterable[Route]) -> None:
        self.checks: dict[tuple[str, str], tuple[bool, dict[str, Any]]] = {}
        routes = list(routes)
        served = [(route.path, route.operations) for route in routes] + [
            (shadow.literal.path, shadow.methods) for shadow in shadows(routes)]
        for path, operations in served:
            for method, op in operations.items():
                if op.body is None or op.body_type != JSON:
                    continue
                supported(op.body, f"{method.upper()} {path}")
                self.checks[(path, method.upper())] = (op.body_required, op.body)

    def process_resource(self, req: falcon.Request, resp: falcon.Response, resource: Any,
                         params: dict[str, Any]) -> None:
        check = self.checks.get((req.uri_template or "", req.method))
        if resource is None or check is None:
            return
        refuse_early = getattr(resource, "refuse_early", None)
        if refuse_early is not None:
            refuse_early(req)
        required, schema = check
        if not required and not req.content_length:
            req.context.body = {}
            return
        given = parsed(req)
        if not isinstance(given, dict):
            raise exceptions.InvalidInput(NOT_AN_OBJECT)
        given = without_nulls(given, schema)
        problem = first_problem(schema, given)
        if problem is not None:
            raise exceptions.InvalidInput(problem)
        req.context.body = given


def first_problem(schema: dict[str, Any], value: Any) -> str | None:
    """What is wrong with ``value`` (None: nothing): its shallowest problem, in words."""
    first: Problem | None = None
    for problem in problems(schema, value):
        if first is None or len(problem.path) < len(first.path):
            first = problem
            if not first.path:
                break
    return refusal(first) if first is not None else None


def _where(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{str(part)[:60]}" if text else str(part)[:60]
    return repr(text) if text else "The request body"


def _described(message: str, schema: Any) -> str:
    description = schema.get("description", "") if isinstance(schema, dict) else ""
    if not description:
        return f"{message}."
    return f"{message}. {description}" + ("" if description.endswith(".") else ".")


def refusal(error: Problem) -> str:
    """A refusal in HTTP words naming the field (never the value sent)."""
    keyword, expected, schema = error.validator, error.validator_value, error.schema
    where = _where(error.path)
    instance = error.instance
    if keyword == "required":
        missing = next(n for n in expected if n not in instance)
        return _described(f"{where} needs {missing!r}",
                          schema.get("properties", {}).get(missing))
    if keyword == "additionalProperties":
        known = list(schema.get("properties", {}))
        unknown = heapq.nsmallest(10, (str(k)[:40] for k in instance if k not in known))
        takes = ", ".join(repr(k) for k in known)
        return f"Unknown keys {unknown}: {where[0].lower()}{where[1:]} takes {takes}."
    if keyword == "oneOf" and all(set(b) == {"required"} for b in expected):
        names = [b["required"][0] for b in expected]
        properties = schema.get("properties", {})
        kinds = {n: TYPE_WORDS.get(properties.get(n, {}).get("type"), "") for n in names}
        choices = " or ".join(f"{n!r} ({kinds[n]})" if kinds[n] else repr(n) for n in names)
        return f"{where} needs either {choices}, not both."
    return _described(f"{where} {_must(keyword, expected)}", schema)


#: What a value failing a schema keyword must be (``{}``: the keyword's value).
MUST = {"minLength": "must be at least {} characters long",
        "maxLength": "must be at most {} characters long",
        "minItems": "must hold at least {} items", "maxItems": "must hold at most {} items",
        "minimum": "must be at least {}", "maximum": "must be at most {}",
        "pattern": "must match the pattern {}"}


def _must(keyword: str, expected: Any) -> str:
    if keyword == "type":
        kinds: list[str] = expected if isinstance(expected, list) else [expected]
        return f"must be of type {'/'.join(TYPE_NAMES.get(k, k) for k in kinds)}"
    if keyword == "enum":
        return f"must be {' or '.join(repr(v) for v in expected)}"
    if keyword in ("minLength", "minItems") and expected == 1:
        return "must not be empty"
    if keyword in MUST:
        return MUST[keyword].format(expected)
    return f"does not match its schema ({keyword})"
