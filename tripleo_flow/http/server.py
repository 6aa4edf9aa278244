"""Serve the HTTP API with waitress (a production WSGI server, pure Python)."""

from __future__ import annotations

import logging
from typing import Any

from tripleo_flow import exceptions

LOG = logging.getLogger(__name__)


def make_server(client: Any, host: str | None = None, port: int | None = None,
                threads: int | None = None) -> Any:
    """A waitress server bound to ``host:port`` (``[api]`` values by default), not yet
    serving: call ``.run()``, ``.close()`` to stop.  Port 0 picks a free port
    (``.effective_port``)."""
    import waitress.server

    from tripleo_flow.http.app import make_app

    conf = client.conf
    app = make_app(client)
    # Warm the workflow engine so concurrent first requests share one runner.
    client.list_workflows()
    client.list_executions()
    bind_host = host or conf.api.host
    bind_port = conf.api.port if port is None else port
    try:
        return waitress.server.create_server(
            app, host=bind_host, port=bind_port, threads=threads or conf.api.threads,
            ident="tripleo-flow", clear_untrusted_proxy_headers=True)
    except OSError as exc:
        raise exceptions.Conflict(
            f"Cannot listen on {bind_host}:{bind_port}: {exc.strerror}. Stop what uses it, "
            "or choose another with --port or [api] port.") from exc


def serve(client: Any, host: str | None = None, port: int | None = None) -> None:
    """Serve until interrupted."""
    server = make_server(client, host, port)
    LOG.info("tripleo-flow API on http://%s:%s/v1/", server.effective_host,
             server.effective_port)
    try:
        server.run()
    finally:
        server.close()
