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
        done = host.executions.create("linear", {"log": str(log)})
        assert done.output == {"last": "c"}
        with pytest.raises(exceptions.WorkflowFailed):
            host.executions.create("linear", {"log": str(log), "fail_at": "b"})
        states = [e.state for e in host.executions.list()]
        assert states[-2:] == ["SUCCESS", "ERROR"]
        assert [t.name for t in host.tasks.list(done.id)] == ["a", "b", "c"]
        assert not (tmp_path / "data" / "executions.sqlite").exists()
        # Listed in the order they were started, also within one second (MariaDB's
        # DATETIME kept whole seconds: ties came in the order of their random ids).
        started = [host.executions.create("linear", {"log": str(log)}).id for _ in range(6)]
        assert [e.id for e in host.executions.list() if e.id in started] == started
    finally:
        host._session.close_workflows()


@pytest.fixture(scope="module")
def mariadb_contract(mariadb_server: PrivateMariaDB) -> type[Any]:
    """TaskFlow's persistence contract suite on a MariaDB database of its own."""
    from tests.unit.engine.store.test_persistence_contract import ExecutionBackendContract
    from tripleo_flow.engine.store.executions import ExecutionBackend

    name, where = new_database(mariadb_server, "contract")

    class OnMariaDB(ExecutionBackendContract):
        def setUp(self) -> None:
            self.backend = ExecutionBackend(f"mysql+pymysql://{where}/{name}")
            self.backend.get_connection().clear_all()  # each test starts empty, as on SQLite

        def tearDown(self) -> None:
            self.backend.close()

    return OnMariaDB


def test_taskflow_persistence_contract_on_mariadb(mariadb_contract: type[Any]) -> None:
    import unittest

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(mariadb_contract)
    assert suite.countTestCases() >= 18
    result = unittest.TestResult()
    suite.run(result)
    problems = [f"{test.id()}: {trace.splitlines()[-1]}"
                for test, trace in result.failures + result.errors]
    assert problems == []
    assert result.testsRun == suite.countTestCases()
