"""The web GUI's static files, served by the API at ``/`` (no token needed for them).

The GUI is a thin client of ``/v1/...``: it keeps the API token in the browser's
``sessionStorage`` and sends it in the ``X-Auth-Token`` header, never in a URL.
Only the files of :data:`FILES` are served, read once from the package, each with
its own content type, a strict Content-Security-Policy and no caching; any other
path is the API's JSON 404, so no request can name a file of the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import falcon

#: URL path -> (file of ``tripleo_flow/http/static``, its content type).
FILES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/gui/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/gui/api.js": ("api.js", "text/javascript; charset=utf-8"),
    "/gui/backups.js": ("backups.js", "text/javascript; charset=utf-8"),
    "/gui/deployfiles.js": ("deployfiles.js", "text/javascript; charset=utf-8"),
    "/gui/follow.js": ("follow.js", "text/javascript; charset=utf-8"),
    "/gui/graph.js": ("graph.js", "text/javascript; charset=utf-8"),
    "/gui/lifecycle.js": ("lifecycle.js", "text/javascript; charset=utf-8"),
    "/gui/nodes.js": ("nodes.js", "text/javascript; charset=utf-8"),
    "/gui/roles.js": ("roles.js", "text/javascript; charset=utf-8"),
    "/gui/scale.js": ("scale.js", "text/javascript; charset=utf-8"),
    "/gui/passwords.js": ("passwords.js", "text/javascript; charset=utf-8"),
    "/gui/stackheat.js": ("stackheat.js", "text/javascript; charset=utf-8"),
    "/gui/validations.js": ("validations.js", "text/javascript; charset=utf-8"),
    "/gui/workflows.js": ("workflows.js", "text/javascript; charset=utf-8"),
    "/gui/dom.js": ("dom.js", "text/javascript; charset=utf-8"),
    "/gui/environments.js": ("environments.js", "text/javascript; charset=utf-8"),
    "/gui/userenvs.js": ("userenvs.js", "text/javascript; charset=utf-8"),
    "/gui/executions.js": ("executions.js", "text/javascript; charset=utf-8"),
    "/gui/complete.js": ("complete.js", "text/javascript; charset=utf-8"),
    "/gui/login.js": ("login.js", "text/javascript; charset=utf-8"),
    "/gui/parameters.js": ("parameters.js", "text/javascript; charset=utf-8"),
    "/gui/plan.js": ("plan.js", "text/javascript; charset=utf-8"),
    "/gui/plans.js": ("plans.js", "text/javascript; charset=utf-8"),
    "/gui/app.css": ("app.css", "text/css; charset=utf-8"),
}

#: Scripts, styles and requests only from this server; no inline code, frames,
#: plugins, form posts elsewhere or <base> changes.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")

HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@dataclass(frozen=True)
class StaticFile:
    """One file of the GUI, its bytes read as the app is built."""

    data: bytes
    content_type: str

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.data = self.data
        resp.content_type = self.content_type
        resp.set_headers(HEADERS)

    def on_head(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.on_get(req, resp)


def static_files() -> dict[str, StaticFile]:
    """URL path -> :class:`StaticFile`, for every entry of :data:`FILES`."""
    folder = resources.files("tripleo_flow.http") / "static"
    return {path: StaticFile((folder / name).read_bytes(), kind)
            for path, (name, kind) in FILES.items()}


def add_routes(app: falcon.App) -> list[str]:
    """Route the GUI's files on ``app``; their paths (public: no token)."""
    for path, resource in static_files().items():
        app.add_route(path, resource)
    return list(FILES)
