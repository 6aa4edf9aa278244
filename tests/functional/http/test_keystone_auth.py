"""``[api] auth_strategy = keystone`` against a real Keystone (keystonemiddleware's
auth_token in front of the app, configured from ``[keystone_authtoken]`` in the
configuration file, as a user would)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.fixtures_keystone import Keystone
from tests.functional.http.conftest import Api, serving
from tests.functional.http.test_serve_command import api_serve
from tests.keystone_server import User
from tripleo_flow import config
from tripleo_flow.client import Client
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks

pytestmark = pytest.mark.functional


def write_conf(tmp_path: Path, keystone: Keystone, service: User, extra: str = "") -> Path:
    """A tripleo-flow.conf (mode 0600) for the keystone strategy, validating as ``service``
    (``extra``: more [keystone_authtoken] lines)."""
    path = tmp_path / "tripleo-flow.conf"
    path.write_text(
        f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
        "[api]\nauth_strategy = keystone\n"
        "[keystone_authtoken]\n"
        f"www_authenticate_uri = {keystone.url}\n"
        f"auth_url = {keystone.url}\n"
        "auth_type = password\n"
        f"username = {service.name}\n"
        f"password = {service.password}\n"
        f"project_name = {service.project}\n"
        "user_domain_name = Default\n"
        "project_domain_name = Default\n" + extra)
    path.chmod(0o600)
    return path


def keystone_client(tmp_path: Path, conf_file: Path) -> Client:
    conf = config.load([str(conf_file)])
    locks = PlanLocks(f"file://{tmp_path / 'locks'}", timeout=30)
    return Client(conf, store=LocalStore(tmp_path / "plans"), locks=locks)


@pytest.fixture
def keystone_api(tmp_path: Path, keystone: Keystone) -> Iterator[Api]:
    """The API with the keystone strategy; its session sends no token."""
    client = keystone_client(tmp_path, write_conf(tmp_path, keystone, keystone.service))
    with serving(client) as running:
        yield running


def test_requests_without_a_keystone_token_get_401(keystone_api: Api,
                                                   keystone: Keystone) -> None:
    cases = [
        {},
        {"X-Auth-Token": "not-a-token"},
        # A truncated real token: well-formed, but its signature does not check out.
        {"X-Auth-Token": keystone.token(keystone.operator)[:-8]},
        # Headers only auth_token may set: a client claiming them is not trusted.
        {"X-Identity-Status": "Confirmed", "X-Roles": "admin", "X-User-Id": "admin"},
    ]
    for headers in cases:
        response = keystone_api("GET", "/v1/plans", headers=headers)
        assert response.status_code == 401, (headers, response.text)
        assert response.json()["error"]["kind"] == "unauthorized"
        # Clients learn where to get a token.
        assert response.headers["WWW-Authenticate"] == f"Keystone uri=\"{keystone.url}\""


def test_a_keystone_token_is_accepted(keystone_api: Api, keystone: Keystone) -> None:
    headers = {"X-Auth-Token": keystone.token(keystone.operator)}
    assert keystone_api("GET", "/v1/plans", headers=headers).json() == []
    created = keystone_api("POST", "/v1/plans", params={"name": "one", "sample": "true"},
                           headers=headers)
    assert created.status_code == 201, created.text
    listed = keystone_api("GET", "/v1/plans", headers=headers)
    assert listed.status_code == 200
    assert [plan["name"] for plan in listed.json()] == ["one"]
    # A second request with the same token (auth_token's cache) and one with a new token.
    again = keystone_api("GET", "/v1/plans/one",
                         headers={"X-Auth-Token": keystone.token(keystone.operator)})
    assert again.status_code == 200 and again.json()["name"] == "one"


def test_a_reader_may_read_but_not_change(keystone_api: Api, keystone: Keystone) -> None:
    reader = {"X-Auth-Token": keystone.token(keystone.outsider)}   # role: reader
    assert keystone_api("GET", "/v1/plans", headers=reader).status_code == 200
    refused = keystone_api("POST", "/v1/plans", params={"name": "nope", "sample": "true"},
                           headers=reader)
    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert error["kind"] == "forbidden"
    assert "reader" in error["message"] and "[api] writer_roles" in error["message"]
    assert keystone_api("GET", "/v1/plans", headers=reader).json() == []  # nothing made


def test_a_reader_lists_the_backups_but_may_not_download_one(keystone_api: Api,
                                                             keystone: Keystone) -> None:
    writer = {"X-Auth-Token": keystone.token(keystone.operator)}
    reader = {"X-Auth-Token": keystone.token(keystone.outsider)}   # role: reader
    made = keystone_api("POST", "/v1/backups", json={"passphrase": "a long passphrase"},
                        headers=writer)
    assert made.status_code == 201, made.text
    backup_id = made.json()["id"]
    assert [b["id"] for b in keystone_api("GET", "/v1/backups", headers=reader).json()] == \
        [backup_id]
    refused = keystone_api("GET", f"/v1/backups/{backup_id}", headers=reader)
    assert refused.status_code == 403, refused.text
    assert "secrets" in refused.json()["error"]["message"]
    assert not refused.content.startswith(b"TFBKAE1")
    got = keystone_api("GET", f"/v1/backups/{backup_id}", headers=writer)
    assert got.status_code == 200 and got.content.startswith(b"TFBKAE1")


def test_project_ids_limit_the_projects_whose_tokens_count(
        tmp_path: Path, keystone: Keystone) -> None:
    tripleo = keystone.server.project_id(keystone.operator.project)
    conf = write_conf(tmp_path, keystone, keystone.service)
    conf.write_text(conf.read_text().replace("[api]\n", f"[api]\nproject_ids = {tripleo}\n"))
    with serving(keystone_client(tmp_path, conf)) as api:
        inside = api("GET", "/v1/plans",
                     headers={"X-Auth-Token": keystone.token(keystone.operator)})
        outside = api("GET", "/v1/plans",
                      headers={"X-Auth-Token": keystone.token(keystone.outsider)})
    assert inside.status_code == 200, inside.text
    assert outside.status_code == 403, outside.text
    assert "[api] project_ids" in outside.json()["error"]["message"]


def test_idempotency_keys_belong_to_their_user(keystone_api: Api, keystone: Keystone) -> None:
    second = keystone.server.add_user("second-operator", keystone.operator.project, "member")
    starts = {}
    for user in (keystone.operator, second):
        headers = {"X-Auth-Token": keystone.token(user), "Idempotency-Key": "same-key"}
        for _ in range(2):  # a retry by the same user gets that user's execution
            response = keystone_api("POST", "/v1/workflows/update_parameters/executions",
                                    json={"input": {"plan": "p1", "parameters": {"A": 1}}},
                                    headers=headers)
            assert response.status_code == 202, response.text
            starts.setdefault(user.name, set()).add(response.json()["id"])
    assert all(len(ids) == 1 for ids in starts.values()), starts
    assert starts[keystone.operator.name] != starts[second.name]


def test_public_routes_need_no_token(keystone_api: Api) -> None:
    response = keystone_api("GET", "/v1/openapi.json")
    assert response.status_code == 200
    assert "/v1/plans" in response.json()["paths"]


@pytest.mark.parametrize("service_password, extra, detail", [
    # auth_token cannot get its own token, so it cannot validate the user's.
    ("wrong", "", ""),
    # Keystone's catalog has no admin endpoint: keystoneauth's EndpointNotFound (a 500 from
    # the WSGI server before the fix).
    (None, "interface = admin\n", "admin endpoint for identity service not found"),
])
def test_keystone_unusable_is_503_not_401(tmp_path: Path, keystone: Keystone,
                                          service_password: str | None, extra: str,
                                          detail: str) -> None:
    service = keystone.service
    if service_password:
        service = User(service.name, service_password, service.project, service.role)
    client = keystone_client(tmp_path, write_conf(tmp_path, keystone, service, extra))
    with serving(client) as api:
        response = api("GET", "/v1/plans",
                       headers={"X-Auth-Token": keystone.token(keystone.operator)})
        # The public document does not need Keystone at all.
        assert api("GET", "/v1/openapi.json").status_code == 200
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error["kind"] == "backend-unavailable"
    assert "[keystone_authtoken]" in error["message"]
    assert detail in error["message"]


def test_api_serve_with_the_keystone_strategy(tmp_path: Path, keystone: Keystone) -> None:
    conf = write_conf(tmp_path, keystone, keystone.service)
    with api_serve(conf) as (proc, port):
        url = f"http://127.0.0.1:{port}/v1/plans"
        token = keystone.token(keystone.operator)
        assert requests.get(url, headers={"X-Auth-Token": token}, timeout=30).json() == []
        assert requests.get(url, timeout=30).status_code == 401
    assert proc.returncode == 0


def test_a_user_logs_in_with_a_keystone_password(keystone_api: Api, keystone: Keystone,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    user = keystone.operator
    assert keystone_api("GET", "/v1/auth").json() == {"strategy": "keystone"}
    login = {"username": user.name, "password": user.password, "project": user.project}

    wrong = keystone_api("POST", "/v1/auth/tokens", json={**login, "password": "not-it-x9"})
    assert wrong.status_code == 401, wrong.text
    assert wrong.json()["error"]["kind"] == "unauthorized"
    assert "not-it-x9" not in wrong.text
    elsewhere = keystone_api("POST", "/v1/auth/tokens", json={**login, "project": "elsewhere"})
    assert elsewhere.status_code == 401, elsewhere.text
    for missing in ("username", "password", "project"):
        partial = {k: v for k, v in login.items() if k != missing}
        refused = keystone_api("POST", "/v1/auth/tokens", json=partial)
        assert refused.status_code == 400 and missing in refused.json()["error"]["message"]
    too_long = keystone_api("POST", "/v1/auth/tokens", json={**login, "username": "u" * 256})
    assert too_long.status_code == 400

    given = keystone_api("POST", "/v1/auth/tokens", json=login)
    assert given.status_code == 200, given.text
    answer = given.json()
    assert answer["user"] == user.name and answer["project"] == user.project
    assert answer["expires_at"] and user.password not in given.text
    # The token is a real Keystone token: it opens the API like any other.
    headers = {"X-Auth-Token": answer["token"]}
    assert keystone_api("GET", "/v1/plans", headers=headers).status_code == 200
    assert user.password not in caplog.text


def test_a_token_server_has_no_login(api: Api) -> None:
    assert api("GET", "/v1/auth").json() == {"strategy": "token"}
    refused = api("POST", "/v1/auth/tokens",
                  json={"username": "u", "password": "p", "project": "x"})
    assert refused.status_code == 400
    assert "X-Auth-Token" in refused.json()["error"]["message"]


def _upload_head(length: int, token: str | None) -> bytes:
    """The start of a ``POST /v1/uploads`` announcing ``length`` bytes: its headers (with
    ``token``) and 1000 bytes of the body, the rest never sent."""
    head = (b"POST /v1/uploads HTTP/1.1\r\nHost: x\r\nContent-Type: application/gzip\r\n"
            b"Content-Length: %d\r\n" % length)
    if token is not None:
        head += b"X-Auth-Token: %s\r\n" % token.encode()
    return head + b"\r\n" + b"x" * 1000


def _answer(api: Api, data: bytes) -> bytes:
    """What the server answers to ``data``, the rest of the body never coming (a server
    that waits for it answers nothing: the read times out)."""
    port = int(api.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(data)
        answer = b""
        try:
            while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except TimeoutError:
            pytest.fail(f"No answer before the body was sent (got {answer[:200]!r}) to "
                        f"{data[:400]!r}")
    return answer


def test_a_body_without_a_valid_keystone_token_is_refused_before_it_is_read(
        keystone_api: Api, keystone: Keystone) -> None:
    """100 MB announced, 1000 bytes sent: no token, a token Keystone never issued and a
    truncated real one are each refused 401 at once (the server checked the token with
    Keystone before reading the body); nothing is stored; a valid token still uploads."""
    length = 100 << 20
    for token in (None, "not-a-token", keystone.token(keystone.operator)[:-8]):
        answer = _answer(keystone_api, _upload_head(length, token))
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 401"), (token and token[:8], answer[:300])
        assert b'"kind": "unauthorized"' in body and b"X-Auth-Token" in body
    uploads = Path(keystone_api.client.data_dir) / "uploads"
    assert not uploads.exists() or not any(uploads.iterdir())
    valid = {"X-Auth-Token": keystone.token(keystone.operator),
             "Content-Type": "application/gzip"}
    assert keystone_api("POST", "/v1/uploads", data=b"x" * 10, headers=valid).status_code \
        == 201


def _first_answer(api: Api, head: bytes, body: bytes) -> tuple[bytes, bytes]:
    """Send ``head`` (headers asking ``Expect: 100-continue``) and wait for the first
    answer line; send ``body`` only when that is an invitation. Returns the first answer
    and what followed the body (b"" when no body was sent)."""
    port = int(api.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(head)
        first = b""
        while b"\r\n\r\n" not in first:
            chunk = conn.recv(65536)
            if not chunk:
                break
            first += chunk
        if not first.startswith(b"HTTP/1.1 100"):
            return first, b""
        conn.sendall(body)
        rest = b""
        while b"\r\n\r\n" not in rest or not rest.endswith(b"}"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
    return first, rest


def _expecting_head(length: int, token: str | None) -> bytes:
    head = (b"POST /v1/uploads HTTP/1.1\r\nHost: x\r\nContent-Type: application/gzip\r\n"
            b"Expect: 100-continue\r\nContent-Length: %d\r\n" % length)
    if token is not None:
        head += b"X-Auth-Token: %s\r\n" % token.encode()
    return head + b"\r\n"


def test_a_client_that_expects_100_continue_is_invited_only_with_an_accepted_token(
        keystone_api: Api, keystone: Keystone) -> None:
    """``Expect: 100-continue``: no token, a token Keystone never issued and a truncated
    real one get their 401 as the first answer, never an invitation to send the body;
    a valid token gets ``100 Continue`` once Keystone accepted it, and its upload is
    stored."""
    for token in (None, "not-a-token", keystone.token(keystone.operator)[:-8]):
        first, _ = _first_answer(keystone_api, _expecting_head(10, token), b"x" * 10)
        assert first.startswith(b"HTTP/1.1 401"), (token and token[:8], first[:200])
    first, rest = _first_answer(
        keystone_api, _expecting_head(10, keystone.token(keystone.operator)), b"x" * 10)
    assert first.startswith(b"HTTP/1.1 100 Continue"), first[:200]
    assert rest.startswith(b"HTTP/1.1 201"), rest[:300]
    uploads = Path(keystone_api.client.data_dir) / "uploads"
    assert len(list(uploads.iterdir())) == 1


def test_the_token_server_never_invites_a_body_with_the_wrong_token(api: Api) -> None:
    first, _ = _first_answer(api, _expecting_head(10, "wrong"), b"x" * 10)
    assert first.startswith(b"HTTP/1.1 401"), first[:200]
    first, rest = _first_answer(api, _expecting_head(10, api.token), b"x" * 10)
    assert first.startswith(b"HTTP/1.1 100 Continue"), first[:200]
    assert rest.startswith(b"HTTP/1.1 201"), rest[:300]
