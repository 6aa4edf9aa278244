"""The progress events of a jobboard run (:func:`tripleo_flow.client.jobs._emit`), read
from the stored task records: a failed task reads ERROR and a completed one that was
undone SUCCESS (as Mistral's); the undo, the record's ``reverted``, is still a
``reverted`` event."""

from __future__ import annotations

from typing import Any

from tripleo_flow.client.jobs import _emit
from tripleo_flow.engine.store.executions import Execution, TaskRecord


def _events(*records: TaskRecord) -> list[tuple[str, str]]:
    execution = Execution("e1", "wb.wf", "RUNNING", {})
    seen: dict[str, Any] = {}
    got: list[Any] = []
    for record in records:
        _emit(execution, record, seen, (got.append,))
    return [(event.task, event.event) for event in got]


def test_a_failed_task_then_undone() -> None:
    assert _events(TaskRecord("t", "RUNNING"), TaskRecord("t", "ERROR", error="boom"),
                   TaskRecord("t", "ERROR", error="boom", reverted=True),
                   TaskRecord("t", "ERROR", error="boom", reverted=True)) == [
        ("t", "started"), ("t", "failed"), ("t", "reverted")]


def test_a_failed_and_undone_task_seen_at_once_and_a_completed_one_undone() -> None:
    assert _events(TaskRecord("t", "ERROR", error="boom", reverted=True),
                   TaskRecord("u", "SUCCESS"), TaskRecord("u", "SUCCESS", reverted=True)) == [
        ("t", "failed"), ("t", "reverted"), ("u", "succeeded"), ("u", "reverted")]
