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
from tripleo_flow.http.plans import field, json_object

LOG = logging.getLogger(__name__)

#: Longest user name, project or domain name Keystone stores; longest password sent.
MAX_NAME = 255
MAX_PASSWORD = 4096


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


def _name(media: dict[str, Any], key: str, default: Any = ...) -> str:
    value = field(media, key, str, default)
    if not value or len(value) > MAX_NAME or "\x00" in value:
        raise exceptions.InvalidInput(f"{key!r} must be 1 to {MAX_NAME} characters.")
    return str(value)


class Tokens:
    """``POST /v1/auth/tokens`` with ``username``, ``password``, ``project`` (and
    ``user_domain`` / ``project_domain``, ``Default`` unless given): a Keystone token
    scoped to that project, and when it expires."""

    def __init__(self, conf: Any) -> None:
        self.conf = conf

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        if self.conf.api.auth_strategy != "keystone":
            raise exceptions.InvalidInput(
                "This server does not use Keystone ([api] auth_strategy = token): send its "
                "API token in the X-Auth-Token header instead of logging in.")
        media = json_object(req)
        username = _name(media, "username")
        password = field(media, "password", str)
        if not password or len(password) > MAX_PASSWORD:
            raise exceptions.InvalidInput(f"'password' must be 1 to {MAX_PASSWORD} characters.")
        project = _name(media, "project")
        user_domain = _name(media, "user_domain", "Default")
        project_domain = _name(media, "project_domain", "Default")
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
