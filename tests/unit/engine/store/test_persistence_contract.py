"""TaskFlow's own persistence contract tests, run against the executions backend.

``taskflow/tests/unit/persistence/base.py`` is the suite every TaskFlow backend
passes; :class:`~tripleo_flow.engine.store.execution_backend.ExecutionBackend` (SQLAlchemy with
batched writes and a reused connection) must pass it too.
"""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path
from typing import Any

from taskflow.tests.unit.persistence import base

from tripleo_flow.engine.store.execution_backend import ExecutionBackend


class ExecutionBackendContract(base.PersistenceTestMixin, unittest.TestCase):
    """Every test of TaskFlow's persistence mixin, on a fresh SQLite database."""

    def setUp(self) -> None:
        super().setUp()
        self._dir = tempfile.TemporaryDirectory(prefix="tripleo-flow-contract-")
        self.backend = ExecutionBackend(f"sqlite:///{Path(self._dir.name) / 'executions.db'}")

    def tearDown(self) -> None:
        self.backend.close()
        self._dir.cleanup()
        super().tearDown()

    def _get_connection(self) -> Any:
        return self.backend.get_connection()
