"""Executions whose process is killed (``kill -9``) while tasks wait for a client: the
run is made in a second Python process, hence here, not in the unit tier (from
``tests/unit/engine/test_mistral_async_actions.py`` and
``test_mistral_subworkflow_pause.py``, whose helpers they use)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.engine_helpers import Host
from tests.unit.engine.test_mistral_async_actions import _ended as ended
from tests.unit.engine.test_mistral_async_actions import _install as install_async
from tests.unit.engine.test_mistral_async_actions import _states as states
from tests.unit.engine.test_mistral_async_actions import _waiting as waiting
from tests.unit.engine.test_mistral_subworkflow_pause import (
    CASCADE,
    _child,
    _finish_cascade,
    _install,
    _state,
    _waits,
)
from tests.unit.engine.test_mistral_subworkflow_pause import host as host  # the fixture

ROOT = Path(__file__).resolve().parents[3]


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
    name = install_async(host, tmp_path, text)
    marker = tmp_path / "started"
    child = subprocess.Popen([sys.executable, "-m", "tests.engine_helpers", "start-then-wait",
                              str(tmp_path / "data"), name, json.dumps({"marker": str(marker)})],
                             cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        execution_id = child.stdout.readline().strip()
        waiting(host, execution_id, "approve")
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)
    assert host.executions.get(execution_id).state == "INTERRUPTED"
    assert states(host, execution_id) == {"approve": "RUNNING"}
    host.tasks.complete(execution_id, "approve", "SUCCESS", {"ok": True})
    execution = ended(host, execution_id)
    assert execution.state == "SUCCESS"
    assert {t.name: t.result for t in host.tasks.list(execution_id)}["deploy"] == {
        "ok": True}
    assert marker.read_text().splitlines() == ["started"]  # started once, not again


def test_kill_9_then_resuming_a_child_resumes_its_parent(host: Host, tmp_path: Path) -> None:
    """Not in Mistral (its engine survives its processes): the process running wf1 and
    its children is killed (``kill -9``) while both children wait; all three are
    INTERRUPTED. Resuming a child resumes wf1 (whose tasks resume both children, the
    async actions not started again); completed, all three end SUCCESS."""
    name = _install(host, tmp_path, CASCADE)
    proc = subprocess.Popen([sys.executable, "-m", "tests.engine_helpers", "start-then-wait",
                             str(tmp_path / "data"), f"{name}.wf1", "{}"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        wf1 = proc.stdout.readline().strip()
        wf2, wf3 = _child(host, wf1, "wf2").id, _child(host, wf1, "wf3").id
        _waits(host, wf2, "task1")
        _waits(host, wf3, "task1")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
    for ident in (wf1, wf2, wf3):
        assert host.executions.get(ident).state == "INTERRUPTED"
    returned = host.executions.resume(wf2, wait=False)
    assert returned.id == wf2
    for ident in (wf1, wf2, wf3):  # resumed by wf1's tasks before they are completed
        _state(host, ident, "RUNNING")
    _finish_cascade(host, wf1, wf2, wf3)
    assert len(host.executions.list()) == 3
