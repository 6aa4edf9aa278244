"""Helpers of the tests that pause, stop or cancel an execution: the test host, a
workbook whose slow task leaves time to pause it, its effects log, and a run in a
real separate process (``python -c`` on the test host) for the functional tests that
pause it from this one (``tests/functional/engine/test_pause_*.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host, until

ROOT = Path(__file__).resolve().parents[1]

#: Run a workflow in this separate process; print its id, then how it ended.
RUN_ELSEWHERE = textwrap.dedent("""\
    import json, sys
    from pathlib import Path
    from tests.engine_helpers import Host
    host = Host(Path(sys.argv[1]))
    runner = host._session.runner()
    fd = runner.start(sys.argv[2], json.loads(sys.argv[3]))
    print(fd.uuid, flush=True)
    print(runner.execute(fd).state, flush=True)
    host._session.close_workflows()
    """)


def _workbook(join: bool) -> str:
    return textwrap.dedent(f"""\
        version: '2.0'
        name: pausing
        workflows:
          chain:
            input: [log]
            tasks:
              first:
                action: test.record path=<% $.log %> value="first"
                on-success: [slow]
              slow:
                action: std.sleep seconds=4
                on-success: [after]
              after:
                action: test.record path=<% $.log %> value="after"
                on-success: [last]
              last:
                {"join: all" if join else ""}
                action: test.record path=<% $.log %> value="last"
          parent:
            input: [log]
            tasks:
              call:
                workflow: chain log=<% $.log %>
                retry: {{count: 1, delay: 0}}  # run apart: a child execution
                on-success: [done]
              done:
                action: test.record path=<% $.log %> value="parent-done"
        """)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host._session.close_workflows()


def _tasks(host: Host, execution_id: str) -> dict[str, str]:
    return {t.name: t.state for t in host.tasks.list(execution_id)}


def _elsewhere(host: Host, tmp_path: Path, workflow: str, join: bool = False,
               workbook: str | None = None) -> tuple[subprocess.Popen[str], str, Path]:
    """Start ``pausing.WORKFLOW`` (of ``workbook``'s text when given) in another
    process; it, the execution's id, its log."""
    path = tmp_path / "pausing.yaml"
    path.write_text(workbook or _workbook(join))
    host.workbooks.create(path)
    log = tmp_path / "effects.log"
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN_ELSEWHERE, str(tmp_path / "data"), f"pausing.{workflow}",
         json.dumps({"log": str(log)})], cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip(), log


def _effects(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _slow_runs(host: Host, execution_id: str, log: Path) -> None:
    """Once the first task is done, the slow one runs (its RUNNING mark is written
    with its result, so it cannot be read yet): its 4 s sleep has long begun 0.5 s on."""
    until("the first task done", lambda: _effects(log) == ["do first"])
    time.sleep(0.5)
    assert host.executions.get(execution_id).state == "RUNNING"
    assert _tasks(host, execution_id).get("slow") != "SUCCESS"


def _ended_elsewhere(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    try:
        state = proc.stdout.readline().strip()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    return state
