"""A Heat database dump is refused, before anything loads, by the other kind of database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tripleo_flow import exceptions
from tripleo_flow.heat import database
from tripleo_flow.heat.db_sqlite import SqliteDatabase

MARIADB_DUMPS = [
    b"-- MariaDB dump 10.19  Distrib 10.11.6-MariaDB, for debian-linux-gnu (x86_64)\n--\n",
    b"/*M!999999\\- enable the sandbox mode */ \n-- MariaDB dump 10.19-11.4.5-MariaDB\n",
    b"-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)\n",
]


def _sqlite_dump(path: Path) -> Path:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO stack VALUES ('1', 'overcloud')")
    path.write_text("\n".join(conn.iterdump()) + "\n")
    conn.close()
    return path


def test_each_kind_is_recognised(tmp_path: Path) -> None:
    assert database.dump_kind(_sqlite_dump(tmp_path / "s.sql")) == "sqlite"
    for i, head in enumerate(MARIADB_DUMPS):
        path = tmp_path / f"m{i}.sql"
        path.write_bytes(head + b"CREATE TABLE `stack` (\n")
        assert database.dump_kind(path) == "mariadb"
    other = tmp_path / "other.sql"
    other.write_text("CREATE TABLE x (a int);\n")
    assert database.dump_kind(other) is None


def test_a_sqlite_dump_is_refused_for_mariadb_with_what_to_do(tmp_path: Path) -> None:
    dump = _sqlite_dump(tmp_path / "heat-db-dump.sql")
    with pytest.raises(exceptions.DumpKindMismatch) as refused:
        database.check_dump_kind(dump, "mariadb")
    message = str(refused.value)
    assert "SQLite (heat type native)" in message and "MariaDB" in message
    assert "with the Heat type the stack was made with" in message
    assert exceptions.exit_code(refused.value) == 4
    database.check_dump_kind(dump, "sqlite")  # its own kind loads


def test_sqlite_restore_refuses_a_mariadb_dump_and_loads_nothing(tmp_path: Path) -> None:
    dump = tmp_path / "heat-db-dump.sql"
    dump.write_bytes(MARIADB_DUMPS[0] + b"CREATE TABLE `stack` (`id` int);\n")
    db = SqliteDatabase(tmp_path / "heat.sqlite")
    db.create()
    with pytest.raises(exceptions.DumpKindMismatch):
        db.restore(dump)
    conn = sqlite3.connect(tmp_path / "heat.sqlite")
    try:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == []
    finally:
        conn.close()
