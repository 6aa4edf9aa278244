"""The workflow commands that need a second process: a failed run as a real
subprocess (the exit code the process itself ends with), and ``workflow run --no-wait``,
whose run goes on in a detached process (hence here, not in the unit tier).  The other
commands: ``tests/unit/cli/test_cli.py``."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.unit.cli.test_cli import Cli
from tests.unit.cli.test_cli import cli as cli  # the fixture


def test_a_failed_run_s_process_exits_with_its_code(cli: Cli) -> None:
    done = cli("workflow", "run", "std_only.broken", ok=False, process=True)
    assert done.returncode == 6  # workflow failed
    assert "failed at task 'boom'" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_wait_runs_in_background(cli: Cli) -> None:
    started = cli.json("workflow", "run", "greet", "--input", "who=bg", "--no-wait")
    deadline = time.monotonic() + 60
    state = started["State"]
    while state != "SUCCESS" and time.monotonic() < deadline:
        time.sleep(0.1)
        state = cli.json("execution", "show", started["ID"])["State"]
    assert state == "SUCCESS"


def test_execution_complete_finishes_a_waiting_task(cli: Cli, tmp_path: Path) -> None:
    """``execution complete`` completes the asynchronous action a task waits for (the
    task is found with ``execution tasks``: RUNNING, its ID, what it waits for); the
    background run goes on with the output."""
    workbook = tmp_path / "approvals.yaml"
    workbook.write_text(
        "version: '2.0'\nname: approvals\nworkflows:\n  wf:\n    output:\n"
        "      answer: <% $.answer %>\n    tasks:\n      approve:\n"
        "        action: std.async_noop\n        publish:\n"
        "          answer: <% task().result %>\n")
    cli("workbook", "create", str(workbook))
    assert "--state {SUCCESS,ERROR}" in cli("execution", "complete", "--help").stdout
    started = cli.json("workflow", "run", "approvals.wf", "--no-wait")
    deadline = time.monotonic() + 60
    while True:
        tasks = cli.json("execution", "tasks", started["ID"])
        if tasks and tasks[0]["Waiting for"] or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    (task,) = tasks
    assert task["State"] == "RUNNING" and task["ID"] and task["Waiting for"]
    refused = cli("execution", "complete", started["ID"], "nope", ok=False)
    assert refused.returncode != 0 and "has no task execution 'nope'" in refused.stderr
    done = cli.json("execution", "complete", started["ID"], "approve", "--output",
                    '{"ok": 1}')
    assert done["State"] == "SUCCESS" and done["Action execution"] == task["Waiting for"]
    assert done["Task ID"] == task["ID"] and json.loads(done["Output"]) == {"ok": 1}
    state = ""
    while state != "SUCCESS" and time.monotonic() < deadline:
        time.sleep(0.1)
        state = cli.json("execution", "show", started["ID"])["State"]
    assert state == "SUCCESS"
    again = cli("execution", "complete", started["ID"], "approve", ok=False)
    assert again.returncode != 0 and "does not wait" in again.stderr
