"""``fail`` inside a sub-workflow run inline in its parent's graph (issue 26).

Mistral's ``fail`` command ends its workflow ERROR at once
(mistral/engine/workflows.py ``stop`` -> ``_fail_workflow``; test_commands.py
``test_fail``: no task after it runs); a task completing in a workflow that has
ended starts nothing (workflow_handler ``check_and_complete`` returns), and the
sub-workflow's result goes to its parent's task at once, whose ``on-error``
decides.  Here the sub-workflow runs inside its parent's TaskFlow graph: once
its ``fail`` is taken, none of its other tasks starts (the one running ends),
and the parent's task fails, handled by its ``on-error``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_conformance import Run


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host._session.close_workflows()


def test_fail_in_an_inlined_sub_workflow_starts_none_of_its_other_tasks(
        host: Host, tmp_path: Path) -> None:
    log = tmp_path / "effects.log"
    run = Run(host, tmp_path, """
        wf:
          input: [log]
          output:
            handled: <% $.handled %>
          tasks:
            call:
              workflow: failing
              input: {log: <% $.log %>}
              on-error: [handler]
            handler:
              action: test.record
              input: {path: <% $.log %>, value: handler}
              publish:
                handled: <% task(call).state %>
        failing:
          input: [log]
          tasks:
            bad:
              action: std.sleep seconds=1  # 'slow' has started meanwhile
              on-success: [fail]  # alone: inlined in the parent's graph
            slow:
              action: std.sleep seconds=2
              on-success: [after]
            after:
              action: test.record
              input: {path: <% $.log %>, value: after}
        """, log=str(log))
    assert run.state == "SUCCESS", run.error
    assert run.output == {"handled": "ERROR"}
    assert run.tasks["call"] == "ERROR"
    [execution] = host.executions.list()  # inlined: no child execution
    tasks = {t.name: t.state for t in host.tasks.list(execution.id)}
    assert tasks["call/slow"] == "SUCCESS"  # it was running: it ends
    assert tasks.get("call/after", "PENDING") in ("PENDING", "SKIPPED")
    # 'after' never starts: the sub-workflow had ended ERROR when 'slow' finished.
    assert log.read_text().splitlines() == ["do handler"]
