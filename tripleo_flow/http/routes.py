"""How a resource module declares its routes: each :class:`Route` names its path, how its
resource is built from the server's :class:`Services`, and one :class:`Operation` per
method (its OpenAPI summary, parameters, responses and JSON body schema).

The app (:mod:`tripleo_flow.http.app`) routes exactly what the modules declare, the
OpenAPI document (:mod:`tripleo_flow.http.spec`) is built from the same declarations, and
a request body is checked against its operation's schema before the handler runs
(:class:`tripleo_flow.http.json_bodies.JsonBodies`).  No I/O here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tripleo_flow.client import Client
    from tripleo_flow.client.paths import ServerPaths
    from tripleo_flow.http.events import StreamSlots

PLAN_NAME = {"type": "string", "pattern": "^[a-zA-Z0-9][a-zA-Z0-9-]*$", "maxLength": 128}
OBJECT: dict[str, Any] = {"type": "object"}
ARRAY: dict[str, Any] = {"type": "array", "items": {}}
STRING: dict[str, Any] = {"type": "string"}
BOOL: dict[str, Any] = {"type": "boolean"}
GZIP = "application/gzip"
JSON = "application/json"
SSE = "text/event-stream"
#: Errors of a route that takes an archive body (413: past [api] max_upload_size).
UPLOAD_ERRORS = (400, 404, 409, 413, 503)


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
    """One method of a route: what it does, what it takes, what it answers.

    A JSON ``body`` is the schema the request body is checked against before the
    handler runs (a field given as null counts as left out); ``body_required=False``:
    an empty body is accepted (the handler reads ``{}``)."""

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
class Services:
    """What resources are built from (the app makes one)."""

    client: Client
    paths: ServerPaths
    upload_dir: Path
    upload: Any  #: the :class:`tripleo_flow.http.uploads.Upload` of ``upload_dir``
    sse_interval: float
    redact: Callable[[bytes], bytes]
    stream_slots: StreamSlots
    routes: tuple[Route, ...]  #: every route the app serves


@dataclass(frozen=True)
class Route:
    """A path, the resource that serves it (``make``), and its operations by method.
    ``name`` names its operations in the OpenAPI document (``<method>_<name>``)."""

    path: str
    name: str
    make: Callable[[Services], Any]
    operations: dict[str, Operation]


@dataclass(frozen=True)
class Shadow:
    """A literal path that hides a templated sibling's value: falcon routes
    ``/v1/workbooks/validate`` to the literal route, so a workbook named ``validate``
    would answer 405 to GET and DELETE.  The methods the literal route lacks are served by
    the templated route with its parameter set to the literal segment (as the OpenAPI
    document promises for ``/v1/workbooks/{workbook}``)."""

    literal: Route
    templated: Route
    param: str
    value: str

    @property
    def methods(self) -> dict[str, Operation]:
        """The templated route's operations the literal route does not serve itself."""
        return {m: op for m, op in self.templated.operations.items()
                if m not in self.literal.operations}


def shadows(routes: tuple[Route, ...] | list[Route]) -> list[Shadow]:
    """Every literal route of ``routes`` whose last segment is also a valid value of a
    templated sibling (same parent path, last segment ``{param}``)."""
    templated = {}
    for route in routes:
        parent, _, last = route.path.rpartition("/")
        if last.startswith("{") and last.endswith("}"):
            templated[parent] = (route, last[1:-1])
    found = []
    for route in routes:
        parent, _, last = route.path.rpartition("/")
        if "{" not in last and parent in templated:
            sibling, param = templated[parent]
            shadow = Shadow(route, sibling, param, last)
            if shadow.methods:
                found.append(shadow)
    return found


def with_client(resource: Callable[[Any], Any]) -> Callable[[Services], Any]:
    """``make`` for a resource built from the Python API alone."""
    return lambda services: resource(services.client)
