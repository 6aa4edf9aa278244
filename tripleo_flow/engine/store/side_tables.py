"""Creating the engine's own tables beside TaskFlow's (undo journal, pause requests,
cancels, asynchronous actions): each is made when the executions database has none,
by whichever process gets there first, and brought up to date when an older release
made it."""

from __future__ import annotations

import sqlalchemy as sa


def create_missing(table: sa.Table, engine: sa.engine.Engine) -> None:
    """Create ``table`` (and the rest of its metadata) when the database lacks it; on
    MySQL/MariaDB, widen its times an older release stored as ``FLOAT``
    (:func:`widen_times`)."""
    try:
        table.metadata.create_all(engine, checkfirst=True)
    except sa.exc.OperationalError:
        # Another process created it between the check and the CREATE.
        if not sa.inspect(engine).has_table(table.name):
            raise
    widen_times(table, engine)


def widen_times(table: sa.Table, engine: sa.engine.Engine) -> None:
    """On MySQL/MariaDB, make each ``Double`` column of ``table`` (a time in seconds
    since the epoch) a ``DOUBLE`` where an older release made it a ``FLOAT``.

    SQLAlchemy's ``Float`` is MySQL's single-precision ``FLOAT``: 24 bits hold a time of
    2026 to within 128 s, and MariaDB gives it back to six digits (1795952921.13 read
    1795950000.0), so deadlines and the order of what was recorded were off by up to
    an hour there (SQLite's REAL always had the full double).  Values stored before
    keep what FLOAT kept of them.
    """
    if engine.dialect.name != "mysql":
        return
    with engine.connect() as db:
        kinds: dict[str, str] = {str(name): str(kind) for name, kind in db.execute(sa.text(
            "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE "
            "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = :table"), {"table": table.name})}
    for column in table.columns:
        if isinstance(column.type, sa.Double) and kinds.get(column.name) == "float":
            with engine.begin() as db:
                db.execute(sa.text(f"ALTER TABLE {table.name} MODIFY {column.name} DOUBLE "
                                   + ("NULL" if column.nullable else "NOT NULL")))


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
