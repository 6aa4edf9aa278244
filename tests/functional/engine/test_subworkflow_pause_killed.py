"""Resuming a child of a killed (``kill -9``) process resumes its parent
(``tests/unit/workflows/test_mistral_subworkflow_pause.py``): the run is made in a second
Python process, hence here, not in the unit tier."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.engine_helpers import Host
from tests.unit.workflows.test_mistral_subworkflow_pause import (
    CASCADE,
    _child,
    _finish_cascade,
    _install,
    _state,
    _waits,
)
from tests.unit.workflows.test_mistral_subworkflow_pause import host as host  # the fixture

ROOT = Path(__file__).resolve().parents[3]


RUN_THEN_WAIT = textwrap.dedent("""\
    import sys, time
    from pathlib import Path
    from tests.engine_helpers import Host
    host = Host(Path(sys.argv[1]))
    print(host.run_workflow(sys.argv[2], {}, wait=False).id, flush=True)
    time.sleep(120)
    """)


def test_kill_9_then_resuming_a_child_resumes_its_parent(host: Host, tmp_path: Path) -> None:
    """Not in Mistral (its engine survives its processes): the process running wf1 and
    its children is killed (``kill -9``) while both children wait; all three are
    INTERRUPTED. Resuming a child resumes wf1 (whose tasks resume both children, the
    async actions not started again); completed, all three end SUCCESS."""
    name = _install(host, tmp_path, CASCADE)
    proc = subprocess.Popen([sys.executable, "-c", RUN_THEN_WAIT, str(tmp_path / "data"),
                             f"{name}.wf1"], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
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
        assert host.get_execution(ident).state == "INTERRUPTED"
    returned = host.resume_execution(wf2, wait=False)
    assert returned.id == wf2
    for ident in (wf1, wf2, wf3):  # resumed by wf1's tasks before they are completed
        _state(host, ident, "RUNNING")
    _finish_cascade(host, wf1, wf2, wf3)
    assert len(host.list_executions()) == 3
