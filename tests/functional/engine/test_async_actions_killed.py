"""A task waiting for a client survives a ``kill -9`` of its process
(``tests/unit/workflows/test_mistral_async_actions.py``): the run is made in a second
Python process, hence here, not in the unit tier."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.engine_helpers import Host
from tests.unit.workflows.test_mistral_async_actions import (
    _ended,
    _install,
    _states,
    _waiting,
)
from tests.unit.workflows.test_mistral_async_actions import host as host  # the fixture

ROOT = Path(__file__).resolve().parents[3]


#: Runs ASYNC_WB's workflow in this child process, which the test kills while it waits.
CHILD = textwrap.dedent("""\
    import sys, time
    from pathlib import Path
    from tests.engine_helpers import Host
    host = Host(Path(sys.argv[1]))
    print(host.run_workflow(sys.argv[2], {"marker": sys.argv[3]}, wait=False).id, flush=True)
    time.sleep(120)
    """)


def test_kill_9_while_waiting_then_complete_resumes_it(host: Host, tmp_path: Path) -> None:
    """The process running the execution is killed (``kill -9``, a server restart)
    while its task waits: the execution is INTERRUPTED with the task RUNNING and still
    completable; the completion resumes it here, the action is not started again
    (its side effect happened once), and the workflow goes on with the output."""
    text = """
    actions:
      notify:
        base: test.async_record
        input: [marker]
        base-input:
          path: <% $.marker %>
    workflows:
      wf:
        input: [marker]
        tasks:
          approve:
            action: notify marker=<% $.marker %>
            on-success: [deploy]
          deploy:
            action: std.echo output=<% task(approve).result %>
    """
    name = _install(host, tmp_path, text)
    marker = tmp_path / "started"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "data"), name,
                              str(marker)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert child.stdout is not None
        execution_id = child.stdout.readline().strip()
        _waiting(host, execution_id, "approve")
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)
    assert host.get_execution(execution_id).state == "INTERRUPTED"
    assert _states(host, execution_id) == {"approve": "RUNNING"}
    host.complete_task(execution_id, "approve", "SUCCESS", {"ok": True})
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS"
    assert {t.name: t.result for t in host.execution_tasks(execution_id)}["deploy"] == {
        "ok": True}
    assert marker.read_text().splitlines() == ["started"]  # started once, not again
