"""kill -9 at every task boundary, resume, and check no side effect happened twice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine_helpers import Host

TASKS = ["t1", "t2", "t3", "t4"]
ROOT = Path(__file__).resolve().parents[2]


def _run_until_killed(data_dir: Path, log: Path, event: str, nth: int) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "run", str(data_dir),
         "engine_demo.crash_sample", json.dumps({"log": str(log)}), event, str(nth)],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == -9, (done.returncode, done.stderr[-2000:])
    return json.loads(done.stdout.splitlines()[-1])["killed_after"]


@pytest.mark.parametrize("event", ["started", "succeeded"])
@pytest.mark.parametrize("nth", [1, 2, 3, 4])
def test_kill_at_task_boundary_then_resume(tmp_path: Path, event: str, nth: int) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "effects.log"
    Host(data_dir).install("engine_demo")
    killed_at = _run_until_killed(data_dir, log, event, nth)
    assert killed_at == TASKS[nth - 1]
    host = Host(data_dir)
    try:
        [execution] = host.list_executions()
        assert execution.state == "INTERRUPTED"
        before = log.read_text().splitlines() if log.exists() else []
        done = {t.name for t in host.execution_tasks(execution.id) if t.state == "SUCCESS"}
        expected_done = set(TASKS[:nth]) if event == "succeeded" else set(TASKS[:nth - 1])
        assert done == expected_done
        resumed = host.resume_execution(execution.id)
        assert resumed.state == "SUCCESS"
        effects = log.read_text().splitlines()
        assert effects == [f"do {t}" for t in TASKS]  # each side effect exactly once
        assert effects[:len(before)] == before
        assert [t.state for t in host.execution_tasks(execution.id)] == ["SUCCESS"] * 4
    finally:
        host.close_workflows()
