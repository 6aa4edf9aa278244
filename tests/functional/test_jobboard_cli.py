"""Jobboard execution as users run it: ``tripleo-flow conductor``, ``workflow run`` and
``api serve`` processes sharing a config file (real Redis, ZooKeeper, MariaDB)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.engine_helpers import WORKBOOKS
from tests.fixtures_services import free_port, new_database
from tests.functional.mariadb import PrivateMariaDB
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir

EXE = str(Path(sys.executable).parent / "tripleo-flow")
TOKEN = "jobboard-test-token"


@pytest.fixture(params=["redis", "zookeeper"])
def conf_file(request: pytest.FixtureRequest, tmp_path: Path,
              mariadb_server: PrivateMariaDB) -> Path:
    url = request.getfixturevalue(f"{request.param}_url")
    name, where = new_database(mariadb_server, "jobcli")
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(
        f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
        f"[workflows]\nconnection = mysql+pymysql://{where}/{name}\n"
        f"[jobboard]\nbackend_url = {url}\nnamespace = t{uuid.uuid4().hex[:10]}\n"
        "claim_expiry = 6\nheartbeat_interval = 2\npoll_interval = 0.2\n"
        f"[api]\nauth_token = {TOKEN}\n")
    conf.chmod(0o600)
    return conf


@pytest.fixture
def conductor(conf_file: Path) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([EXE, "--config-file", str(conf_file), "conductor", "--name", "cli",
                             "--concurrency", "2"], stderr=subprocess.DEVNULL)
    yield proc
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0


def _cli(conf_file: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([EXE, "--config-file", str(conf_file), *args, "-f", "json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_sample_plan_workflows_through_a_conductor(conf_file: Path,
                                                   conductor: subprocess.Popen[bytes]) -> None:
    created = _cli(conf_file, "workflow", "run", "create_deployment_plan",
                   "--input", "plan=overcloud", "--input", f"templates={sample_plan_dir()}")
    assert created["State"] == "SUCCESS", created
    started = _cli(conf_file, "workflow", "run", "update_parameters", "--async",
                   "--input", "plan=overcloud", "--input", "parameters={ComputeCount: 3}")
    assert started["State"] == "PENDING"
    client = Client.from_config_files([str(conf_file)])
    try:
        done = client.executions.follow(started["ID"], timeout=120)
        assert done.state == "SUCCESS", done.error
        assert client.parameters.get("overcloud")["ComputeCount"] == 3
        assert [p["name"] for p in client.plans.list()] == ["overcloud"]
        ran_by = client._session.runner().store.flow_detail(created["ID"], lazy=True).meta["pid"]
        assert ran_by == conductor.pid
        assert client._session.locks.url == client.conf.jobboard.backend_url
    finally:
        client.close()


def _serve(conf_file: Path, port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([EXE, "--config-file", str(conf_file), "api", "serve",
                             "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None and f":{port}/v1/" in proc.stdout.readline()
    return proc


def test_restarting_the_api_server_while_jobs_run_loses_nothing(
        conf_file: Path, conductor: subprocess.Popen[bytes], tmp_path: Path) -> None:
    _cli(conf_file, "workbook", "create", str(WORKBOOKS / "good" / "naps.yaml"))
    port = free_port()
    url, headers = f"http://127.0.0.1:{port}/v1", {"X-Auth-Token": TOKEN}
    server = _serve(conf_file, port)
    ids = []
    try:
        for _ in range(6):
            answer = requests.post(f"{url}/workflows/naps.naps/executions", headers=headers,
                                   json={"input": {"seconds": 1}}, timeout=30)
            assert answer.status_code == 202, answer.text
            ids.append(answer.json()["id"])
    finally:
        server.kill()  # kill -9 while the conductor runs two and four wait on the board
        server.wait(10)
    server = _serve(conf_file, port)
    try:
        deadline = time.monotonic() + 120
        states: dict[str, str] = {}
        while time.monotonic() < deadline and set(states.values()) != {"SUCCESS"}:
            states = {i: requests.get(f"{url}/executions/{i}", headers=headers,
                                      timeout=30).json()["state"] for i in ids}
            time.sleep(0.3)
        assert list(states.values()) == ["SUCCESS"] * 6, states
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)


PAUSING = """\
---
version: '2.0'
name: pausing
workflows:
  twice:
    tasks:
      first:
        action: std.echo
        input: {output: one}
        on-success: second
      second:
        pause-before: true
        action: std.echo
        input: {output: two}
        publish: {last: <% task().result %>}
    output:
      last: <% $.last %>
"""


def _paused(client: Client, conf_file: Path, url: str | None = None) -> str:
    """A pausing workflow started with ``workflow run --async`` (or, given the API's
    ``url``, through the HTTP API), once it is PAUSED."""
    if url is None:
        started = _cli(conf_file, "workflow", "run", "pausing.twice", "--async")
        assert started["State"] == "PENDING"
        execution_id = str(started["ID"])
    else:
        answer = requests.post(f"{url}/workflows/pausing.twice/executions", json={},
                               headers={"X-Auth-Token": TOKEN}, timeout=30)
        assert answer.status_code == 202, answer.text
        execution_id = str(answer.json()["id"])
    deadline = time.monotonic() + 60
    while client.executions.get(execution_id).state != "PAUSED":
        assert time.monotonic() < deadline, client.executions.get(execution_id).state
        time.sleep(0.1)
    return execution_id


@pytest.mark.parametrize("conf_file", ["redis"], indirect=True)
def test_execution_resume_through_the_jobboard_cli_and_http(
        conf_file: Path, conductor: subprocess.Popen[bytes], tmp_path: Path) -> None:
    book = tmp_path / "pausing.yaml"
    book.write_text(PAUSING)
    _cli(conf_file, "workbook", "create", str(book))
    client = Client.from_config_files([str(conf_file)])
    port = free_port()
    url, headers = f"http://127.0.0.1:{port}/v1", {"X-Auth-Token": TOKEN}
    server = _serve(conf_file, port)
    try:
        by_cli = _paused(client, conf_file)
        resumed = _cli(conf_file, "execution", "resume", by_cli)  # follows it to its end
        assert resumed["State"] == "SUCCESS", resumed
        assert client.executions.get(by_cli).output == {"last": "two"}

        # Over HTTP only an execution started through the API can be resumed.
        not_mine = _paused(client, conf_file)
        refused = requests.post(f"{url}/executions/{not_mine}/resume", headers=headers,
                                timeout=30)
        assert refused.status_code == 409 and "not started through the HTTP API" in refused.text
        assert client.executions.get(not_mine).state == "PAUSED"

        by_http = _paused(client, conf_file, url)
        answer = requests.post(f"{url}/executions/{by_http}/resume", headers=headers,
                               timeout=30)
        assert answer.status_code == 202, answer.text
        assert answer.json()["id"] == by_http
        done = client.executions.follow(by_http, timeout=60)
        assert (done.state, done.output) == ("SUCCESS", {"last": "two"})
        again = requests.post(f"{url}/executions/{by_http}/resume", headers=headers,
                              timeout=30)
        assert again.status_code == 200, again.text  # unchanged, as Mistral's resume
        assert again.json()["state"] == "SUCCESS"
        missing = requests.post(f"{url}/executions/{uuid.uuid4()}/resume", headers=headers,
                                timeout=30)
        assert missing.status_code == 404, missing.text
        assert {t.name: t.state for t in client.tasks.list(by_http)} == {
            "first": "SUCCESS", "second": "SUCCESS"}
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)
        client.close()
