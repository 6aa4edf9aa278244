"""Mistral's standard actions; std.http against a real local HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.actions import std
from tripleo_flow.actions.base import Rerun


class _Handler(BaseHTTPRequestHandler):
    #: the paths of the POST requests received
    posts: list[str] = []

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: Any, content_type: str = "application/json") -> None:
        data = json.dumps(body).encode() if content_type == "application/json" else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", self.path.split("?to=", 1)[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path.startswith("/missing"):
            self._reply(404, {"error": "no such thing"})
        elif self.path.startswith("/text"):
            self._reply(200, b"plain words", "text/plain")
        else:
            self._reply(200, {"path": self.path, "agent": self.headers.get("X-Test")})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        type(self).posts.append(self.path)
        self._reply(201, {"got": self.rfile.read(length).decode(),
                          "type": self.headers.get("Content-Type")})


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    # shutdown() waits for serve_forever's next look (every 0.5 s by default)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _run(cls: type[std.Action], **inputs: Any) -> Any:
    return cls(None).execute(**inputs)


@pytest.mark.parametrize("cls, inputs, expected", [
    (std.Noop, {}, None),
    (std.Echo, {"output": {"a": [1]}}, {"a": [1]}),
    (std.Echo, {}, None),
    (std.Sleep, {"seconds": 0}, None),
])
def test_simple_actions(cls: type[std.Action], inputs: dict[str, Any], expected: Any) -> None:
    assert _run(cls, **inputs) == expected


def test_fail_raises_with_data() -> None:
    with pytest.raises(std.ActionFailed, match="std.fail was called: oops"):
        _run(std.Fail, error_data="oops")


def test_http_get_json_with_params_and_headers(server: str) -> None:
    result = _run(std.Http, url=f"{server}/thing", params={"q": "1"},
                  headers={"X-Test": "yes"}, timeout=5)
    assert result["status"] == 200
    assert result["content"] == {"path": "/thing?q=1", "agent": "yes"}


def test_http_post_json_body(server: str) -> None:
    result = _run(std.Http, url=f"{server}/make", method="post", json={"n": 1})
    assert result["status"] == 201
    assert result["content"] == {"got": '{"n": 1}', "type": "application/json"}


def test_a_second_run_sends_the_request_again(server: str) -> None:
    """std.http is Rerun.CALLER: a resumed task sends its request once more, and what that
    does is the server's own semantics (a workflow whose request must not be repeated
    marks its task ``safe-rerun: false``)."""
    assert std.Http.rerun is Rerun.CALLER
    _Handler.posts.clear()
    inputs = {"url": f"{server}/orders", "method": "POST", "body": {"n": 1}}
    first, second = _run(std.Http, **inputs), _run(std.Http, **inputs)
    assert first == second
    assert _Handler.posts == ["/orders", "/orders"]


def test_http_text_content(server: str) -> None:
    assert _run(std.Http, url=f"{server}/text")["content"] == "plain words"


def test_http_error_status_fails(server: str) -> None:
    with pytest.raises(std.ActionFailed, match="returned 404"):
        _run(std.Http, url=f"{server}/missing")


def test_http_unreachable_fails() -> None:
    with pytest.raises(std.ActionFailed, match="failed"):
        _run(std.Http, url="http://127.0.0.1:9/", timeout=2)


@pytest.mark.parametrize("url", [
    "file:///etc/passwd", "FILE:///etc/hostname", "ftp://127.0.0.1:9/x", "data:,secret",
    "/etc/passwd", "http:///etc/passwd", "gopher://127.0.0.1:9/", 42,
])
def test_http_refuses_other_schemes(url: Any) -> None:
    with pytest.raises(exceptions.InvalidInput, match="only sends http:// and https://"):
        _run(std.Http, url=url, timeout=2)


@pytest.mark.parametrize("to", ["ftp://127.0.0.1:9/x", "file:///etc/passwd"])
def test_http_refuses_a_redirect_to_another_scheme(server: str, to: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match="only sends http:// and https://"):
        _run(std.Http, url=f"{server}/redirect?to={to}", timeout=2)


def test_http_follows_a_redirect_to_http(server: str) -> None:
    result = _run(std.Http, url=f"{server}/redirect?to={server}/thing", timeout=5)
    assert result["content"] == {"path": "/thing", "agent": None}
