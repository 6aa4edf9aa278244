"""Cancelling an execution whose process was killed (``kill -9``)
(``tests/unit/engine/test_mistral_cancel.py``): it is recorded by a second Python
process, hence here, not in the unit tier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.engine_helpers import Host
from tests.pause_helpers import _effects
from tests.pause_helpers import host as host  # the fixture
from tests.unit.engine.test_mistral_cancel import MSG, _install

ROOT = Path(__file__).resolve().parents[3]


def test_a_cancelled_crashed_execution_is_never_run_again(host: Host, tmp_path: Path) -> None:
    """An execution whose process was killed (kill -9 before its first task: INTERRUPTED)
    is cancelled at once; neither a resume nor a conductor-like continuation of its
    flow detail (what a claimed job runs) starts a task of it."""
    name = _install(host, tmp_path, """\
        wf:
          input: [log]
          tasks:
            task1:
              action: test.record path=<% $.log %> value="task1"
        """)
    log = tmp_path / "log"
    out = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "record-then-die",
         str(tmp_path / "data"), f"{name}.wf", json.dumps({"log": str(log)})],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    ident = json.loads(out.stdout.splitlines()[0])["recorded"]
    assert host.executions.get(ident).state == "INTERRUPTED"
    done = host.executions.cancel(ident, MSG)
    assert (done.state, done.state_info) == ("CANCELLED", MSG)
    assert done.finished_at is not None
    assert host.executions.resume(ident).state == "CANCELLED"
    runner = host._session.runner()
    assert runner.execute(runner.store.flow_detail(ident)).state == "CANCELLED"
    assert _effects(log) == []
    assert host.executions.get(ident).state == "CANCELLED"
