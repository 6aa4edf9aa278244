"""Authentication of HTTP requests.

``[api] auth_strategy = token`` (the default) compares ``X-Auth-Token`` with
``[api] auth_token`` in constant time.  ``keystone`` puts keystonemiddleware's
``auth_token`` (an optional dependency, imported only then) in front of the
app; the app still accepts only requests it marked ``X-Identity-Status:
Confirmed``, and then checks the token's project (``X-Project-Id``, when
``[api] project_ids`` is set) and roles (``X-Roles``): reading needs one of
``[api] reader_roles`` or ``writer_roles``, changing anything one of
``writer_roles`` (403 otherwise).  Routes marked public (the OpenAPI
document) need no token.

auth_token decides itself (no ``delay_auth_decision``), so a token Keystone
rejects (401) stays distinct from a Keystone that cannot be asked (503: down,
or tripleo-flow's own service credentials refused); :class:`KeystoneAuth`
answers both in the API's JSON error shape.
"""

from __future__ import annotations

import hmac
import io
import ipaddress
import json
import logging
import sys
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

import falcon

from tripleo_flow import exceptions
from tripleo_flow.http import errors

LOG = logging.getLogger(__name__)

TOKEN_HEADER = "X-Auth-Token"
#: The shortest ``[api] auth_token`` accepted when the API listens beyond loopback.
MIN_EXPOSED_TOKEN = 32
#: The fewest different characters such a token may hold (a random hex token of 32
#: has about 14; one below 8 is about three in a million).
MIN_TOKEN_CHARACTERS = 8
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _roles(names: Iterable[str]) -> frozenset[str]:
    return frozenset(n.strip().lower() for n in names if n.strip())


def check_roles(method: str, token_roles: Iterable[str], readers: Iterable[str],
                writers: Iterable[str], secret: bool = False) -> None:
    """Refuse (403) a request whose token has none of the roles its method needs.

    :param secret: what the request reads holds secrets (a backup's archive): reading
        it needs a writer role too
    """
    have, writing = _roles(token_roles), method.upper() not in READ_METHODS
    need = _roles(writers) if writing or secret else _roles(readers) | _roles(writers)
    if have & need:
        return
    option = "[api] writer_roles" if writing or secret else "[api] reader_roles or writer_roles"
    what = ("change anything here" if writing else
            "read this, which holds the cloud's secrets" if secret else "read anything here")
    raise falcon.HTTPForbidden(
        title="Forbidden",
        description=f"The token's roles ({', '.join(sorted(have)) or 'none'}) may not "
                    f"{what}: it needs one of {', '.join(sorted(need))} ({option}). Ask an "
                    "administrator for a role on the project.")


class TokenAuth:
    """Falcon middleware: 401 unless the request carries the configured token (or, with
    Keystone, a confirmed one), 403 when a Keystone token lacks the roles needed.
    A Keystone request's user id is left in ``req.context.user_id``."""

    def __init__(self, token: str | None, keystone: bool, public: Iterable[str],
                 reader_roles: Iterable[str] = (), writer_roles: Iterable[str] = (),
                 project_ids: Iterable[str] = ()) -> None:
        self._token = token.encode() if token else None
        self._keystone = keystone
        self._public = frozenset(public)
        self._readers = tuple(reader_roles)
        self._writers = tuple(writer_roles)
        self._projects = frozenset(p.strip() for p in project_ids if p.strip())

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.path in self._public:
            return
        if self._keystone:
            if req.get_header("X-Identity-Status") == "Confirmed":
                project = req.get_header("X-Project-Id") or ""
                if self._projects and project not in self._projects:
                    raise falcon.HTTPForbidden(
                        title="Forbidden",
                        description=f"Tokens of project {project or '(none)'!r} are not "
                                    "accepted here ([api] project_ids); get a token scoped to "
                                    "the deployment's project.")
                check_roles(req.method, (req.get_header("X-Roles") or "").split(","),
                            self._readers, self._writers)
                req.context.user_id = req.get_header("X-User-Id") or ""
                return
        elif self._token is not None:
            given = (req.get_header(TOKEN_HEADER) or "").encode()
            if hmac.compare_digest(given, self._token):
                return
        raise falcon.HTTPUnauthorized(
            title="Unauthorized",
            description=f"Send a valid token in the {TOKEN_HEADER} header.")

    def process_resource(self, req: falcon.Request, resp: falcon.Response, resource: Any,
                         params: dict[str, Any]) -> None:
        """With Keystone, a resource that serves secrets (``writers_only``: a backup's
        archive) needs a writer role even to be read."""
        if self._keystone and getattr(resource, "writers_only", False):
            check_roles(req.method, (req.get_header("X-Roles") or "").split(","),
                        self._readers, self._writers, secret=True)


def check_configured(conf: Any) -> None:
    """Refuse to serve an API nobody could authenticate to."""
    if conf.api.auth_strategy == "token" and not conf.api.auth_token:
        raise exceptions.InvalidInput(
            "No [api] auth_token is set, so no request could be authenticated. Set it in the "
            "configuration file (or use [api] auth_strategy = keystone).")


def is_loopback(host: str) -> bool:
    """True when ``host`` is ``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(conf: Any, host: str) -> list[str]:
    """Refuse a short shared token on a non-loopback ``host``; the warnings to show.

    :raises InvalidInput: ``[api] auth_token`` is shorter than
        :data:`MIN_EXPOSED_TOKEN` characters and ``host`` is not loopback
    """
    if is_loopback(host):
        return []
    token = conf.api.auth_token or ""
    weakness = _weakness(token) if conf.api.auth_strategy == "token" else ""
    if weakness:
        raise exceptions.InvalidInput(
            f"[api] auth_token {weakness}; listening on {host!r} (not loopback) needs at "
            f"least {MIN_EXPOSED_TOKEN} characters, random ones. Make one with: python3 -c "
            "'import secrets; print(secrets.token_hex(32))', or listen on 127.0.0.1.")
    return [f"The API on {host!r} serves plain HTTP: tokens and plans cross the network "
            "unencrypted. Put a TLS-terminating proxy in front of it, or listen on 127.0.0.1 "
            "and reach it through an SSH tunnel."]


def _weakness(token: str) -> str:
    """Why ``token`` is too easy to guess to be exposed ("" when it is not)."""
    if len(token) < MIN_EXPOSED_TOKEN:
        return f"has {len(token)} characters"
    distinct = len(set(token))
    if distinct < MIN_TOKEN_CHARACTERS:
        return (f"holds only {distinct} different character{'s' if distinct > 1 else ''} "
                f"(at least {MIN_TOKEN_CHARACTERS} needed)")
    for period in range(1, len(token) // 2 + 1):
        if token == (token[:period] * (len(token) // period + 1))[:len(token)]:
            return f"repeats the same {period} characters"
    return ""


def wrap_keystone(app: Callable[..., Any], conf: Any,
                  public: Iterable[str] = ()) -> Callable[..., Any]:
    """Put keystonemiddleware's auth_token (options in [keystone_authtoken]) in front of
    ``app``, except on the ``public`` paths."""
    try:
        from keystonemiddleware import auth_token
    except ImportError as exc:
        raise exceptions.InvalidInput(
            "[api] auth_strategy is keystone but keystonemiddleware is not installed. "
            "Install it with: pip install keystonemiddleware") from exc
    protected = auth_token.AuthProtocol(_mark_reached(app), {"oslo_config_config": conf,
                                                             "delay_auth_decision": False})
    return KeystoneAuth(app, protected, public)


_REACHED = "tripleo_flow.auth_passed"
#: Set in the environ of :meth:`KeystoneAuth.check_token`'s request: it goes no further.
_CHECK_ONLY = "tripleo_flow.token_check"


def _mark_reached(app: Callable[..., Any]) -> Callable[..., Any]:
    def reached(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        environ[_REACHED] = True
        if environ.get(_CHECK_ONLY):
            start_response("204 No Content", [])
            return []
        return app(environ, start_response)
    return reached


class KeystoneAuth:
    """WSGI: ``protected`` (auth_token around the app) for every path but the public ones;
    auth_token's own refusals, and its failures to reach Keystone, become JSON errors."""

    def __init__(self, app: Callable[..., Any], protected: Callable[..., Any],
                 public: Iterable[str]) -> None:
        self._app = app
        self._protected = protected
        self._public = frozenset(public)

    def check_token(self, token: str) -> bool | None:
        """Whether Keystone accepts ``token`` (None: it could not be asked), as auth_token
        decides it for a request: what the server asks before reading a request's body
        (:mod:`tripleo_flow.http.server`)."""
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "SCRIPT_NAME": "",
                   "QUERY_STRING": "", "SERVER_NAME": "localhost", "SERVER_PORT": "80",
                   "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http",
                   "wsgi.input": io.BytesIO(), "wsgi.errors": sys.stderr,
                   "HTTP_X_AUTH_TOKEN": token, _CHECK_ONLY: True}
        statuses: list[str] = []

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            statuses.append(status)
            return lambda data: None

        try:
            result = self._protected(environ, start)
            if hasattr(result, "close"):
                result.close()
        except Exception as exc:  # noqa: BLE001 - auth_token's: the app will say it
            LOG.debug("Cannot check a token with Keystone before its body: %s", exc)
            return None
        if environ.get(_REACHED):
            return True
        return False if statuses and statuses[0].startswith("401") else None

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "").rstrip("/") or "/"  # as falcon routes it
        if path in self._public:
            return self._app(environ, start_response)
        refusal: list[Any] = []

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            if environ.get(_REACHED):
                return start_response(status, headers, exc_info)
            refusal[:] = [status, headers]
            return lambda data: None

        try:
            result = self._protected(environ, capture)
        except Exception as exc:  # noqa: BLE001 - raised by auth_token, not by the app
            if environ.get(_REACHED):
                raise
            LOG.error("Cannot validate a token with Keystone: %s", exc)
            return _answer(start_response, 503, "backend-unavailable", _unavailable(exc), [])
        if environ.get(_REACHED) or not refusal:
            return result
        if hasattr(result, "close"):
            result.close()
        code = int(refusal[0].split()[0])
        keep = [(k, v) for k, v in refusal[1] if k.lower() == "www-authenticate"]
        if code == 401:
            return _answer(start_response, 401, "unauthorized",
                           f"Send a valid Keystone token in the {TOKEN_HEADER} header.", keep)
        if code == 503:
            return _answer(start_response, 503, "backend-unavailable", _unavailable(None), keep)
        return _answer(start_response, code, "error",
                       f"Keystone authentication refused the request ({refusal[0]}).", keep)


def _unavailable(exc: BaseException | None) -> str:
    detail = f" ({exc})" if exc else ""
    return ("Cannot validate the token: Keystone is unreachable or refused tripleo-flow's own "
            f"credentials{detail}. Check auth_url, username, password, project_name and "
            "interface in the [keystone_authtoken] section of the configuration file, and the "
            "server log.")


def _answer(start_response: Callable[..., Any], code: int, kind: str, message: str,
            headers: list[tuple[str, str]]) -> list[bytes]:
    payload = json.dumps(errors.body(kind, message)).encode()
    start_response(f"{code} {HTTPStatus(code).phrase}",
                   [("Content-Type", "application/json"),
                    ("Content-Length", str(len(payload))), *headers])
    return [payload]
