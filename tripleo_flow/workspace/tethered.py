"""Run a command leading a process group tethered to this process
(:mod:`tripleo_flow.heat.tether`): when this process dies, even by SIGKILL, the group
dies with it (ansible-playbook and its workers), so a resumed execution never runs a
playbook beside the killed one's.  The group id is kept in a file while the command
runs; a group an earlier attempt left there is killed before the command starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tripleo_flow.heat import tether
from tripleo_flow.workspace import files as private_files

TETHER = Path(tether.__file__)


def kill_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to process group ``pgid``; False when the group is gone."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def live_group(pgid_file: Path) -> int | None:
    """The process group ``pgid_file`` names, when it still runs."""
    try:
        pgid = int(pgid_file.read_text())
    except (OSError, ValueError):
        return None
    return pgid if pgid > 1 and kill_group(pgid, 0) else None


def run_in_group(command: list[str], cwd: Path, output: Path, env: Mapping[str, str],
                 pgid_file: Path) -> int:
    """Run ``command`` in ``cwd``, its output (stdout and stderr) in ``output`` (0600),
    leading a new tethered process group recorded in ``pgid_file``; when it exits,
    whatever it left in its group is killed.  Its exit status."""
    leftover = live_group(pgid_file)
    if leftover is not None:
        kill_group(leftover, signal.SIGKILL)
    read_fd, write_fd = os.pipe()
    try:
        tethered = [sys.executable, "-I", str(TETHER), str(read_fd), "--", *command]
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            process = subprocess.Popen(tethered, cwd=cwd, stdout=out,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       env=dict(env), start_new_session=True,
                                       pass_fds=(read_fd,))
    except BaseException:
        os.close(write_fd)
        raise
    finally:
        os.close(read_fd)
    private_files.write_private(pgid_file, str(process.pid).encode())
    try:
        return process.wait()
    finally:
        kill_group(process.pid, signal.SIGKILL)
        os.close(write_fd)
        pgid_file.unlink(missing_ok=True)


__all__ = ["TETHER", "kill_group", "live_group", "run_in_group"]
