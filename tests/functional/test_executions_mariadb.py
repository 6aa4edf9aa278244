"""Executions persisted in a real MariaDB (a private server started by the test).

Needs Debian's mariadb-server (mariadbd, mariadb-install-db) and PyMySQL; the
test fails, not skips, when they are missing.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tripleo_flow import exceptions


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def mariadb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import pymysql

    for tool in ("mariadbd", "mariadb-install-db"):
        assert shutil.which(tool) or Path(f"/usr/sbin/{tool}").exists(), f"{tool} is missing"
    base = tmp_path_factory.mktemp("mariadb")
    datadir, sock, port = base / "data", base / "mysql.sock", _free_port()
    subprocess.run(["mariadb-install-db", f"--datadir={datadir}", "--user=root",
                    "--auth-root-authentication-method=normal", "--skip-test-db"],
                   check=True, capture_output=True, timeout=120)
    server = subprocess.Popen(
        ["/usr/sbin/mariadbd", "--no-defaults", f"--datadir={datadir}", f"--socket={sock}",
         f"--port={port}", "--bind-address=127.0.0.1", "--user=root", "--skip-grant-tables"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = pymysql.connect(host="127.0.0.1", port=port, user="root")
                break
            except pymysql.err.OperationalError:
                assert server.poll() is None, "mariadbd exited"
                assert time.monotonic() < deadline, "mariadbd did not answer in 60 s"
                time.sleep(0.3)
        with conn.cursor() as cursor:
            cursor.execute("CREATE DATABASE executions")
        conn.close()
        yield f"mysql+pymysql://root@127.0.0.1:{port}/executions"
    finally:
        server.kill()
        server.wait(30)


def test_runs_and_lists_executions_in_mariadb(mariadb: str, tmp_path: Path) -> None:
    host: Any = Host(tmp_path / "data")
    host.conf.set_override("connection", mariadb, group="workflows")
    host.install("engine_demo")
    log = tmp_path / "log"
    try:
        done = host.run_workflow("linear", {"log": str(log)})
        assert done.output == {"last": "c"}
        with pytest.raises(exceptions.WorkflowFailed):
            host.run_workflow("linear", {"log": str(log), "fail_at": "b"})
        states = [e.state for e in host.list_executions()]
        assert states[-2:] == ["SUCCESS", "REVERTED"]
        assert [t.name for t in host.execution_tasks(done.id)] == ["a", "b", "c"]
        assert not (tmp_path / "data" / "executions.sqlite").exists()
    finally:
        host.close_workflows()
