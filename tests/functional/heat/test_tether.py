"""A tethered command dies with the process that owns it, even on SIGKILL.

Real processes: an owner starts :mod:`tripleo_flow.heat.tether` around a
sleeper (one that leaves its process group, as heat-all does, and one that
stays), prints the pids and is killed with SIGKILL: a functional test (processes are
its subject), though it needs no service.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tripleo_flow.heat import process

TETHER = Path(__file__).resolve().parents[3] / "tripleo_flow" / "heat" / "tether.py"
OWNER = r"""
import os, subprocess, sys, time
read_fd, write_fd = os.pipe()
sleeper = [sys.executable, "-c", sys.argv[2], "tethered-sleeper"]
sup = subprocess.Popen([sys.executable, "-I", sys.argv[1], str(read_fd), "--", *sleeper],
                       pass_fds=(read_fd,), start_new_session=True)
os.close(read_fd)
print(sup.pid, flush=True)
time.sleep(300)
"""
LEAVES_GROUP = "import os, time; os.setpgid(0, 0); time.sleep(300)"
STAYS = "import time; time.sleep(300)"


def _children(pid: int) -> list[int]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        path = Path(f"/proc/{pid}/task/{pid}/children")
        found = [int(p) for p in path.read_text().split()] if path.exists() else []
        if found:
            return found
        time.sleep(0.01)
    raise AssertionError(f"the supervisor {pid} started nothing")


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while process.cmdline(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return process.cmdline(pid) == []


@pytest.mark.parametrize("sleeper", [LEAVES_GROUP, STAYS], ids=["leaves-group", "stays"])
def test_owner_killed_takes_the_command_with_it(sleeper: str) -> None:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(TETHER), sleeper],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        supervisor = int(owner.stdout.readline())
        (child,) = _children(supervisor)
        time.sleep(0.2)  # let the sleeper run (and leave the group)
        assert "tethered-sleeper" in process.cmdline(child)
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    assert _gone(child) and _gone(supervisor)


def test_command_exit_status_is_passed_on() -> None:
    read_fd, write_fd = os.pipe()
    try:
        done = subprocess.run([sys.executable, "-I", str(TETHER), str(read_fd), "--",
                               sys.executable, "-c", "raise SystemExit(7)"],
                              pass_fds=(read_fd,), check=False)
    finally:
        os.close(read_fd)
        os.close(write_fd)
    assert done.returncode == 7


WATCHER_OWNER = r"""
import os, subprocess, sys, time
read_fd, write_fd = os.pipe()
cleanup = [sys.executable, "-c", "import sys; open(sys.argv[1], 'w').write('cleaned')",
           sys.argv[2]]
watcher = subprocess.Popen([sys.executable, "-I", sys.argv[1], str(read_fd), "--on-close",
                            "--", *cleanup], pass_fds=(read_fd,), start_new_session=True)
os.close(read_fd)
print(watcher.pid, flush=True)
if sys.argv[3] == "cancel":  # a normal stop: the watcher first, then the pipe
    watcher.kill()
    watcher.wait()
    os.close(write_fd)
    print("cancelled", flush=True)
time.sleep(300)
"""


@pytest.mark.parametrize("how", ["owner-killed", "cancel"])
def test_on_close_runs_the_cleanup_only_when_the_owner_dies(tmp_path: Path, how: str) -> None:
    done = tmp_path / "cleaned"
    owner = subprocess.Popen([sys.executable, "-c", WATCHER_OWNER, str(TETHER), str(done), how],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        watcher = int(owner.stdout.readline())
        if how == "cancel":
            assert owner.stdout.readline() == "cancelled\n"
        else:
            # /proc's command line reads empty for a moment while the watcher execs
            deadline = time.monotonic() + 10
            while not process.cmdline(watcher) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert "--on-close" in process.cmdline(watcher)
        assert not done.exists()  # nothing runs while the owner lives
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    # The watcher execs the cleanup in its own process: wait for the cleanup's effect
    # (or give a wrong one time to show), then for that process to end.  Its /proc
    # command line is empty for a moment during the exec, so "gone" is only
    # meaningful once the effect is there.
    deadline = time.monotonic() + (10 if how == "owner-killed" else 0.5)
    while (not done.exists() or done.read_text() != "cleaned") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert done.exists() == (how == "owner-killed")
    if how == "owner-killed":
        assert done.read_text() == "cleaned"
    assert _gone(watcher)
