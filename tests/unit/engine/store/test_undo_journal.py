"""The executions database's undo journal (:mod:`tripleo_flow.engine.store.undo_journal`)."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from tripleo_flow.engine.store.redaction import Redactor
from tripleo_flow.engine.store.undo_journal import ExecutionUndoJournal, create_table


def _engine(tmp_path: Path) -> sa.engine.Engine:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'executions.sqlite'}")
    create_table(engine)  # the executions backend does, with its own tables
    return engine


def test_a_rerun_of_the_same_task_gets_the_first_record(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    journal = ExecutionUndoJournal(engine, "ex-1")
    made: list[str] = []

    def make(value: str) -> dict[str, str]:
        made.append(value)
        return {"previous": value}

    with journal.running("set", attempt=1, item=None):
        assert journal.recall(lambda: make("first")) == {"previous": "first"}
        assert journal.recall(lambda: "v1", part="version") == "v1"
    # the resumed execution, in a new process: a new journal object on the same database
    again = ExecutionUndoJournal(_engine(tmp_path), "ex-1")
    with again.running("set", attempt=1, item=None):
        assert again.recall(lambda: make("second")) == {"previous": "first"}
        assert again.recall(lambda: "v2", part="version") == "v1"
    assert made == ["first"]
    # another attempt (a retry), item, task or execution records anew
    for task, attempt, item, execution in (("set", 2, None, "ex-1"), ("set", 1, 0, "ex-1"),
                                           ("other", 1, None, "ex-1"), ("set", 1, None, "ex-2")):
        other = ExecutionUndoJournal(engine, execution)
        with other.running(task, attempt=attempt, item=item):
            assert other.recall(lambda: make("anew")) == {"previous": "anew"}
    assert made == ["first"] + ["anew"] * 4
    assert journal.entries() == [("set", "1/-/"), ("set", "1/-/version"), ("set", "2/-/"),
                                 ("set", "1/0/"), ("other", "1/-/")]
    journal.forget()
    assert journal.entries() == []
    assert ExecutionUndoJournal(engine, "ex-2").entries() == [("set", "1/-/")]


def test_outside_a_task_nothing_is_kept(tmp_path: Path) -> None:
    journal = ExecutionUndoJournal(_engine(tmp_path), "ex-1")
    assert journal.recall(lambda: {"a": 1}) == {"a": 1}
    assert journal.recall(lambda: {"a": 2}) == {"a": 2}
    assert journal.entries() == []


def test_a_record_holding_a_secret_is_not_stored(tmp_path: Path) -> None:
    redactor = Redactor()
    redactor.learn(["s3cret-value-42"])
    engine = _engine(tmp_path)
    journal = ExecutionUndoJournal(engine, "ex-1", redactor)
    with journal.running("set", attempt=1, item=None):
        assert journal.recall(lambda: {"previous": {"X": "s3cret-value-42"}}) == {
            "previous": {"X": "s3cret-value-42"}}
        assert journal.recall(lambda: {"previous": {"X": "other"}}) == {
            "previous": {"X": "other"}}  # made again: the secret one was not kept
    assert journal.entries() == [("set", "1/-/")]  # the second one
    with engine.connect() as conn:
        dump = "\n".join(str(row) for row in conn.execute(sa.text(
            "SELECT * FROM tripleo_flow_undo_journal")))
    assert "s3cret" not in dump
