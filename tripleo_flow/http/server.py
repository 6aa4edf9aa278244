"""Serve the HTTP API with waitress (a production WSGI server, pure Python).

Waitress reads a whole request, body included, before the application sees it,
so ``[api] max_upload_size`` is enforced twice: waitress gets a limit
:data:`BODY_SLACK` bytes above it and refuses a far larger body as soon as its
Content-Length is read, or as it streams in chunked, before buffering it; the
application checks the exact limit (:mod:`tripleo_flow.http.bodies`).  Waitress's
own error answers (413, 400 for a malformed request) are given the API's JSON
error shape and, for 413, the application's message.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.http import auth, errors

if TYPE_CHECKING:
    from tripleo_flow.api import Client

LOG = logging.getLogger(__name__)

#: Bytes above ``[api] max_upload_size`` that waitress lets through to the application.
BODY_SLACK = 1 << 20


def waitress_body_limit(max_upload: int) -> int:
    """waitress's ``max_request_body_size`` for ``[api] max_upload_size`` (0: no limit)."""
    return max_upload + BODY_SLACK if max_upload else sys.maxsize


class JsonError:
    """A waitress error answer (it calls :meth:`to_response`) with a JSON body."""

    def __init__(self, code: int, reason: str, kind: str, message: str) -> None:
        self.code = code
        self.reason = reason
        self.body = message
        self.kind = kind

    def to_response(self, ident: str | None = None) -> tuple[str, list[tuple[str, str]], bytes]:
        payload = json.dumps(errors.body(self.kind, self.body)).encode("utf-8")
        return f"{self.code} {self.reason}", [("Content-Type", "application/json")], payload


def _channel_class(max_upload: int) -> type:
    """waitress's channel whose error answers are :class:`JsonError`."""
    from waitress.channel import HTTPChannel
    from waitress.task import ErrorTask

    class JsonErrorTask(ErrorTask):  # type: ignore[misc]
        def execute(self) -> None:
            error = self.request.error
            code, reason = int(error.code), str(error.reason)
            if code == 413:
                message = str(exceptions.BodyTooLarge(max_upload))
            else:
                message = f"{reason}: {error.body}"
            self.request.error = JsonError(code, reason, errors.kind_of(code), message)
            super().execute()

    class JsonErrorChannel(HTTPChannel):  # type: ignore[misc]
        error_task_class = JsonErrorTask

    return JsonErrorChannel


def make_server(client: Client, host: str | None = None, port: int | None = None,
                threads: int | None = None) -> Any:
    """A waitress server bound to ``host:port`` (``[api]`` values by default), not yet
    serving: call ``.run()``, ``.close()`` to stop.  Port 0 picks a free port
    (``.effective_port``)."""
    import waitress.server

    from tripleo_flow.http.app import make_app

    conf = client.conf
    bind_host = host or conf.api.host
    for warning in auth.check_exposure(conf, bind_host):
        LOG.warning("%s", warning)
    app = make_app(client)
    # Warm the workflow engine so concurrent first requests share one runner.
    client.list_workflows()
    client.list_executions()
    bind_port = conf.api.port if port is None else port
    max_upload = conf.api.max_upload_size
    sockets: dict[Any, Any] = {}
    try:
        server = waitress.server.create_server(
            app, map=sockets, host=bind_host, port=bind_port,
            threads=threads or conf.api.threads, ident="tripleo-flow",
            clear_untrusted_proxy_headers=True,
            max_request_body_size=waitress_body_limit(max_upload))
    except OSError as exc:
        raise exceptions.Conflict(
            f"Cannot listen on {bind_host}:{bind_port}: {exc.strerror}. Stop what uses it, "
            "or choose another with --port or [api] port.") from exc
    channel = _channel_class(max_upload)
    for listener in {id(s): s for s in [server, *sockets.values()]}.values():
        if hasattr(listener, "channel_class"):
            listener.channel_class = channel
    return server


def serve(client: Client, host: str | None = None, port: int | None = None) -> None:
    """Serve until interrupted."""
    server = make_server(client, host, port)
    LOG.info("tripleo-flow API on http://%s:%s/v1/", server.effective_host,
             server.effective_port)
    try:
        server.run()
    finally:
        server.close()
