"""kill -9 from outside at any moment of a long chain, then resume: the run goes on
from the last task whose completion was committed (issue 31: the engine writes less
per task, never later).

The task boundaries are covered event by event in ``test_execution_crash_resume``;
here another process kills the run wherever it happens to be (inside an action,
between the action and the write of its result, in the engine), as a crash does.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.engine_helpers import Host, until

ROOT = Path(__file__).resolve().parents[2]
TASKS = [f"t{i}" for i in range(1, 301)]


def _chain_workbook(path: Path) -> None:
    tasks = {name: {"action": "test.record",
                    "input": {"path": "<% $.log %>", "value": name},
                    **({"on-success": TASKS[i + 1]} if i + 1 < len(TASKS) else {})}
             for i, name in enumerate(TASKS)}
    path.write_text(yaml.safe_dump({"version": "2.0", "name": "long", "workflows": {
        "chain": {"input": ["log"], "tasks": tasks}}}))


def _committed_rows(data_dir: Path) -> dict[str, dict[str, object]]:
    """The atom rows of the executions database, as another process reads them."""
    [db] = data_dir.rglob("executions.sqlite")
    with sqlite3.connect(db) as other:
        rows = other.execute("SELECT name, state, results, meta FROM atomdetails").fetchall()
    return {name: {"state": state, "results": json.loads(results) if results else None,
                   "meta": json.loads(meta) if meta else None}
            for name, state, results, meta in rows}


@pytest.mark.parametrize("after", [1, 37, 150])
def test_a_chain_killed_at_any_moment_resumes_after_its_last_committed_task(
        tmp_path: Path, after: int) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "effects.log"
    _chain_workbook(tmp_path / "long.yaml")
    host = Host(data_dir)
    host.conf.set_override("workbook_max_tasks", len(TASKS) + 1, group="limits")
    host.workbooks.create(tmp_path / "long.yaml")
    host._session.close_workflows()
    run = subprocess.Popen(
        [sys.executable, "-m", "tests.engine_helpers", "run", str(data_dir), "long.chain",
         json.dumps({"log": str(log)}), "no-such-event", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        until(f"{after} side effects", lambda: log.exists()
              and len(log.read_text().splitlines()) >= after, timeout=300)
        os.kill(run.pid, signal.SIGKILL)
    finally:
        _out, err = run.communicate(timeout=60)
    assert run.returncode == -signal.SIGKILL, err[-2000:]
    rows = _committed_rows(data_dir)
    committed = [name for name in TASKS if rows[name]["state"] == "SUCCESS"]
    assert committed == TASKS[:len(committed)]  # a prefix of the chain
    # One task runs at a time: at most the one running when killed has its effect done
    # without its result saved (killed after the first effect, possibly none saved).
    assert len(committed) >= after - 1
    for name in committed:  # each completed task's row whole: its result and progress
        assert rows[name]["results"]["state"] == "SUCCESS"  # type: ignore[index]
        assert rows[name]["meta"]["progress"] == 1.0  # type: ignore[index]
    before = log.read_text().splitlines()
    done = len(committed)
    # The task running when killed may have done its effect without its result saved.
    assert before in ([f"do {t}" for t in TASKS[:done]], [f"do {t}" for t in TASKS[:done + 1]])
    host = Host(data_dir)
    try:
        [execution] = host.executions.list()
        assert execution.state == "INTERRUPTED"
        assert host.executions.resume(execution.id).state == "SUCCESS"
    finally:
        host._session.close_workflows()
    effects = log.read_text().splitlines()
    # Resumed at the first task not committed: no completed task ran again.
    assert effects == before + [f"do {t}" for t in TASKS[done:]]
