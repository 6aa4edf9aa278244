"""The read-only reader of a SQLite executions database (what ``execution list`` and
``execution show`` use) reads what the engine's store reads: the same records, pages,
markers, filters and errors, on a database with executions in every state (running,
interrupted, pending, paused, pausing with its sub-workflow, cancelled, stopped,
failed, succeeded, with children); it waits for no writer, writes nothing, and leaves
a database that does not exist yet or has an older schema to the store."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host
from tripleo_flow import exceptions
from tripleo_flow.engine.store import execution_reader, pause_views
from tripleo_flow.engine.store.execution_reader import ExecutionReader
from tripleo_flow.engine.store.executions import ExecutionStore


def _dead_pid() -> int:
    """The pid of a process that ended (``true``: a Python child took 100 ms)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _add(store: ExecutionStore, workflow: str, state: str, **meta: Any) -> str:
    """Record an execution of ``workflow`` in ``state`` with ``meta``; its id."""
    fd = store.create(workflow, {"plan": "overcloud", "AdminPassword": "s3cret"}, "overcloud")
    fd.state = state
    store.update_meta(fd, **meta)
    return str(fd.uuid)


def _every_state(store: ExecutionStore) -> None:
    """Executions in every state a reader shows."""
    here = {"pid": os.getpid(), "host": socket.gethostname()}
    _add(store, "tripleo.plan.create_deployment_plan", "SUCCESS", output={"ok": 1},
         finished_at=time.time())
    parent = _add(store, "wb.a_b", "SUCCESS", finished_at=time.time())
    _add(store, "wb.child", "SUCCESS", parent_id=parent, parent_task="sub")
    _add(store, "wb.A_B", "FAILURE", error="boom", failed_task="t", error_api="boom (API)",
         error_hints=[{"say": "retry"}], finished_at=time.time())
    _add(store, "wb.undone", "REVERTED", error="boom", failed_task="t", finished_at=time.time())
    _add(store, "wb.axb", "RUNNING", **here)
    _add(store, "wb.axb", "RUNNING", pid=_dead_pid(), host=socket.gethostname())
    _add(store, "action:wb.axb", "SUCCESS", output={"result": 1}, finished_at=time.time())
    _add(store, "wb.pending", "PENDING")
    _add(store, "wb.paused", "SUSPENDED", paused_at=time.time(), state_info="held")
    # A running family a pause was asked of: parent and child read PAUSED (pausing).
    pausing = _add(store, "wb.family", "RUNNING", **here)
    _add(store, "wb.family_child", "RUNNING", parent_id=pausing, parent_task="sub", **here)
    store.pause_requests.request(pausing)
    # A cancelled family (its request pauses nothing), and stops in other states.
    cancelled = _add(store, "wb.cancel%", "RUNNING", **here)
    child = _add(store, "wb.cancel_child", "RUNNING", parent_id=cancelled,
                 parent_task="sub", **here)
    for ident in (cancelled, child):
        store.cancels.record(ident, "no more")
        store.pause_requests.request(ident)
    store.cancels.record(_add(store, "wb.stop", "RUNNING", **here), "bad", "FAILURE",
                         {"result": "bad", "extra": 1})
    store.cancels.record(_add(store, "wb.stop", "SUSPENDED", paused_at=1.0), "done",
                         "SUCCESS")


@pytest.fixture
def databases(tmp_path: Path) -> Iterator[tuple[ExecutionStore, ExecutionReader]]:
    """The store and the reader of one database with executions in every state."""
    host = Host(tmp_path / "data", ACTIONS)
    store = host._session.execution_store()
    _every_state(store)
    reader = execution_reader.open_file(tmp_path / "data" / "executions.sqlite")
    assert reader is not None
    yield store, reader
    host._session.close_workflows()


def _pages(source: Any, limit: int, workflow: str | None, descending: bool,
           max_bytes: int = 0) -> list[Any]:
    """Every page of ``source`` walked with markers, as readers see them."""
    pages, marker = [], None
    while True:
        page, more = source.page(limit, marker, workflow, descending, max_bytes)
        pages.append((pause_views.shown(source, page), more))
        if not (more and page):
            return pages
        marker = page[-1].id


@pytest.mark.parametrize("workflow", [None, "a_b", "wb.a_b", "axb", "cancel%", "child",
                                      "nothing"])
def test_the_reader_pages_as_the_store_does(
        databases: tuple[ExecutionStore, ExecutionReader], workflow: str | None) -> None:
    store, reader = databases
    for descending in (False, True):
        for limit in (1, 3, 100):
            assert _pages(reader, limit, workflow, descending) == \
                _pages(store, limit, workflow, descending)


@pytest.mark.parametrize("workflow, found", [
    ("axb", ["wb.axb", "wb.axb"]), ("wb.axb", ["wb.axb", "wb.axb"]),
    ("action:wb.axb", ["action:wb.axb"]), ("wb.axb.x", [])])
def test_a_short_name_is_no_part_of_an_action_run(
        databases: tuple[ExecutionStore, ExecutionReader], workflow: str,
        found: list[str]) -> None:
    # action:wb.axb runs the action wb.axb: no workbook holds it, so "axb" (a short
    # name) and "wb.axb" (a workflow's full name) do not name it; its own name does.
    for source in databases:
        page, more = source.page(100, None, workflow)
        assert [e.workflow for e in page] == found and not more


@pytest.mark.parametrize("max_bytes", [1, 2000, 5000, 1 << 20])
def test_the_reader_bounds_a_page_in_bytes_as_the_store_does(
        databases: tuple[ExecutionStore, ExecutionReader], max_bytes: int) -> None:
    """``[api] executions_page_max_bytes``: the same shorter pages from both."""
    store, reader = databases
    for descending in (False, True):
        for limit in (3, 100):
            pages = _pages(store, limit, None, descending, max_bytes)
            assert _pages(reader, limit, None, descending, max_bytes) == pages
            if max_bytes == 1:  # one record a page, always at least one
                assert all(len(page) == 1 for page, _more in pages)


def test_the_reader_shows_every_state_as_the_store_does(
        databases: tuple[ExecutionStore, ExecutionReader]) -> None:
    store, reader = databases
    every, _ = store.page(100)
    shown = pause_views.shown(store, every)
    assert sorted({e.state for e in shown}) == [
        "CANCELLED", "ERROR", "INTERRUPTED", "PAUSED", "PENDING", "RUNNING", "SUCCESS"]
    # stored FAILURE (its undo failed) and REVERTED (undone) both read ERROR (Mistral's)
    assert sorted((e.workflow, e.reverted) for e in shown if e.state == "ERROR") == [
        ("wb.A_B", False), ("wb.stop", False), ("wb.undone", True)]
    assert any(e.pausing for e in shown) and any(e.parent_id for e in shown)
    assert all(e.input["AdminPassword"] != "s3cret" for e in shown)
    for execution in every:
        assert pause_views.shown_one(reader, reader.get(execution.id)) == \
            pause_views.shown_one(store, store.get(execution.id))


def test_the_reader_refuses_a_page_as_the_store_does(
        databases: tuple[ExecutionStore, ExecutionReader]) -> None:
    store, reader = databases
    for args, kind in [((0,), exceptions.InvalidInput),
                       ((5, "not-an-id"), exceptions.InvalidInput),
                       ((5, "00000000-0000-0000-0000-000000000000"), exceptions.NotFound)]:
        with pytest.raises(kind) as by_store:
            store.page(*args)
        with pytest.raises(kind) as by_reader:
            reader.page(*args)
        assert str(by_reader.value) == str(by_store.value)
    with pytest.raises(exceptions.ExecutionNotFound) as missing:
        reader.get("00000000-0000-0000-0000-000000000000")
    with pytest.raises(exceptions.ExecutionNotFound) as by_store_missing:
        store.get("00000000-0000-0000-0000-000000000000")
    assert str(missing.value) == str(by_store_missing.value)


def test_the_api_reads_with_the_reader_alone_and_shows_the_same(tmp_path: Path) -> None:
    writer = Host(tmp_path / "data", ACTIONS)
    _every_state(writer._session.execution_store())
    fresh = Host(tmp_path / "data", ACTIONS)
    try:
        assert isinstance(fresh._session.execution_reader(), ExecutionReader)
        assert fresh.executions.page(4, sort_dir="desc") == \
            writer.executions.page(4, sort_dir="desc")
        assert fresh.executions.list() == writer.executions.list()
        for execution in writer.executions.list():
            assert fresh.executions.get(execution.id) == writer.executions.get(execution.id)
        assert "store" not in fresh._session.opened()  # it never built TaskFlow's backend
    finally:
        writer._session.close_workflows()
        fresh._session.close_workflows()


def test_a_write_in_progress_neither_blocks_nor_shows(
        databases: tuple[ExecutionStore, ExecutionReader], tmp_path: Path) -> None:
    _, reader = databases
    before, _ = reader.page(100)
    writer = sqlite3.connect(tmp_path / "data" / "executions.sqlite", isolation_level=None,
                             timeout=0)
    try:
        writer.execute("BEGIN IMMEDIATE")  # holds the write lock, not committed
        writer.execute("INSERT INTO tripleo_flow_cancels (execution_id, cancelled_at) "
                       "VALUES (?, 1.0)", (before[0].id,))
        assert reader.page(100) == (before, False)
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_database_not_made_yet_is_left_to_the_store(tmp_path: Path) -> None:
    path = tmp_path / "data" / "executions.sqlite"
    assert execution_reader.open_file(path) is None
    assert not path.exists()  # the reader creates nothing
    host = Host(tmp_path / "data", ACTIONS)
    try:
        assert host.executions.page(5) == ([], None)
        assert path.exists()  # the store made it, as before
    finally:
        host._session.close_workflows()


def test_an_older_schema_is_left_to_the_store_which_upgrades_it(tmp_path: Path) -> None:
    old = Host(tmp_path / "data", ACTIONS)
    _every_state(old._session.execution_store())
    expected = old.executions.list()
    old._session.close_workflows()
    path = tmp_path / "data" / "executions.sqlite"
    with sqlite3.connect(path) as db:  # the cancels table of an older release
        db.execute("ALTER TABLE tripleo_flow_cancels DROP COLUMN output")
    before = path.read_bytes()
    assert execution_reader.open_file(path) is None
    assert path.read_bytes() == before  # nothing written by the look
    host = Host(tmp_path / "data", ACTIONS)
    try:
        listed = host.executions.list()
        assert "store" in host._session.opened()
        stopped = {e.id: e for e in expected if e.workflow == "wb.stop"}
        # The column a stop's output was kept in is gone: Mistral's default output.
        assert [e for e in listed if e.id not in stopped] == \
            [e for e in expected if e.id not in stopped]
        assert execution_reader.open_file(path) is not None  # upgraded by the store
    finally:
        host._session.close_workflows()


@pytest.mark.parametrize("url,found", [
    ("", True), ("sqlite:///{db}", True), ("sqlite:///{db}?timeout=3", False),
    ("sqlite://", False), ("mysql+pymysql://u:p@localhost/db", False)])
def test_only_a_sqlite_file_is_read_without_the_store(
        databases: tuple[ExecutionStore, ExecutionReader], tmp_path: Path, url: str,
        found: bool) -> None:
    db = tmp_path / "data" / "executions.sqlite"
    reader = execution_reader.open_url(url.format(db=db), db)
    assert (reader is not None) is found
