"""Authentication of HTTP requests.

``[api] auth_strategy = token`` (the default) compares ``X-Auth-Token`` with
``[api] auth_token`` in constant time.  ``keystone`` wraps the app in
keystonemiddleware's ``auth_token`` (an optional dependency, imported only
then) and accepts requests it marked ``X-Identity-Status: Confirmed``.
Routes marked public (the OpenAPI document) need no token.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable
from typing import Any

import falcon

from tripleo_flow import exceptions

TOKEN_HEADER = "X-Auth-Token"


class TokenAuth:
    """Falcon middleware: 401 unless the request carries the configured token."""

    def __init__(self, token: str | None, keystone: bool, public: Iterable[str]) -> None:
        self._token = token.encode() if token else None
        self._keystone = keystone
        self._public = frozenset(public)

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.path in self._public:
            return
        if self._keystone:
            if req.get_header("X-Identity-Status") == "Confirmed":
                return
        elif self._token is not None:
            given = (req.get_header(TOKEN_HEADER) or "").encode()
            if hmac.compare_digest(given, self._token):
                return
        raise falcon.HTTPUnauthorized(
            title="Unauthorized",
            description=f"Send a valid token in the {TOKEN_HEADER} header.")


def check_configured(conf: Any) -> None:
    """Refuse to serve an API nobody could authenticate to."""
    if conf.api.auth_strategy == "token" and not conf.api.auth_token:
        raise exceptions.InvalidInput(
            "No [api] auth_token is set, so no request could be authenticated. Set it in the "
            "configuration file (or use [api] auth_strategy = keystone).")


def wrap_keystone(app: Callable[..., Any], conf: Any) -> Callable[..., Any]:
    """Put keystonemiddleware's auth_token in front of ``app`` (options [keystone_authtoken])."""
    try:
        from keystonemiddleware import auth_token
    except ImportError as exc:
        raise exceptions.InvalidInput(
            "[api] auth_strategy is keystone but keystonemiddleware is not installed. "
            "Install it with: pip install keystonemiddleware") from exc
    return auth_token.AuthProtocol(app, {"oslo_config_config": conf,  # type: ignore[no-any-return]
                                         "delay_auth_decision": True})
