"""How a resource module declares its routes: each :class:`Route` names its path, how its
resource is built from the server's :class:`Services`, and one :class:`Operation` per
method (its OpenAPI summary, parameters, responses and JSON body schema).

The app (:mod:`tripleo_flow.http.app`) routes exactly what the modules declare, the
OpenAPI document (:mod:`tripleo_flow.http.spec`) is built from the same declarations, and
a request body is checked against its operation's schema before the handler runs
(:class:`tripleo_flow.http.bodies.JsonBodies`).  No I/O here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tripleo_flow.api import Client
    from tripleo_flow.api.paths import ServerPaths
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


def with_client(resource: Callable[[Any], Any]) -> Callable[[Services], Any]:
    """``make`` for a resource built from the Python API alone."""
    return lambda services: resource(services.client)
