"""Executions persisted in a real MariaDB (a private server started by the test).

Needs Debian's mariadb-server (mariadbd, mariadb-install-db) and PyMySQL; the
test fails, not skips, when they are missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tests.fixtures_services import new_database
from tests.functional.mariadb import PrivateMariaDB
from tripleo_flow import exceptions


@pytest.fixture(scope="module")
def mariadb(mariadb_server: PrivateMariaDB) -> str:
    """URL of an executions database of its own on the session's private MariaDB."""
    name, where = new_database(mariadb_server, "executions")
    return f"mysql+pymysql://{where}/{name}"


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
