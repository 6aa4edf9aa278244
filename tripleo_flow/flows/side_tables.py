"""Creating the engine's own tables beside TaskFlow's (undo journal, pause requests,
cancels): each is made when the executions database has none, by whichever process
gets there first."""

from __future__ import annotations

import sqlalchemy as sa


def create_missing(table: sa.Table, engine: sa.engine.Engine) -> None:
    """Create ``table`` (and the rest of its metadata) when the database lacks it."""
    try:
        table.metadata.create_all(engine, checkfirst=True)
    except sa.exc.OperationalError:
        # Another process created it between the check and the CREATE.
        if not sa.inspect(engine).has_table(table.name):
            raise
