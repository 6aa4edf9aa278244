"""TaskFlow's alembic migrations load when a database other than SQLite needs them
(``migration.db_sync``), not whenever its SQLAlchemy persistence is imported."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
from tripleo_flow.engine.store import execution_backend
from taskflow.persistence.backends.sqlalchemy import migration
assert "alembic" not in sys.modules, "imported at once"
sync = execution_backend.impl_sqlalchemy.migration.db_sync
assert "alembic" in sys.modules, "not imported on use"
assert migration.db_sync is sync
assert sync.__module__ == "taskflow.persistence.backends.sqlalchemy.migration"
assert migration.command.upgrade.__module__ == "alembic.command"
"""


def test_the_migrations_load_on_first_use() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
