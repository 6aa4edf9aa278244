"""KeystoneAuth: which answers reach the client, for each thing auth_token can do.

``protected`` stands for keystonemiddleware's auth_token around the app: a plain WSGI
callable that either passes the request on to the app it wraps or answers itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tripleo_flow.http import auth

WWW = ("WWW-Authenticate", 'Keystone uri="http://keystone:5000/v3"')


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain"), ("X-From", "app")])
    return [b"app"]


def passes(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    return auth._mark_reached(app)(environ, start_response)


def refuses(status: str) -> Callable[..., Any]:
    def protected(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        start_response(status, [("Content-Type", "application/json"), WWW])
        return [b'{"error": {"code": 0}}']
    return protected


def raises(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    raise RuntimeError("internal endpoint for identity service not found")


def app_fails_after_auth(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    environ[auth._REACHED] = True
    raise ValueError("the app's own bug")


def call(wsgi: Callable[..., Any], path: str) -> tuple[str, dict[str, str], bytes]:
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        seen.update(status=status, headers=dict(headers))
        return lambda data: None

    body = b"".join(wsgi({"PATH_INFO": path, "REQUEST_METHOD": "GET"}, start_response))
    return seen["status"], seen["headers"], body


@pytest.mark.parametrize("protected, path, status, kind, www", [
    (passes, "/v1/plans", "200 OK", None, False),
    (refuses("401 Unauthorized"), "/v1/plans", "401 Unauthorized", "unauthorized", True),
    # auth_token's WWW-Authenticate (where to get a token) is kept on any refusal.
    (refuses("503 Service Unavailable"), "/v1/plans", "503 Service Unavailable",
     "backend-unavailable", True),
    (refuses("400 Bad Request"), "/v1/plans", "400 Bad Request", "error", True),
    (raises, "/v1/plans", "503 Service Unavailable", "backend-unavailable", False),
    # Public paths never reach auth_token, with or without a trailing slash.
    (raises, "/v1/openapi.json", "200 OK", None, False),
    (raises, "/v1/openapi.json/", "200 OK", None, False),
])
def test_answers(protected: Callable[..., Any], path: str, status: str, kind: str | None,
                 www: bool) -> None:
    wsgi = auth.KeystoneAuth(app, protected, ["/v1/openapi.json"])
    got_status, headers, body = call(wsgi, path)
    assert got_status == status
    if kind is None:
        assert body == b"app" and headers["X-From"] == "app"
        return
    error = json.loads(body)["error"]
    assert error["kind"] == kind
    assert headers["Content-Length"] == str(len(body))
    assert ("WWW-Authenticate" in headers) is www
    if kind == "backend-unavailable":
        assert "[keystone_authtoken]" in error["message"]
    if protected is raises:
        assert "internal endpoint for identity service not found" in error["message"]


def test_an_error_of_the_app_itself_is_not_blamed_on_keystone() -> None:
    wsgi = auth.KeystoneAuth(app, app_fails_after_auth, [])
    with pytest.raises(ValueError, match="the app's own bug"):
        call(wsgi, "/v1/plans")


READERS, WRITERS = ["reader", "member", "admin"], ["member", "admin"]


@pytest.mark.parametrize("method, roles, allowed", [
    ("GET", ["reader"], True),
    ("HEAD", ["Member"], True),           # role names compare without case
    ("GET", ["admin"], True),
    ("GET", [], False),
    ("GET", ["load-balancer_observer"], False),
    ("POST", ["reader"], False),
    ("DELETE", ["reader", " member "], True),
    ("PUT", ["admin"], True),
    ("PATCH", [""], False),
])
def test_check_roles(method: str, roles: list[str], allowed: bool) -> None:
    import falcon

    if allowed:
        auth.check_roles(method, roles, READERS, WRITERS)
        return
    with pytest.raises(falcon.HTTPForbidden) as refused:
        auth.check_roles(method, roles, READERS, WRITERS)
    message = refused.value.description
    assert ("writer_roles" in message) and ("member" in message)


@pytest.mark.parametrize("method, roles, allowed", [
    ("GET", ["reader"], False), ("HEAD", ["reader"], False), ("GET", ["Member"], True),
    ("DELETE", ["admin"], True), ("DELETE", ["reader"], False),
])
def test_what_holds_secrets_needs_a_writer_role_even_to_be_read(
        method: str, roles: list[str], allowed: bool) -> None:
    import falcon

    if allowed:
        auth.check_roles(method, roles, READERS, WRITERS, secret=True)
        return
    with pytest.raises(falcon.HTTPForbidden) as refused:
        auth.check_roles(method, roles, READERS, WRITERS, secret=True)
    assert "[api] writer_roles" in refused.value.description


@pytest.mark.parametrize("path, public", [
    ("/", True), ("/gui/app.js", True), ("/gui/app.js/", True),
    ("/v1/plans", False), ("/gui/other.js", False), ("//", True), ("/x/", False),
])
def test_the_gui_files_need_no_keystone_token(path: str, public: bool) -> None:
    wsgi = auth.KeystoneAuth(app, refuses("401 Unauthorized"), ["/v1/openapi.json", "/",
                                                                "/gui/app.js"])
    status, _, body = call(wsgi, path)
    assert (status, body == b"app") == (("200 OK", True) if public else ("401 Unauthorized",
                                                                        False))
