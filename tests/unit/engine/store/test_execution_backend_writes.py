"""What the execution backend writes, and when: a durable save is in the database when
it returns, deferred saves are written whole at the next durable one, rows never hold a
secret (bulk inserts and meta-only updates included)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from taskflow import states
from taskflow.persistence import models

from tripleo_flow.common import secret_masking
from tripleo_flow.engine.store.execution_backend import ExecutionBackend


def _rows(db: Path) -> dict[str, dict[str, Any]]:
    """Atom rows as another process reads them (committed data only)."""
    with sqlite3.connect(db) as other:
        other.row_factory = sqlite3.Row
        found = other.execute("SELECT name, state, results, meta FROM atomdetails").fetchall()
    return {row["name"]: {"state": row["state"],
                          "results": json.loads(row["results"]) if row["results"] else None,
                          "meta": json.loads(row["meta"]) if row["meta"] else None}
            for row in found}


def _flow(tmp_path: Path, names: list[str], results: Any = None, known: tuple[str, ...] = ()
          ) -> tuple[ExecutionBackend, Any, Any, Path]:
    """A flow detail whose atoms are all inserted by one save (SUCCESS with ``results``
    when given, else PENDING), the backend knowing the secrets ``known``."""
    db = tmp_path / "executions.db"
    backend = ExecutionBackend(f"sqlite:///{db}")
    backend.redactor.learn(known)
    conn = backend.get_connection()
    book = models.LogBook("book")
    fd = models.FlowDetail("flow", uuid="fd-1")
    book.add(fd)
    conn.save_logbook(book)
    for name in names:
        ad = models.TaskDetail(name, uuid=f"ad-{name}")
        if results is None:
            ad.state = states.PENDING
        else:
            ad.put(states.SUCCESS, results)
        fd.add(ad)
    conn.update_flow_details(fd)
    return backend, conn, fd, db


def test_a_durable_save_is_committed_when_it_returns(tmp_path: Path) -> None:
    backend, conn, fd, db = _flow(tmp_path, ["t1", "t2"])
    try:
        t1 = fd.find("ad-t1").copy()
        t1.state = states.RUNNING
        conn.update_atom_details(t1)
        t1.meta = {"progress": 0.0}
        conn.update_atom_details(t1)
        assert _rows(db)["t1"]["state"] == states.PENDING  # deferred: RUNNING, progress
        t1.put(states.SUCCESS, {"state": "SUCCESS", "next": ["t2"]})
        conn.update_atom_details(t1)
        row = _rows(db)["t1"]
        assert row["state"] == states.SUCCESS and row["results"]["next"] == ["t2"]
        assert row["meta"] == {"progress": 0.0}
        t1.meta = {"progress": 1.0}
        conn.update_atom_details(t1)  # deferred (meta only)
        assert _rows(db)["t1"]["meta"] == {"progress": 0.0}
        t2 = fd.find("ad-t2").copy()
        t2.put(states.SUCCESS, {"state": "SUCCESS", "next": []})
        conn.update_atom_details(t2)  # durable: carries t1's progress
        rows = _rows(db)
        assert rows["t1"] == {"state": states.SUCCESS, "meta": {"progress": 1.0},
                              "results": {"state": "SUCCESS", "next": ["t2"]}}
        assert rows["t2"]["state"] == states.SUCCESS
    finally:
        backend.close()


def test_a_deferred_state_change_is_written_whole(tmp_path: Path) -> None:
    backend, conn, fd, db = _flow(tmp_path, ["t1"])
    try:
        t1 = fd.find("ad-t1").copy()
        t1.put(states.SUCCESS, {"state": "SUCCESS"})
        conn.update_atom_details(t1)
        t1.state = states.RUNNING  # rerun (a retry): deferred, then flushed by a read
        t1.meta = {"progress": 0.5}
        conn.update_atom_details(t1)
        conn.get_atom_details("ad-t1")
        assert _rows(db)["t1"]["state"] == states.RUNNING
        assert _rows(db)["t1"]["meta"] == {"progress": 0.5}
    finally:
        backend.close()


def test_no_secret_in_bulk_inserts_nor_in_meta_only_updates(tmp_path: Path) -> None:
    names = [f"t{i}" for i in range(300)]
    backend, conn, fd, db = _flow(
        tmp_path, names, {"admin_password": "hunter2hunter2",
                          "note": "has known-secret-value inside"}, ("known-secret-value",))
    try:
        rows = _rows(db)
        assert len(rows) == len(names)
        for row in rows.values():
            assert row["results"] == {"admin_password": secret_masking.MASK,
                                      "note": secret_masking.MASK}
        t0 = fd.find("ad-t0").copy()
        t0.meta = {"progress": 0.5, "progress_details": {
            "at_progress": 0.5, "details": {"status": "token known-secret-value"}}}
        conn.update_atom_details(t0)  # meta only: deferred
        conn.flush()
        meta = _rows(db)["t0"]["meta"]
        assert meta["progress"] == 0.5
        assert meta["progress_details"]["details"]["status"] == secret_masking.MASK
        for stored in tmp_path.glob("executions.db*"):  # the WAL too
            assert b"known-secret-value" not in stored.read_bytes()
            assert b"hunter2hunter2" not in stored.read_bytes()
    finally:
        backend.close()


def test_a_large_unchanged_input_is_masked_once_over_the_saves_of_its_flow(
        tmp_path: Path) -> None:
    """Each save of a flow detail writes its whole meta: the execution's input (80,000
    parameters) was masked again each time (issue 29).  A secret learned between two
    saves is still masked in the next one."""
    backend, conn, fd, db = _flow(tmp_path, ["t0"])
    try:
        parameters = {f"P{i}": f"value-{i}" for i in range(5000)}
        parameters["Motd"] = "hello late-secret-4f1c9e"
        fd.meta = {"workflow": "w", "input": {"plan": "p", "parameters": parameters}}
        conn.update_flow_details(fd)
        masked = backend.redactor.parts_masked
        for pid in range(5):
            fd.meta = {**fd.meta, "pid": pid}
            conn.update_flow_details(fd)
        assert backend.redactor.parts_masked == masked
        backend.redactor.learn(["late-secret-4f1c9e"])
        fd.meta = {**fd.meta, "pid": 99}
        conn.update_flow_details(fd)
        with sqlite3.connect(db) as other:
            stored = json.loads(other.execute("SELECT meta FROM flowdetails").fetchone()[0])
        assert stored["pid"] == 99
        assert stored["input"]["parameters"]["Motd"] == secret_masking.MASK
        assert stored["input"]["parameters"]["P7"] == "value-7"
    finally:
        backend.close()


def test_updates_set_what_taskflow_reads_back_and_its_update_time(tmp_path: Path) -> None:
    backend, conn, fd, db = _flow(tmp_path, ["t1"])
    try:
        t1 = fd.find("ad-t1").copy()
        t1.put(states.SUCCESS, {"state": "SUCCESS", "n": [1, 2.5, None, True], "s": "é"})
        t1.meta = {"progress": 1.0}
        conn.update_atom_details(t1)
        with sqlite3.connect(db) as other:
            created, updated = other.execute(
                "SELECT created_at, updated_at FROM atomdetails").fetchone()
        assert updated is not None and updated >= created  # TaskFlow's onupdate, kept
        fresh = ExecutionBackend(f"sqlite:///{db}")
        try:
            read = fresh.get_connection().get_atom_details("ad-t1")
        finally:
            fresh.close()
        assert read.to_dict() == t1.to_dict()
    finally:
        backend.close()


def test_writes_on_a_sqlite_file_go_through_one_kept_connection(tmp_path: Path) -> None:
    import sqlalchemy as sa

    backend, conn, fd, db = _flow(tmp_path, [f"t{i}" for i in range(5)])
    checkouts: list[Any] = []
    sa.event.listen(backend.engine, "checkout", lambda *args: checkouts.append(args))
    try:
        for i in range(5):
            ad = fd.find(f"ad-t{i}").copy()
            ad.put(states.SUCCESS, {"state": "SUCCESS", "next": []})
            conn.update_atom_details(ad)
            assert _rows(db)[f"t{i}"]["state"] == states.SUCCESS  # committed at once
        assert len(checkouts) <= 1
        conn.release()  # a later write opens another connection
        ad = fd.find("ad-t0").copy()
        ad.put(states.FAILURE, None)
        conn.update_atom_details(ad)
        assert _rows(db)["t0"]["state"] == states.FAILURE
        assert len(checkouts) <= 2
    finally:
        backend.close()


def test_a_new_execution_is_added_without_reading_the_others(tmp_path: Path) -> None:
    """TaskFlow's save of a logbook read every flow detail of it with all their atoms:
    each execution started read the whole history.  A new flow detail added to a saved
    logbook reads none of the others; the logbook and both flows read back whole."""
    import sqlalchemy as sa

    backend, conn, _fd, db = _flow(tmp_path, [f"t{i}" for i in range(50)],
                                   {"state": "SUCCESS"})
    statements: list[str] = []
    sa.event.listen(backend.engine, "before_cursor_execute",
                    lambda _c, _cur, sql, *_rest: statements.append(sql))
    try:
        book = models.LogBook("book", uuid=conn.get_logbooks().__next__().uuid)
        new = models.FlowDetail("second", uuid="fd-2")
        new.meta = {"input": {"admin_password": "hunter2hunter2"}}
        new.add(models.TaskDetail("n0", uuid="ad-n0"))
        book.add(new)
        statements.clear()
        saved = conn.save_logbook(book)
        assert not [sql for sql in statements if "atomdetails" in sql.split("FROM")[-1]
                    and sql.lstrip().upper().startswith("SELECT")]
        assert not [sql for sql in statements if "SELECT" in sql.upper()
                    and "flowdetails.name" in sql]  # no flow detail read whole
        assert saved.uuid == book.uuid and saved.find("fd-2") is not None
        fresh = ExecutionBackend(f"sqlite:///{db}")
        try:
            read = fresh.get_connection().get_logbook(book.uuid)
            flows = {fd.uuid: fd for fd in read}
            assert set(flows) == {"fd-1", "fd-2"}
            assert len(flows["fd-1"]) == 50 and [ad.name for ad in flows["fd-2"]] == ["n0"]
            assert flows["fd-2"].meta == {"input": {"admin_password": secret_masking.MASK}}
        finally:
            fresh.close()
        again = models.LogBook("book", uuid=book.uuid)  # an existing flow: TaskFlow's save
        again.add(flows["fd-2"])
        assert {fd.uuid for fd in conn.save_logbook(again)} == {"fd-1", "fd-2"}
    finally:
        backend.close()


def test_a_durable_save_whose_write_failed_is_written_when_tried_again(tmp_path: Path) -> None:
    """TaskFlow's storage tries a failed save again; the second try found the row
    already merged, took it for a meta-only change and deferred it: the task's result
    was not in the database when the next task started."""
    from taskflow import exceptions as tf_exc

    backend, conn, fd, db = _flow(tmp_path, ["t1", "t2"])
    try:
        t1 = fd.find("ad-t1").copy()
        t1.state = states.RUNNING
        conn.update_atom_details(t1)
        t1.put(states.SUCCESS, {"state": "SUCCESS", "next": ["t2"]})
        with sqlite3.connect(db, isolation_level=None) as other:
            conn._held.connection.dbapi_connection.execute("PRAGMA busy_timeout=50")
            other.execute("BEGIN EXCLUSIVE")
            try:
                conn.update_atom_details(t1)
            except tf_exc.StorageFailure:
                pass
            else:
                raise AssertionError("the write went through a lock held by another")
            other.execute("COMMIT")
        assert _rows(db)["t1"]["state"] == states.PENDING
        conn.update_atom_details(t1)  # tried again, as TaskFlow's storage does
        assert _rows(db)["t1"] == {"state": states.SUCCESS, "meta": {},
                                   "results": {"state": "SUCCESS", "next": ["t2"]}}
    finally:
        backend.close()
