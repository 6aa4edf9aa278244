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


def add_missing_columns(table: sa.Table, engine: sa.engine.Engine) -> None:
    """Add the nullable columns of ``table`` that a database made by an older release
    lacks (its rows then read NULL there)."""
    have = {column["name"] for column in sa.inspect(engine).get_columns(table.name)}
    for column in table.columns:
        if column.name in have or not column.nullable:
            continue
        kind = column.type.compile(dialect=engine.dialect)
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(
                    f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}"))
        except sa.exc.OperationalError:
            # Another process added it between the look and the ALTER.
            if column.name not in {c["name"] for c in sa.inspect(engine).get_columns(
                    table.name)}:
                raise
