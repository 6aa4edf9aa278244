"""What readers see of a task while it runs: its state and since when (issue 30).

A running task's record had no start time until it ended (its outcome carries
``started_at``), so the CLI's and the GUI's task tables showed an empty Started cell
for the one task a user watches.  The engine now keeps the time with the RUNNING
state (one save, :class:`~tripleo_flow.engine.store.engine_storage.OneSaveTaskAction`).
Both engines (a ``join`` makes a workflow run on the state machine).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine_helpers import Host
from tests.pause_helpers import host as host  # the fixture
from tests.unit.engine.test_mistral_cancel import _install, _start
from tripleo_flow.common import clock

ENGINES = pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])


@ENGINES
def test_a_running_task_shows_when_it_started(host: Host, tmp_path: Path, join: bool
                                              ) -> None:
    name = _install(host, tmp_path, f"""\
        wf:
          input: [gate]
          tasks:
            first:
              action: std.noop
              on-success: held
            held:
              {"join: all" if join else ""}
              action: test.hold gate=<% $.gate %>
        """)
    before = clock.time()
    ident, gate = _start(host, tmp_path, f"{name}.wf")
    try:
        tasks = {t.name: t for t in host.tasks.list(ident)}
        held = tasks["held"]
        assert held.state == "RUNNING"
        assert held.started_at is not None and before <= held.started_at <= clock.time()
        assert held.finished_at is None
        assert tasks["first"].started_at is not None
        assert tasks["first"].started_at <= held.started_at
    finally:
        gate.opened.set()
    deadline = clock.time() + 60
    while host.executions.get(ident).state not in ("SUCCESS", "ERROR"):
        assert clock.time() < deadline, "the execution did not end"
        clock.sleep(0.05)
    ended = {t.name: t for t in host.tasks.list(ident)}["held"]
    assert ended.state == "SUCCESS"
    assert ended.started_at == pytest.approx(held.started_at, abs=1.0)
    assert ended.finished_at is not None and ended.finished_at >= ended.started_at


def test_a_skipped_task_shows_no_start(host: Host, tmp_path: Path) -> None:
    """A task no transition chose never started (its atom only decided it is skipped):
    the tables showed a Started time for it."""
    name = _install(host, tmp_path, """\
        wf:
          tasks:
            first:
              action: std.noop
              on-success:
                - chosen: <% true %>
                - passed_over: <% false %>
            chosen:
              action: std.noop
            passed_over:
              action: std.noop
        """)
    ident = host.executions.create(f"{name}.wf", {}).id
    tasks = {t.name: t for t in host.tasks.list(ident)}
    assert tasks["passed_over"].state == "SKIPPED"
    assert tasks["passed_over"].started_at is None
    assert tasks["chosen"].state == "SUCCESS" and tasks["chosen"].started_at is not None
