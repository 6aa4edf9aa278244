"""Times the engine records in its own tables keep their sub-second precision on
MariaDB (a private server): SQLAlchemy's ``Float`` was MySQL's single-precision
``FLOAT``, which kept a 2026 epoch time to within 128 s and gave it back to six
digits, so an asynchronous action's deadline and the order of what was recorded were
off by up to an hour there.  A database an older release made is widened in place."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from tests.fixtures_services import new_database
from tests.functional.mariadb import PrivateMariaDB
from tripleo_flow.engine.compile import async_actions
from tripleo_flow.engine.store import cancels, pause_requests, undo_journal

TABLES = {"async_actions": async_actions, "pause_requests": pause_requests,
          "cancels": cancels, "undo_journal": undo_journal}


@pytest.fixture
def engine(mariadb_server: PrivateMariaDB) -> Iterator[sa.engine.Engine]:
    name, where = new_database(mariadb_server, "times")
    made = sa.create_engine(f"mysql+pymysql://{where}/{name}")
    yield made
    made.dispose()


def _time_columns(module: object) -> list[str]:
    table: sa.Table = module.TABLE  # type: ignore[attr-defined]
    return [c.name for c in table.columns if isinstance(c.type, sa.Double)]


def _kinds(engine: sa.engine.Engine, table: str) -> dict[str, str]:
    with engine.connect() as db:
        return {str(n): str(k) for n, k in db.execute(sa.text(
            "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE "
            "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = :t"), {"t": table})}


def test_an_async_actions_deadline_keeps_its_fraction(engine: sa.engine.Engine) -> None:
    async_actions.create_table(engine)
    store = async_actions.AsyncActions(engine)
    before = time.time()
    row = store.start("e" * 36, "poll", "t" * 36, 1, None, 30.5)
    kept = store.get(row.id)
    assert kept is not None and kept.deadline is not None and kept.created_at is not None
    assert abs(kept.deadline - (before + 30.5)) < 5  # FLOAT read it up to an hour off
    assert abs(kept.created_at - before) < 5


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_time_column_is_a_double(engine: sa.engine.Engine, name: str) -> None:
    module = TABLES[name]
    module.create_table(engine)  # type: ignore[attr-defined]
    columns = _time_columns(module)
    assert columns, name
    kinds = _kinds(engine, module.TABLE.name)  # type: ignore[attr-defined]
    assert {c: kinds[c] for c in columns} == {c: "double" for c in columns}


def test_a_table_an_older_release_made_is_widened(engine: sa.engine.Engine) -> None:
    table = pause_requests.TABLE.name
    with engine.begin() as db:  # as the older release made it
        db.execute(sa.text(f"CREATE TABLE {table} (execution_id VARCHAR(36) PRIMARY KEY, "
                           "requested_at FLOAT NOT NULL)"))
        db.execute(sa.text(f"INSERT INTO {table} VALUES ('old', 1795952921.13)"))
    pause_requests.create_table(engine)
    assert _kinds(engine, table)["requested_at"] == "double"
    now = time.time()
    with engine.begin() as db:
        db.execute(sa.text(f"INSERT INTO {table} VALUES ('new', :t)"), {"t": now})
        kept = db.execute(sa.text(f"SELECT requested_at FROM {table} WHERE "
                                  "execution_id = 'new'")).scalar()
    assert kept is not None and abs(float(kept) - now) < 0.01
    pause_requests.create_table(engine)  # a second look changes nothing
    assert _kinds(engine, table)["requested_at"] == "double"
