"""A SQLite executions database's tables, made once per process and then repeated
(:mod:`tripleo_flow.engine.store.sqlite_schema`): a new file gets exactly the tables
the full way makes, a file holding them is not checked again, and one made by an
older release is still brought up to date."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tripleo_flow import exceptions
from tripleo_flow.engine.store import cancels, execution_backend, sqlite_schema, undo_journal
from tripleo_flow.engine.store.executions import ExecutionBackend, ExecutionStore


@pytest.fixture
def nothing_kept() -> Iterator[None]:
    sqlite_schema.forget()
    yield
    sqlite_schema.forget()


def _tables(path: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()


def _open(path: Path) -> ExecutionStore:
    store = ExecutionStore(ExecutionBackend(f"sqlite:///{path}"))
    store.create("wf", {"x": 1}, None)  # tables used: the logbook, an execution
    return store


def test_a_new_file_gets_the_tables_the_full_way_makes(tmp_path: Path, nothing_kept: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _open(tmp_path / "first.db").backend.close()  # the full way: its statements kept
    full = _tables(tmp_path / "first.db")
    assert {name for kind, name, _sql in full if kind == "table"} >= {
        "logbooks", "flowdetails", "atomdetails", "tripleo_flow_undo_journal",
        "tripleo_flow_async_actions", "tripleo_flow_pause_requests",
        "tripleo_flow_cancels"}

    def not_again(*_args: object) -> None:
        raise AssertionError("the tables were made the full way again")

    monkeypatch.setattr(undo_journal, "create_table", not_again)
    second = _open(tmp_path / "second.db")
    assert _tables(tmp_path / "second.db") == full
    assert [e.workflow for e in second.list()] == ["wf"]
    second.backend.close()
    again = _open(tmp_path / "first.db")  # holds them: used as it is
    assert sorted(e.workflow for e in again.list()) == ["wf", "wf"]
    again.backend.close()


def test_a_file_of_an_older_release_is_still_brought_up_to_date(
        tmp_path: Path, nothing_kept: None) -> None:
    _open(tmp_path / "first.db").backend.close()
    older = tmp_path / "older.db"
    engine = sa.create_engine(f"sqlite:///{older}")
    sa.Table("tripleo_flow_cancels", sa.MetaData(),
             sa.Column("execution_id", sa.String(36), primary_key=True),
             sa.Column("state_info", sa.Text, nullable=True),
             sa.Column("cancelled_at", sa.Float, nullable=False)).create(engine)
    engine.dispose()
    store = _open(older)
    columns = {c["name"] for c in sa.inspect(store.backend.engine).get_columns(
        "tripleo_flow_cancels")}
    assert columns == {"execution_id", "state_info", "cancelled_at", "state", "output"}
    assert store.cancels.record("x", "why", cancels.FAILURE)
    assert {"logbooks", "tripleo_flow_undo_journal"} <= {
        name for _kind, name, _sql in _tables(older)}
    store.backend.close()


def test_only_an_empty_file_s_tables_are_kept(tmp_path: Path, nothing_kept: None) -> None:
    """The first database a process opens was made by an older release: its tables, as
    brought up to date, are not what a new file is given."""
    older = tmp_path / "older.db"
    with sqlite3.connect(older) as db:
        db.execute("CREATE TABLE tripleo_flow_cancels (execution_id VARCHAR(36) PRIMARY KEY, "
                   "state_info TEXT, cancelled_at FLOAT NOT NULL)")
    _open(older).backend.close()
    _open(tmp_path / "new.db").backend.close()  # the full way: nothing was kept
    _open(tmp_path / "newer.db").backend.close()  # from the new file's statements
    assert _tables(tmp_path / "newer.db") == _tables(tmp_path / "new.db") != _tables(older)


def test_a_file_it_cannot_write_is_refused_as_before(tmp_path: Path, nothing_kept: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty file opened read-only, once tables were kept: the executions database's
    own refusal, naming the option, not SQLite's error."""
    _open(tmp_path / "first.db").backend.close()
    monkeypatch.setattr(execution_backend, "_UPGRADE_ATTEMPTS", 1)  # no retry to wait for
    (tmp_path / "ro.db").touch()
    backend = ExecutionBackend(f"sqlite:///file:{tmp_path / 'ro.db'}?mode=ro&uri=true")
    with pytest.raises(exceptions.BackendUnavailable, match=r"Check \[workflows\] connection"):
        backend.get_connection()
    backend.close()
