"""Idempotency-Key records in the executions database (SQLite file, and a real
MariaDB started by the test): they survive a server restart, are shared by API
servers using one database (one in this process, one ``tripleo-flow api serve``
subprocess), and let exactly one of many concurrent starts run."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
import sqlalchemy as sa

from tests.functional.http.conftest import Api, running_api
from tests.functional.http.test_api import sse
from tests.functional.http.test_serve_command import free_port
from tests.functional.test_executions_mariadb import mariadb  # noqa: F401 (fixture)
from tripleo_flow.client.idempotency import KEYS, _sha256

START = "/v1/workflows/update_parameters/executions"
BODY = {"input": {"plan": "p1", "parameters": {"ComputeCount": 2}}}


def _start(api: Api, key: str, body: dict[str, Any] | None = None) -> Any:
    return api("POST", START, json=BODY if body is None else body,
               headers={"Idempotency-Key": key})


def _wait_ended(api: Api, execution_id: str) -> dict[str, Any]:
    with api("GET", f"/v1/executions/{execution_id}/events", stream=True) as response:
        messages = sse(response)
    assert messages[-1][0] == "execution"
    return messages[-1][1]


#: The executions of the workflow the tests start (creating their plan is another).
STARTED = {"workflow": "update_parameters"}


def _rows(api: Api) -> list[Any]:
    with api.client._session.executions_engine.connect() as conn:
        return list(conn.execute(sa.select(KEYS)))


def test_a_retry_after_a_server_restart_returns_the_same_execution(tmp_path: Path) -> None:
    with running_api(tmp_path) as api:
        assert api("POST", "/v1/plans", params={"name": "p1", "sample": "true"}).status_code \
            == 201
        first = _start(api, "restart-1")
        assert first.status_code == 202
        assert _wait_ended(api, first.json()["id"])["state"] == "SUCCESS"
    with running_api(tmp_path) as restarted:
        retry = _start(restarted, "restart-1")
        assert retry.status_code == 202 and retry.json()["id"] == first.json()["id"]
        assert retry.headers["Location"].endswith(f"/v1/executions/{first.json()['id']}")
        other = _start(restarted, "restart-1",
                       {"input": {"plan": "p1", "parameters": {"ComputeCount": 3}}})
        assert other.status_code == 409
        assert "different workflow start" in other.json()["error"]["message"]
        executions = restarted("GET", "/v1/executions", params=STARTED).json()
        assert [e["id"] for e in executions] == [first.json()["id"]]
        assert restarted("GET", "/v1/plans/p1/parameters").json()["ComputeCount"] == 2


@dataclass
class Remote:
    """An API served by a ``tripleo-flow api serve`` subprocess."""

    url: str
    session: requests.Session

    def __call__(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.session.request(method, self.url + path, timeout=60, **kwargs)


@contextlib.contextmanager
def serve_process(tmp_path: Path, connection: str | None = None) -> Iterator[Remote]:
    """A second API server process over the same plans, data dir and executions DB
    as :func:`running_api` on ``tmp_path``."""
    token, port = "second-server-token", free_port()
    conf = tmp_path / "second.conf"
    text = (f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
            f"[plan_store]\nlocal_root = {tmp_path / 'plans'}\n"
            f"lock_url = file://{tmp_path / 'locks'}\n[api]\nauth_token = {token}\n")
    if connection:
        text += f"[workflows]\nconnection = {connection}\n"
    conf.write_text(text)
    conf.chmod(0o600)
    exe = Path(sys.executable).parent / "tripleo-flow"
    proc = subprocess.Popen([str(exe), "--config-file", str(conf), "api", "serve",
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    session = requests.Session()
    session.headers["X-Auth-Token"] = token
    try:
        assert proc.stdout is not None and proc.stderr is not None
        banner = proc.stdout.readline()
        assert f":{port}/v1/" in banner, proc.stderr.read()
        yield Remote(f"http://127.0.0.1:{port}", session)
    finally:
        session.close()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0


def _concurrent_starts(servers: list[Any], key: str, count: int) -> list[Any]:
    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(lambda i: _start(servers[i % len(servers)], key), range(count)))


def _check_one_execution(servers: list[Any], responses: list[Any]) -> str:
    assert {r.status_code for r in responses} == {202}, [r.text for r in responses]
    ids = {r.json()["id"] for r in responses}
    assert len(ids) == 1
    execution_id = ids.pop()
    assert _wait_ended(servers[0], execution_id)["state"] == "SUCCESS"
    for api in servers:
        assert [e["id"] for e in api("GET", "/v1/executions", params=STARTED).json()] \
            == [execution_id]
    return execution_id


def test_concurrent_starts_on_two_server_processes_sharing_sqlite_make_one_execution(
        tmp_path: Path) -> None:
    with running_api(tmp_path) as one, serve_process(tmp_path) as two:
        assert one("POST", "/v1/plans", params={"name": "p1", "sample": "true"}).status_code \
            == 201
        responses = _concurrent_starts([one, two], "together", 8)
        execution_id = _check_one_execution([one, two], responses)
        (row,) = _rows(one)
        assert row.execution_id == execution_id


def test_concurrent_starts_on_two_server_processes_sharing_mariadb_make_one_execution(
        tmp_path: Path, mariadb: str) -> None:  # noqa: F811
    overrides = {"workflows": {"connection": mariadb}}
    with running_api(tmp_path, overrides) as one, serve_process(tmp_path, mariadb) as two:
        assert one("POST", "/v1/plans", params={"name": "p1", "sample": "true"}).status_code \
            == 201
        responses = _concurrent_starts([one, two], "together-mariadb", 8)
        execution_id = _check_one_execution([one, two], responses)
        assert not (tmp_path / "data" / "executions.sqlite").exists()
        assert _start(two, "together-mariadb").json()["id"] == execution_id


def test_a_refused_start_leaves_its_key_free(api: Api) -> None:
    bad = {"input": {"parameters": {}}}
    for _ in range(2):
        response = _start(api, "bad-1", bad)
        assert response.status_code == 400
        assert "plan" in response.json()["error"]["message"]
    assert _rows(api) == []
    assert api("GET", "/v1/executions").json() == []


def test_an_expired_key_starts_a_new_execution(tmp_path: Path) -> None:
    with running_api(tmp_path, {"api": {"idempotency_key_ttl": 3600}}) as api:
        assert api("POST", "/v1/plans", params={"name": "p1", "sample": "true"}).status_code \
            == 201
        first = _start(api, "old-1").json()["id"]
        _wait_ended(api, first)
        with api.client._session.executions_engine.begin() as conn:
            conn.execute(sa.update(KEYS).values(created_at=int(time.time()) - 3601))
        second = _start(api, "old-1")
        assert second.status_code == 202 and second.json()["id"] != first
        _wait_ended(api, second.json()["id"])
        (row,) = _rows(api)
        assert row.execution_id == second.json()["id"]
        assert len(api("GET", "/v1/executions", params=STARTED).json()) == 2


def test_an_abandoned_claim_is_taken_over(api: Api) -> None:
    """A claim whose process died before it recorded an execution does not block the key."""
    assert api("POST", "/v1/plans", params={"name": "p1", "sample": "true"}).status_code == 201
    assert _start(api, "warm-up").status_code == 202  # creates the table
    fingerprint = json.dumps(["update_parameters", BODY["input"], None], sort_keys=True)
    with api.client._session.executions_engine.begin() as conn:
        conn.execute(sa.insert(KEYS).values(
            key_hash=_sha256("crashed-1"), fingerprint=_sha256(fingerprint), claim="0" * 32,
            execution_id=None, created_at=int(time.time()) - 600))
    response = _start(api, "crashed-1")
    assert response.status_code == 202
    row = next(r for r in _rows(api) if r.key_hash == _sha256("crashed-1"))
    assert row.execution_id == response.json()["id"] and row.claim != "0" * 32


def test_an_overlong_key_is_refused(api: Api) -> None:
    response = _start(api, "k" * 256)
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["error"]["message"]
