"""Upload limits and expiry over real HTTP (waitress on 127.0.0.1) and, for a body
without Content-Length that waitress would never pass on, through the WSGI app.

``[api] max_upload_size`` answers 413 with the same JSON message whether the
application (a body up to :data:`BODY_SLACK` past the limit) or waitress (a far
larger one, before buffering it) refuses it; nothing is left on disk.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import socket
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import falcon.testing
import pytest

from tests.fixtures_plans import make_client
from tests.functional.http.conftest import Api, running_api
from tripleo_flow.http.app import make_app
from tripleo_flow.http.server import BODY_SLACK
from tripleo_flow.plans.local import LocalStore

LIMIT = 4096
GZIP = {"Content-Type": "application/gzip"}


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[Api]:
    with running_api(tmp_path, {"api": {"max_upload_size": LIMIT}}) as api:
        yield api


def _uploads(api: Api) -> Path:
    return Path(api.client.data_dir) / "uploads"


def _names(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()} if directory.exists() else set()


def _check_too_large(status: int, body: dict[str, Any]) -> None:
    assert status == 413
    assert body["error"]["kind"] == "too-large"
    message = body["error"]["message"]
    assert f"limit of {LIMIT} bytes" in message and "[api] max_upload_size" in message


def test_an_upload_up_to_the_limit_is_kept_and_a_larger_one_refused(limited: Api) -> None:
    kept = limited("POST", "/v1/uploads", data=b"x" * LIMIT, headers=GZIP)
    assert kept.status_code == 201 and kept.json()["size"] == LIMIT
    over = limited("POST", "/v1/uploads", data=b"x" * (LIMIT + 1), headers=GZIP)
    _check_too_large(over.status_code, over.json())
    # A generator body goes chunked; waitress hands it on with a Content-Length.
    chunked = limited("POST", "/v1/uploads", data=iter([b"x" * 3000, b"x" * 3000]),
                      headers=GZIP)
    _check_too_large(chunked.status_code, chunked.json())
    assert _names(_uploads(limited)) == {f"{kept.json()['id']}.tar.gz"}


def test_plan_archives_past_the_limit_are_refused(limited: Api, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    created = limited("POST", "/v1/plans", params={"name": "big"},
                      data=b"x" * (LIMIT + 1), headers=GZIP)
    _check_too_large(created.status_code, created.json())
    assert limited("GET", "/v1/plans/big").status_code == 404
    assert limited("POST", "/v1/plans", params={"name": "p1", "sample": "true"}) \
        .status_code == 201
    replaced = limited("PUT", "/v1/plans/p1", data=iter([b"x" * LIMIT, b"x"]), headers=GZIP)
    _check_too_large(replaced.status_code, replaced.json())
    assert not [n for n in _names(scratch) if n.startswith("tripleo-flow-upload-")]


def _raw_request(api: Api, head: str, chunks: Iterable[bytes] = ()) -> tuple[int, Any]:
    """Send ``head`` then ``chunks`` until the server answers; its status and JSON body."""
    with socket.create_connection(("127.0.0.1", int(api.url.rsplit(":", 1)[1])), 30) as sock:
        sock.sendall(head.encode("ascii"))
        try:
            for chunk in chunks:
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed while we were still sending
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while data := sock.recv(65536):
            answer += data
    head_part, _, body = answer.partition(b"\r\n\r\n")
    return int(head_part.split()[1]), json.loads(body)


def test_waitress_refuses_a_far_larger_body_before_buffering_it(limited: Api) -> None:
    status, body = _raw_request(
        limited, f"POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"X-Auth-Token: {limited.token}\r\nContent-Type: application/gzip\r\n"
                 f"Content-Length: {10 * (LIMIT + BODY_SLACK)}\r\n\r\n")
    _check_too_large(status, body)

    # A chunked stream cut where waitress counts its limit (it counts the chunk framing
    # too): waitress has read every byte sent when it answers, so it closes cleanly.
    piece = b"x" * 65536
    framed = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece)
                      for _ in range((LIMIT + BODY_SLACK) // len(piece) + 2))
    status, body = _raw_request(
        limited, f"POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"X-Auth-Token: {limited.token}\r\nContent-Type: application/gzip\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n",
        [framed[:LIMIT + BODY_SLACK]])
    _check_too_large(status, body)
    assert _names(_uploads(limited)) == set()


def _wsgi_post(app: Any, path: str, token: str, body: bytes) -> tuple[str, Any]:
    """POST ``body`` with no Content-Length, as a server passing a chunked body on does."""
    environ = falcon.testing.create_environ(path=path, method="POST",
                                            headers={"X-Auth-Token": token, **GZIP})
    environ.pop("CONTENT_LENGTH", None)
    environ["wsgi.input"] = io.BytesIO(body)
    environ["wsgi.input_terminated"] = True
    statuses: list[str] = []
    answer = b"".join(app(environ, lambda status, headers, exc_info=None:
                          statuses.append(status)))
    return statuses[0], json.loads(answer)


def test_a_body_without_content_length_is_cut_at_the_limit(tmp_path: Path) -> None:
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    token = secrets.token_hex(16)
    client.conf.set_override("auth_token", token, group="api")
    client.conf.set_override("max_upload_size", LIMIT, group="api")
    try:
        app = make_app(client)
        status, body = _wsgi_post(app, "/v1/uploads", token, b"x" * (LIMIT * 3))
        _check_too_large(int(status.split()[0]), body)
        uploads = Path(client.data_dir) / "uploads"
        assert _names(uploads) == set()
        status, body = _wsgi_post(app, "/v1/uploads", token, b"x" * LIMIT)
        assert status.startswith("201") and body["size"] == LIMIT
        assert _names(uploads) == {f"{body['id']}.tar.gz"}
        status, body = _wsgi_post(app, "/v1/uploads", token, b"")
        assert status.startswith("400") and "request body" in body["error"]["message"]
    finally:
        client.close()


def test_no_limit_when_max_upload_size_is_0(tmp_path: Path) -> None:
    with running_api(tmp_path, {"api": {"max_upload_size": 0}}) as api:
        big = api("POST", "/v1/uploads", data=b"x" * (BODY_SLACK + LIMIT), headers=GZIP)
        assert big.status_code == 201 and big.json()["size"] == BODY_SLACK + LIMIT


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_old_uploads_are_deleted_at_start_and_on_a_new_upload(tmp_path: Path) -> None:
    uploads = tmp_path / "data" / "uploads"
    uploads.mkdir(parents=True)
    old, fresh = uploads / f"{'a' * 32}.tar.gz", uploads / f"{'b' * 32}.tar.gz"
    partial, other = uploads / f".{'c' * 32}.partial", uploads / "notes.txt"
    for path in (old, fresh, partial, other):
        path.write_bytes(b"x")
    for path in (old, partial, other):
        _age(path, 7200)
    with running_api(tmp_path, {"api": {"upload_ttl": 3600}}) as api:
        assert _names(uploads) == {fresh.name, other.name}
        assert api("GET", f"/v1/uploads/{'b' * 32}").status_code == 200
        _age(fresh, 3700)
        new = api("POST", "/v1/uploads", data=b"y", headers=GZIP)
        assert new.status_code == 201
        assert _names(uploads) == {f"{new.json()['id']}.tar.gz", other.name}
        gone = api("GET", f"/v1/uploads/{'b' * 32}")
        assert gone.status_code == 404 and "upload_ttl" in gone.json()["error"]["message"]


def test_upload_ttl_0_keeps_uploads(tmp_path: Path) -> None:
    uploads = tmp_path / "data" / "uploads"
    uploads.mkdir(parents=True)
    old = uploads / f"{'a' * 32}.tar.gz"
    old.write_bytes(b"x")
    _age(old, 10 * 86400)
    with running_api(tmp_path, {"api": {"upload_ttl": 0}}) as api:
        assert api("POST", "/v1/uploads", data=b"y", headers=GZIP).status_code == 201
        assert old.exists() and len(_names(uploads)) == 2
