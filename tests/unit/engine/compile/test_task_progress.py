"""Progress an action reports while it runs is stored with its task (TaskRecord.progress)
and gone once the task has ended."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

from tests.engine_helpers import ACTIONS, Host
from tripleo_flow.actions.base import Action
from tripleo_flow.core.deploy.progress import PlanProgress, StackProgress

STACK = StackProgress("oc", "CREATE_IN_PROGRESS", 5, 12,
                      ("2026-11-26 oc.Controller CREATE_IN_PROGRESS state changed",))


class Report(Action):
    """Report plan-upload and stack progress, then wait for a gate file."""

    def execute(self, gate: str) -> str:
        self.context.report(PlanProgress("oc", "upload", 3, 4))
        self.context.report(STACK)
        deadline = time.monotonic() + 60
        while not Path(gate).exists():
            assert time.monotonic() < deadline, "the test never opened the gate"
            time.sleep(0.05)
        return "done"


WORKBOOK = textwrap.dedent("""\
    version: '2.0'
    name: progress_report
    workflows:
      report:
        input: [gate]
        tasks:
          report:
            action: test.report
            input: {gate: <% $.gate %>}
    """)


def _progress_of(host: Any, execution_id: str, task: str, deadline: float) -> Any:
    """The progress task ``task`` shows once it shows one (None at the deadline)."""
    progress = None
    while progress is None and time.monotonic() < deadline:
        tasks = {t.name: t for t in host.tasks.list(execution_id)}
        progress = tasks[task].progress if task in tasks else None
        time.sleep(0.05)
    return progress


def _ended(host: Any, execution_id: str, deadline: float) -> None:
    while host.executions.get(execution_id).state not in ("SUCCESS", "ERROR"):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_progress_is_stored_while_the_task_runs(tmp_path: Path) -> None:
    host: Any = Host(tmp_path / "data", {**ACTIONS, "test.report": Report})
    book = tmp_path / "progress_report.yaml"
    book.write_text(WORKBOOK)
    host.workbooks.create(book)
    gate = tmp_path / "gate"
    heard: list[Any] = []
    try:
        execution = host.executions.create("report", {"gate": str(gate)}, wait=False,
                                           listeners=[heard.append])
        deadline = time.monotonic() + 30
        progress = _progress_of(host, execution.id, "report", deadline)
        # The stack report came last: it is what the task shows now.
        # (a stack's share of the work: 5 of 12 when its follower worked out none)
        assert progress == {"stage": "stack", "done": 5, "total": 12,
                            "status": "CREATE_IN_PROGRESS", "share": round(5 / 12, 4)}
        gate.touch()
        _ended(host, execution.id, deadline)
        [task] = host.tasks.list(execution.id)
        assert task.state == "SUCCESS" and task.progress is None
        # Listeners in this process hear each typed report as well (a stack's events).
        reports = [(e.progress, e.report) for e in heard if e.event == "progress"]
        assert reports == [
            ({"stage": "upload", "done": 3, "total": 4, "status": ""},
             PlanProgress("oc", "upload", 3, 4)),
            ({"stage": "stack", "done": 5, "total": 12, "status": "CREATE_IN_PROGRESS",
              "share": round(5 / 12, 4)}, STACK)]
    finally:
        gate.touch()
        host._session.close_workflows()


JOINED = textwrap.dedent("""\
    version: '2.0'
    name: progress_joined
    workflows:
      report:
        input: [gate]
        tasks:
          first:
            action: std.noop
            on-success: [report]
          second:
            action: std.noop
            on-success: [report]
          report:
            join: all
            action: test.report
            input: {gate: <% $.gate %>}
    """)


def test_progress_is_stored_on_the_state_machine_too(tmp_path: Path) -> None:
    """A workflow with a join runs as Mistral's state machine: what its task reports is
    stored with the task all the same (the HTTP event stream and the GUI read it)."""
    host: Any = Host(tmp_path / "data", {**ACTIONS, "test.report": Report})
    book = tmp_path / "progress_joined.yaml"
    book.write_text(JOINED)
    host.workbooks.create(book)
    gate = tmp_path / "gate"
    try:
        execution = host.executions.create("progress_joined.report", {"gate": str(gate)},
                                           wait=False)
        deadline = time.monotonic() + 30
        progress = _progress_of(host, execution.id, "report", deadline)
        assert progress == {"stage": "stack", "done": 5, "total": 12,
                            "status": "CREATE_IN_PROGRESS", "share": round(5 / 12, 4)}
        gate.touch()
        _ended(host, execution.id, deadline)
        assert {t.name: t.progress for t in host.tasks.list(execution.id)}["report"] is None
    finally:
        gate.touch()
        host._session.close_workflows()
