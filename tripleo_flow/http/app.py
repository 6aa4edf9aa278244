"""The WSGI application of the HTTP API (falcon), built from :data:`ROUTES`: the routes
each resource module declares (:mod:`tripleo_flow.http.routes`), their request bodies
checked against their declared schemas (:mod:`tripleo_flow.http.json_bodies`).

Handlers call only :class:`tripleo_flow.client.Client`; errors come back as
``{"error": {"kind", "message"}}`` (:mod:`tripleo_flow.http.errors`).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import falcon

import tripleo_flow
from tripleo_flow.client.paths import ServerPaths, purge_downloads
from tripleo_flow.common.path_redaction import PathRedactor, server_roots
from tripleo_flow.http import (
    action_executions,
    auth,
    backups,
    bodies,
    downloads,
    errors,
    events,
    gui,
    hint_words,
    json_bodies,
    login,
    media,
    nodes,
    plans,
    spec,
    stackheat,
    uploads,
    validations,
    workbooks,
    workflows,
)
from tripleo_flow.http.routes import Route, Services, Shadow, shadows

if TYPE_CHECKING:
    from tripleo_flow.client import Client

#: Every route of the API, as the resource modules declare them: the app serves these
#: and nothing else (but the GUI's files), and the OpenAPI document lists them.
ROUTES: list[Route] = [
    *spec.ROUTES, *login.ROUTES, *plans.ROUTES, *nodes.ROUTES, *validations.ROUTES,
    *backups.ROUTES, *uploads.ROUTES, *downloads.ROUTES, *workflows.WORKFLOW_ROUTES,
    *workbooks.ROUTES, *stackheat.ROUTES, *action_executions.ROUTES,
    *workflows.EXECUTION_ROUTES,
]


def public_paths() -> list[str]:
    """The paths any client may ask without a token: the public routes and the GUI."""
    return [r.path for r in ROUTES if all(op.public for op in r.operations.values())] + list(
        gui.FILES)


def stream_limit(max_event_streams: int, threads: int) -> int:
    """Event streams open at once: ``[api] max_event_streams``, and always fewer than the
    request threads, so that other requests find one."""
    return max(1, min(max_event_streams, threads - 1))


def upload_dir(client: Client) -> Path:
    """Where ``POST /v1/uploads`` keeps archives: ``<data_dir>/uploads``."""
    return Path(client.data_dir) / "uploads"


def server_paths(client: Client) -> ServerPaths:
    """What a workflow started over HTTP may read and write (:mod:`tripleo_flow.client.paths`)."""
    api = client.conf.api
    return ServerPaths.for_data_dir(Path(client.data_dir), api.allowed_paths, api.upload_ttl)


def redactor(client: Client) -> PathRedactor:
    """What takes the server's paths out of every answer
    (:mod:`tripleo_flow.common.path_redaction`)."""
    conf = client.conf
    others = [conf.heat.venv, conf.ironic.venv, conf.ansible.venv, conf.validations.venv,
              sys.prefix, str(Path.home()), str(Path(tripleo_flow.__file__).parents[1]),
              os.getcwd()]
    return PathRedactor(server_roots(str(client.data_dir), others,
                                     [tempfile.gettempdir(), "/dev/shm"]))


def services(client: Client, sse_interval: float, redact: PathRedactor,
             threads: int) -> Services:
    """What the resources of :data:`ROUTES` are built from."""
    uploaded = upload_dir(client)
    return Services(client=client, paths=server_paths(client), upload_dir=uploaded,
                    upload=uploads.Upload(uploaded), sse_interval=sse_interval,
                    redact=redact.json_bytes,
                    stream_slots=events.StreamSlots(
                        stream_limit(client.conf.api.max_event_streams, threads)),
                    routes=tuple(ROUTES))


def _falling_back(shadow: Shadow, literal: Any, templated: Any) -> Any:
    """``literal``'s resource, with the methods it lacks answered by ``templated``'s for
    the value the literal path names (:class:`~tripleo_flow.http.routes.Shadow`)."""
    responders = {}
    for method in shadow.methods:
        def respond(_self: Any, req: Any, resp: Any, _m: str = method) -> None:
            getattr(templated, f"on_{_m}")(req, resp, **{shadow.param: shadow.value})
        responders[f"on_{method}"] = respond
    # falcon finds a resource's responders on its class
    return type(f"{type(literal).__name__}OrNamed", (), {
        **responders, "__getattr__": lambda self, name: getattr(literal, name)})()


def make_app(client: Client, sse_interval: float = 0.2, threads: int | None = None) -> Any:
    """The WSGI app over ``client`` (a :class:`tripleo_flow.client.Client`); its ``[api]``
    options choose the authentication and the upload limits.  Uploads older than
    ``[api] upload_ttl`` are deleted here, as the server starts.

    :param threads: the request threads of the server (default ``[api] threads``): fewer
        event streams than these may be open at once"""
    hint_words.install()  # errors name their next steps as this API's requests
    conf = client.conf
    auth.check_configured(conf)
    uploads.purge_expired(upload_dir(client), conf.api.upload_ttl)
    purge_downloads(server_paths(client).downloads, conf.api.upload_ttl)
    keystone = conf.api.auth_strategy == "keystone"
    public = public_paths()
    middleware: list[Any] = [
        auth.TokenAuth(conf.api.auth_token, keystone, public, conf.api.reader_roles,
                       conf.api.writer_roles, conf.api.project_ids),
        bodies.JsonBodyLimit(conf.api.max_json_size), json_bodies.JsonBodies(ROUTES)]
    app = falcon.App(middleware=middleware)
    app.req_options.strip_url_path_trailing_slash = True
    redact = redactor(client)
    json_handler = media.handler(conf.limits.yaml_max_depth, conf.limits.yaml_max_nodes,
                                 redact.json_bytes)
    app.req_options.media_handlers[falcon.MEDIA_JSON] = json_handler
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = json_handler
    errors.install(app)
    built = services(client, sse_interval, redact, threads or conf.api.threads)
    made = {route.path: route.make(built) for route in ROUTES}
    for shadow in shadows(ROUTES):
        made[shadow.literal.path] = _falling_back(shadow, made[shadow.literal.path],
                                                  made[shadow.templated.path])
    for path, resource in made.items():
        app.add_route(path, resource)
    gui.add_routes(app)
    return auth.wrap_keystone(app, conf, public) if keystone else app
