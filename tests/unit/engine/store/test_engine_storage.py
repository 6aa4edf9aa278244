"""The engine's storage (:mod:`tripleo_flow.engine.store.engine_storage`): installed by
``engine.load``, it saves what TaskFlow's own storage saves, in the executions database,
including progress a task reports from a pool thread, and retries a failed save as
TaskFlow does."""

from __future__ import annotations

import json
import sqlite3
from concurrent import futures
from pathlib import Path
from typing import Any

import pytest
from taskflow import exceptions as tf_exc
from taskflow import states, task
from taskflow import storage as tf_storage
from taskflow.patterns import graph_flow, linear_flow
from taskflow.persistence import models

from tripleo_flow.engine.compile import engine
from tripleo_flow.engine.store import engine_storage
from tripleo_flow.engine.store.execution_backend import ExecutionBackend


class _Reporting(task.Task):  # type: ignore[misc]
    def execute(self) -> str:
        self.update_progress(0.5)  # in the pool thread when tasks run side by side
        return f"done {self.name}"


def _rows(db: Path) -> dict[str, tuple[str, Any, Any]]:
    with sqlite3.connect(db) as other:
        found = other.execute("SELECT name, state, results, meta FROM atomdetails").fetchall()
    return {name: (state, json.loads(results) if results else None,
                   json.loads(meta) if meta else None) for name, state, results, meta in found}


def _run(flow: Any, tmp_path: Path, pool: Any) -> tuple[Any, Path]:
    db = tmp_path / "executions.db"
    backend = ExecutionBackend(f"sqlite:///{db}")
    book = models.LogBook("book")
    fd = models.FlowDetail("flow", uuid="fd-1")
    book.add(fd)
    backend.get_connection().save_logbook(book)
    loaded = engine.load(flow, flow_detail=fd, book=book, backend=backend,
                         engine="parallel", executor=pool, store={"given": 1})
    assert isinstance(loaded.storage, engine_storage.EngineStorage)
    loaded.run()
    backend.close()
    return loaded, db


def test_the_engine_saves_every_task_and_its_progress_in_the_database(tmp_path: Path) -> None:
    flow = graph_flow.Flow("f").add(
        linear_flow.Flow("a").add(_Reporting("a1"), _Reporting("a2")),
        linear_flow.Flow("b").add(_Reporting("b1"), _Reporting("b2")))
    with futures.ThreadPoolExecutor(4) as pool:
        loaded, db = _run(flow, tmp_path, pool)
    rows = _rows(db)
    for name in ("a1", "a2", "b1", "b2"):
        state, result, meta = rows[name]
        assert state == states.SUCCESS and result == f"done {name}"
        assert meta["progress"] == 1.0
        assert loaded.storage.get_task_progress(name) == 1.0
        assert loaded.storage.get_atom_state(name) == states.SUCCESS
        assert loaded.storage.get(name) == f"done {name}"
    assert loaded.storage.fetch("given") == 1  # injected before the engine compiled
    assert loaded.storage.get_flow_state() == states.SUCCESS


def test_reported_progress_details_are_saved(tmp_path: Path) -> None:
    class _Staged(_Reporting):
        def execute(self) -> str:
            self.notifier.notify(task.EVENT_UPDATE_PROGRESS, {"progress": 0.5, "stage": "half"})
            return "ok"

    flow = linear_flow.Flow("f").add(_Staged("only"))
    with futures.ThreadPoolExecutor(2) as pool:
        loaded, _db = _run(flow, tmp_path, pool)
    # The details were saved at 0.5; the engine then set the progress to 1.0 alone.
    assert loaded.storage.get_task_progress_details("only") == {
        "at_progress": 0.5, "details": {"stage": "half"}}
    assert loaded.storage.get_task_progress("only") == 1.0


class _FailingOnce:
    """A connection whose first save fails as a database outage would."""

    def __init__(self) -> None:
        self.calls = 0

    def update_atom_details(self, ad: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            raise tf_exc.StorageFailure("database went away")
        return ad


def test_a_failed_save_is_tried_again_as_taskflow_does(monkeypatch: Any) -> None:
    monkeypatch.setattr(tf_storage, "RETRY_WAIT_TIMEOUT", 0)
    fd = models.FlowDetail("flow", uuid="fd-1")
    storage = engine_storage.EngineStorage(fd)
    original = models.TaskDetail("t", uuid="ad-t")
    changed = original.copy()
    changed.state = states.RUNNING
    conn = _FailingOnce()
    assert storage._save_atom_detail(conn, original, changed) is original
    assert conn.calls == 2 and original.state == states.RUNNING

    class _Down(_FailingOnce):
        def update_atom_details(self, ad: Any) -> Any:
            self.calls += 1
            raise tf_exc.StorageFailure("database went away")

    down = _Down()
    with pytest.raises(tf_exc.StorageFailure):
        storage._save_atom_detail(down, original, changed)
    assert down.calls == tf_storage.RETRY_ATTEMPTS


def test_an_unknown_atom_is_not_found() -> None:
    storage = engine_storage.EngineStorage(models.FlowDetail("flow", uuid="fd-1"))
    for call in (storage.get_atom_state, storage.get_atom_uuid, storage.get_atom_intention,
                 storage.get_task_progress):
        with pytest.raises(tf_exc.NotFound):
            call("nope")


class _Echo(task.Task):  # type: ignore[misc]
    def execute(self, given: Any) -> Any:
        return given


def test_the_store_is_kept_in_memory_or_replaces_a_persisted_one(tmp_path: Path) -> None:
    """``store`` (a run's start context, rebuilt from the execution's record at each
    run) is not written to the database (issue 29: a copy of the whole input); an
    execution recorded with it persisted (by an older version) gets it replaced, so
    that the new value, not the persisted one, is read."""
    with futures.ThreadPoolExecutor(2) as pool:
        loaded, db = _run(linear_flow.Flow("f").add(_Echo("echo")), tmp_path, pool)
    assert loaded.storage.get("echo") == 1
    assert set(_rows(db)) == {"echo"}  # no _TaskFlow_INJECTOR row

    db = tmp_path / "old.db"
    backend = ExecutionBackend(f"sqlite:///{db}")
    book = models.LogBook("book")
    fd = models.FlowDetail("flow", uuid="fd-2")
    injector = models.TaskDetail(tf_storage.Storage.injector_name, uuid="inj-2")
    injector.results, injector.state = {"given": "old"}, states.SUCCESS
    fd.add(injector)
    book.add(fd)
    backend.get_connection().save_logbook(book)
    with futures.ThreadPoolExecutor(2) as pool:
        loaded = engine.load(linear_flow.Flow("f").add(_Echo("echo")), flow_detail=fd,
                             book=book, backend=backend, engine="parallel", executor=pool,
                             store={"given": "new"})
        loaded.run()
    backend.close()
    assert loaded.storage.get("echo") == "new"
    assert _rows(db)[tf_storage.Storage.injector_name][1] == {"given": "new"}
