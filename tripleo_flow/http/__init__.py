"""The HTTP API (GUI backend): a WSGI app over :class:`tripleo_flow.client.Client`.

    >>> from tripleo_flow.http import make_app, serve
    >>> app = make_app(client)            # any WSGI server
    >>> serve(client, "127.0.0.1", 8787)  # waitress, until interrupted
"""

from tripleo_flow.http.app import ROUTES, make_app
from tripleo_flow.http.server import serve

__all__ = ["ROUTES", "make_app", "serve"]
