"""The schema heads of a Heat virtualenv (read from its alembic migration files), and
the revisions a SQLite Heat database is at: a restored dump at the heads needs no
``heat-manage db_sync``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tripleo_flow.heat.database import schema_heads
from tripleo_flow.heat.db_sqlite import SqliteDatabase

VERSIONS = "lib/python3.11/site-packages/heat/db/migrations/versions"


def _venv(tmp_path: Path, migrations: dict[str, str]) -> Path:
    versions = tmp_path / "venv" / VERSIONS
    versions.mkdir(parents=True)
    for name, text in migrations.items():
        (versions / name).write_text(text)
    return tmp_path / "venv"


@pytest.mark.parametrize(("migrations", "heads"), [
    ({}, set()),
    ({"a.py": "revision = 'c6214ca60943'\ndown_revision = None\n"}, {"c6214ca60943"}),
    ({"a.py": "revision = 'aaa'\ndown_revision = None\n",
      "b.py": 'revision: str = "bbb"\ndown_revision: str | None = "aaa"\n'}, {"bbb"}),
    ({"a.py": "revision = 'aaa'\ndown_revision = None\n",  # two branches, then a merge
      "b.py": "revision = 'bbb'\ndown_revision = 'aaa'\n",
      "c.py": "revision = 'ccc'\ndown_revision = 'aaa'\n"}, {"bbb", "ccc"}),
    ({"a.py": "revision = 'aaa'\ndown_revision = None\n",
      "b.py": "revision = 'bbb'\ndown_revision = 'aaa'\n",
      "c.py": "revision = 'ccc'\ndown_revision = 'aaa'\n",
      "d.py": "revision = 'ddd'\ndown_revision = ('bbb', 'ccc')\n"}, {"ddd"}),
    ({"a.py": '"""revision = \'not-a-line-start\'"""\n  revision = \'indented\'\n'}, set()),
])
def test_schema_heads(tmp_path: Path, migrations: dict[str, str], heads: set[str]) -> None:
    assert schema_heads(_venv(tmp_path, migrations)) == heads


def test_a_venv_without_heat_has_no_heads(tmp_path: Path) -> None:
    assert schema_heads(tmp_path / "nowhere") == set()


def test_sqlite_schema_revisions(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "heat.sqlite")
    assert db.schema_revisions() == set()  # no file
    db.create()
    assert db.schema_revisions() == set()  # no table
    with sqlite3.connect(db.path) as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        conn.execute("INSERT INTO alembic_version VALUES ('c6214ca60943')")
    conn.close()
    assert db.schema_revisions() == {"c6214ca60943"}


def test_a_kept_schema_is_copied_into_a_fresh_database(tmp_path: Path) -> None:
    made = SqliteDatabase(tmp_path / "made.sqlite")
    made.create()
    with sqlite3.connect(made.path) as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        conn.execute("INSERT INTO alembic_version VALUES ('aaa')")
    conn.close()
    template = tmp_path / "venv" / ".tripleo-flow" / "heat-schema-aaa.sqlite"
    made.keep_copy(template)
    assert SqliteDatabase(template).schema_revisions() == {"aaa"}
    assert [p.name for p in template.parent.iterdir()] == [template.name]  # no partial left

    fresh = SqliteDatabase(tmp_path / "shm" / "fresh.sqlite")
    fresh.create()
    assert fresh.copy_of(template) and fresh.schema_revisions() == {"aaa"}
    assert fresh.path.stat().st_mode & 0o777 == 0o600  # the database's own mode


def test_a_schema_that_cannot_be_kept_or_copied_changes_nothing(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "db.sqlite")
    db.create()
    (tmp_path / "file").write_text("")
    db.keep_copy(tmp_path / "file" / "heat-schema-aaa.sqlite")  # its dir cannot be made
    assert not db.copy_of(tmp_path / "missing.sqlite")
    assert db.exists() and db.path.stat().st_size == 0
