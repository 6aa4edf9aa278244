"""How a browser logs in: ``GET /v1/auth`` says how the server authenticates, and with
``[api] auth_strategy = keystone`` ``POST /v1/auth/tokens`` trades a Keystone user name
and password for a Keystone token (the one every other request then sends).

The Keystone asked is the one the configuration names (``[keystone_authtoken]
www_authenticate_uri``, else ``auth_url``), never one a request names.  The password
goes to Keystone and nowhere else: not logged, not stored, not in an answer.  Both
routes are public (a caller has no token yet).
"""

from __future__ import annotations

import logging
from typing import Any

import falcon

from tripleo_flow import exceptions
from tripleo_flow.http.json_bodies import body
from tripleo_flow.http.routes import Operation, Route

LOG = logging.getLogger(__name__)

#: Longest user name, project or domain name Keystone stores; longest password sent.
MAX_NAME = 255
MAX_PASSWORD = 4096
#: A user, project or domain name: 1 to MAX_NAME characters, no NUL.
NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME, "pattern": "^[^\\x00]*$"}


class AuthInfo:
    """``GET /v1/auth``: ``{"strategy": "token" | "keystone"}``."""

    def __init__(self, conf: Any) -> None:
        self.conf = conf

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"strategy": self.conf.api.auth_strategy}


def keystone_url(conf: Any) -> str:
    """The Keystone users log in to: the configuration's, or InvalidInput naming it."""
    for option in ("www_authenticate_uri", "auth_url"):
        try:
            value = getattr(conf.keystone_authtoken, option)
        except (AttributeError, LookupError):  # not registered (no auth plugin loaded yet)
            continue
        if value:
            return str(value).rstrip("/")
    raise exceptions.InvalidInput(
        "The server has no Keystone URL to log in to: set www_authenticate_uri in the "
        "[keystone_authtoken] section of its configuration file.")


class Tokens:
    """``POST /v1/auth/tokens`` with ``username``, ``password``, ``project`` (and
    ``user_domain`` / ``project_domain``, ``Default`` unless given): a Keystone token
    scoped to that project, and when it expires."""

    def __init__(self, conf: Any) -> None:
        self.conf = conf

    def refuse_early(self, req: falcon.Request) -> None:
        """Before the body is checked: this server may have no login at all."""
        if self.conf.api.auth_strategy != "keystone":
            raise exceptions.InvalidInput(
                "This server does not use Keystone ([api] auth_strategy = token): send its "
                "API token in the X-Auth-Token header instead of logging in.")

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.refuse_early(req)
        media = body(req)
        username, password, project = media["username"], media["password"], media["project"]
        user_domain = media.get("user_domain", "Default")
        project_domain = media.get("project_domain", "Default")
        from keystoneauth1 import exceptions as ks_exceptions
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        url = keystone_url(self.conf)
        auth = v3.Password(auth_url=url if url.endswith("/v3") else url + "/v3",
                           username=username, password=password, project_name=project,
                           user_domain_name=user_domain, project_domain_name=project_domain)
        try:
            access = auth.get_access(session.Session(timeout=30))
        except ks_exceptions.Unauthorized as exc:
            raise falcon.HTTPUnauthorized(
                title="unauthorized",
                description="Keystone refused this user name, password, project or domain."
            ) from exc
        except ks_exceptions.ClientException as exc:
            LOG.warning("Logging %r in with Keystone at %s failed: %s", username, url,
                        type(exc).__name__)
            raise exceptions.BackendUnavailable(
                f"Cannot log in: Keystone did not answer as expected ({type(exc).__name__}). "
                "Try again; if it lasts, check [keystone_authtoken] www_authenticate_uri and "
                "the server log.") from exc
        expires = access.expires.isoformat() if access.expires else None
        resp.media = {"token": access.auth_token, "expires_at": expires,
                      "user": username, "project": project}


ROUTES = [
    Route("/v1/auth", "auth_info", lambda s: AuthInfo(s.client.conf), {
        "get": Operation("How this server authenticates: token or keystone", public=True,
                         errors=(), tags=("auth",))}),
    Route("/v1/auth/tokens", "auth_tokens", lambda s: Tokens(s.client.conf), {
        "post": Operation(
            "Log in with a Keystone user name and password (auth_strategy keystone): a "
            "token scoped to the project", public=True, tags=("auth",),
            errors=(400, 401, 503),
            body={"type": "object", "required": ["username", "password", "project"],
                  "properties": {"username": NAME,
                                 "password": {"type": "string", "minLength": 1,
                                              "maxLength": MAX_PASSWORD},
                                 "project": NAME, "user_domain": NAME,
                                 "project_domain": NAME}})}),
]
