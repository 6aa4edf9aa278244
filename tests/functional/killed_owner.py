"""An owner that launches something, SIGKILLs its database watcher, then itself: what a
killed session does to a launch and its watcher (:mod:`tripleo_flow.heat.shm_orphans`)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Appended to a launch script: the watcher of the run in ``work`` dies, then the owner.
_THEN_KILL = """
from tripleo_flow.heat import process as _process
_watcher = work.read_run()["db_watcher"]
assert _process.kill(_watcher["pid"], _watcher["label"]), _watcher
os.kill(os.getpid(), signal.SIGKILL)
"""


def launch_then_kill_watcher_and_owner(launch: str, timeout: float = 300) -> None:
    """Run ``launch`` (Python that launches and sets ``work``, the launcher dir) in a new
    interpreter that then kills the run's watcher and itself with SIGKILL."""
    script = (f"import os, signal, sys\nsys.path.insert(0, {str(ROOT)!r})\n"
              + textwrap.dedent(launch) + _THEN_KILL)
    owner = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=timeout, check=False)
    assert owner.returncode == -signal.SIGKILL, owner.stderr
