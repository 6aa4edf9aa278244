"""The HTTP API served by waitress on 127.0.0.1 (a free port) in a thread, over a
LocalStore client."""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from waitress import wasyncore

from tests.fixtures_plans import make_client
from tripleo_flow.client import Client
from tripleo_flow.http.server import make_server
from tripleo_flow.plans.local import LocalStore


@dataclass
class Api:
    """A running API: its base URL, token and the client behind it."""

    url: str
    token: str
    client: Client
    session: requests.Session

    def __call__(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.session.request(method, self.url + path, timeout=60, **kwargs)


@contextlib.contextmanager
def serving(client: Client, token: str = "") -> Iterator[Api]:
    """Serve ``client`` on a free port of 127.0.0.1 until the block ends (then close it).

    :param token: sent as X-Auth-Token by the returned :class:`Api`'s session (when set).
    """
    server = make_server(client, "127.0.0.1", 0, threads=4)
    stop = threading.Event()

    def serve() -> None:
        # waitress's own run() loop, stopped by an event rather than from outside:
        # everything is closed here, in the loop's thread, once it no longer polls
        # (the listener and the connections clients still hold: a live requests
        # Response keeps its own).
        while not stop.is_set():
            wasyncore.loop(timeout=0.05, map=server._map, use_poll=True, count=1)
        wasyncore.close_all(server._map, ignore_all=True)
        server.task_dispatcher.shutdown()

    thread = threading.Thread(target=serve, name="waitress", daemon=True)
    thread.start()
    session = requests.Session()
    if token:
        session.headers["X-Auth-Token"] = token
    try:
        yield Api(f"http://127.0.0.1:{server.effective_port}", token, client, session)
    finally:
        session.close()
        stop.set()
        thread.join(10)
        assert not thread.is_alive()
        client.close()


@contextlib.contextmanager
def running_api(tmp_path: Path,
                overrides: dict[str, dict[str, Any]] | None = None) -> Iterator[Api]:
    """Serve a LocalStore client over ``tmp_path`` on a free port until the block ends.

    :param overrides: option values by group, e.g. ``{"api": {"upload_ttl": 60}}``
    """
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    token = secrets.token_hex(16)
    client.conf.set_override("auth_token", token, group="api")
    for group, values in (overrides or {}).items():
        for name, value in values.items():
            client.conf.set_override(name, value, group=group)
    with serving(client, token) as running:
        yield running


def finished(api: Api, execution_id: str, timeout: float = 60) -> dict[str, Any]:
    """The execution once it has ended (polled through GET /v1/executions/{id})."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body: dict[str, Any] = api("GET", f"/v1/executions/{execution_id}").json()
        if body["finished_at"] is not None:
            return body
        time.sleep(0.1)
    raise AssertionError(f"execution {execution_id} did not end in {timeout} s")


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    with running_api(tmp_path) as running:
        yield running
