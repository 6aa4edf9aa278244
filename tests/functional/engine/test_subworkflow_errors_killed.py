"""A child execution's error kept when the process running it and its parent is killed
(``kill -9``) as it fails (``tests/unit/engine/compile/test_subworkflow_errors.py``): the run is
made in a second Python process, hence here, not in the unit tier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine_helpers import Host
from tests.unit.engine.compile.test_subworkflow_errors import (
    STEPS,
    _check_kept,
    _install,
    _parent_and_child,
    _workbook,
)
from tripleo_flow import exceptions

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("machine", [False, True], ids=["graph", "state-machine"])
def test_killed_as_the_child_failed_then_resumed(tmp_path: Path, machine: bool) -> None:
    """``kill -9`` of the process that runs the parent and its child, as the child's
    task fails (before the child's end is recorded); resumed in this process, the
    child ends with its task's error from its records, and the parent's task fails
    with it."""
    data_dir = tmp_path / "data"
    setup = Host(data_dir)
    _install(setup, tmp_path, _workbook(machine))
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "run", str(data_dir), "kinds.wf",
         json.dumps({"plans": []}), "failed", "1"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == -9, (done.returncode, done.stderr[-2000:])
    assert json.loads(done.stdout.splitlines()[-1])["killed_after"] == "call/inner"
    host = Host(data_dir)
    try:
        parent, [child] = _parent_and_child(host)
        assert (parent.state, child.state) == ("INTERRUPTED", "INTERRUPTED")
        with pytest.raises(exceptions.WorkflowFailed) as failed:
            host.executions.resume(parent.id)
        _parent, [child] = _parent_and_child(host)
        assert child.state == "ERROR" and child.hints == STEPS
        _check_kept(host, failed.value.__cause__, child.error or "")
    finally:
        host._session.close_workflows()
