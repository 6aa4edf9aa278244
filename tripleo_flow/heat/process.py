"""Child processes that outlive the command that started them (heat-all, mariadbd).

A process is identified by its pid *and* a marker in its command line (the
path of its config file), so a recycled pid is never mistaken for it.  Stops
are SIGKILL to the whole process group (heat-all ignores SIGTERM), then a wait
until the pid is gone, reaping it when it is our own child.

:func:`start_watcher` starts a :mod:`.tether` watcher (``--on-close``): a
cleanup that runs once this process is gone, even by SIGKILL;
:func:`stop_watcher` cancels one.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import tripleo_flow
from tripleo_flow import exceptions
from tripleo_flow.heat.workdir import HeatDir

#: A watcher this process started: its process and the write end of its tether pipe.
Watcher = tuple[subprocess.Popen[bytes], int]


def _state(pid: int) -> str | None:
    """The scheduler state letter of ``pid`` (None when there is no such pid)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def cmdline(pid: int) -> list[str]:
    """The command line of ``pid`` ([] when there is no such live process)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    if _state(pid) in (None, "Z", "X"):
        _reap(pid)
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def is_running(pid: int | None, marker: str) -> bool:
    """Whether ``pid`` is alive and its command line contains ``marker``."""
    if not pid:
        return False
    return any(marker in part for part in cmdline(pid))


def find(marker: str) -> list[int]:
    """Live processes started with ``--config-file MARKER`` (heat-all, heat-manage...).

    What :func:`kill` of a recorded pid cannot reach: a process that left its
    parent's process group (heat-all's WSGI server calls ``setpgid``) and whose
    parent is gone.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        args = cmdline(int(entry.name))
        pairs = zip(args, args[1:], strict=False)
        if any(a == "--config-file" and b == marker for a, b in pairs):
            found.append(int(entry.name))
    return found


def find_naming(marker: str) -> list[int]:
    """Live processes with ``marker`` in an argument of their command line (a private
    server's directory: :mod:`.services`)."""
    return [int(entry.name) for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and int(entry.name) != os.getpid()
            and any(marker in arg for arg in cmdline(int(entry.name)))]


def _reap(pid: int) -> bool:
    """Reap ``pid`` if it is our exited child; True when it is gone or not ours."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def kill(pid: int, marker: str, timeout: float = 15.0) -> bool:
    """SIGKILL ``pid`` (and its process group when it leads one); wait until gone.

    :returns: True when a matching process was running and is now gone.
    :raises HeatError: when it is still there after ``timeout`` seconds.
    """
    if not is_running(pid, marker):
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = _state(pid)
        if state is None or (state in ("Z", "X") and _reap(pid)):
            return True
        _reap(pid)
        time.sleep(0.02)
    raise exceptions.HeatError(f"Process {pid} ({marker}) is still running after SIGKILL.")


def start_watcher(cleanup: list[str], cwd: Path, log_fd: int) -> Watcher:
    """Start a tether watcher that runs ``cleanup`` once this process is gone.

    ``cleanup`` may be ``[sys.executable, "-P", "-m", "tripleo_flow...."]``: it
    runs with the code this process runs on its ``PYTHONPATH``.  Cancel it with
    :func:`stop_watcher` (its pipe closes when this process ends, for any reason).
    """
    root = str(Path(tripleo_flow.__file__).parents[1])
    paths = [root, *filter(None, [os.environ.get("PYTHONPATH")])]
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", str(Path(__file__).with_name("tether.py")), str(read_fd),
             "--on-close", "--", *cleanup],
            stdin=subprocess.DEVNULL, stdout=log_fd, stderr=subprocess.STDOUT, cwd=cwd,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
            start_new_session=True, pass_fds=(read_fd,))
    except BaseException:
        os.close(write_fd)
        raise
    finally:
        os.close(read_fd)
    return proc, write_fd


def start_db_watcher(cleanup: list[str], work: HeatDir, label: str
                     ) -> tuple[Watcher, dict[str, Any]]:
    """:func:`start_watcher` for a launcher directory ``work`` (its output in
    ``log/db-watcher.log``): the watcher and its entry for ``run.json`` (``label``
    must be in its command line, for :func:`stop_watcher`)."""
    log_fd = work.open_log("db-watcher.log")
    try:
        watcher = start_watcher(cleanup, work.root, log_fd)
    finally:
        os.close(log_fd)
    return watcher, {"pid": watcher[0].pid, "label": label}


def stop_watcher(recorded: dict[str, Any] | None, mine: Watcher | None) -> None:
    """Stop a watcher without letting its cleanup run: SIGKILL before its pipe closes.

    :param recorded: ``{"pid", "label"}`` as a run record keeps it (any process may
        stop it: ``label`` is in its command line)
    :param mine: the watcher as :func:`start_watcher` returned it, in its owner
    """
    if recorded:
        kill(recorded["pid"], recorded["label"])
    if mine is not None:
        proc, write_fd = mine
        if proc.poll() is None:
            proc.kill()
        os.close(write_fd)
        proc.wait()
