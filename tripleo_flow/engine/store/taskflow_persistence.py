"""TaskFlow's SQLAlchemy persistence, its alembic migrations loaded on first use.

TaskFlow's ``impl_sqlalchemy`` imports its migration module, hence alembic (with
mako and pygments), whenever it is imported: about 0.13 s of CPU at the start of
every command that runs a workflow.  Yet it creates SQLite's tables directly and
migrates with alembic only other databases (MariaDB: ``migration.db_sync`` in
its ``upgrade()``).  Importing it from here, the migration module is made lazy
first (the standard library's :class:`importlib.util.LazyLoader`): it, and
alembic, load when ``db_sync`` is first looked up.  Imported after that module
was loaded (another importer came first), nothing changes.
"""

from __future__ import annotations

import importlib.util
import sys

#: TaskFlow's alembic migrations of its SQLAlchemy persistence.
MIGRATION = "taskflow.persistence.backends.sqlalchemy.migration"


def defer(name: str) -> None:
    """Make module ``name`` load on its first attribute lookup (unless it is loaded
    already); its parent package holds it as its attribute, as an import leaves it."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)  # imports the parent package
    if spec is None or spec.loader is None:
        return
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)


defer(MIGRATION)

from taskflow.persistence.backends import impl_sqlalchemy  # noqa: E402  (after defer)

__all__ = ["MIGRATION", "defer", "impl_sqlalchemy"]
