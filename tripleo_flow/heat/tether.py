"""Tie a Heat process group to the life of the process that owns it.

A deploy's Heat must not outlive the deploy, even when the deploy is killed
with SIGKILL.  ``prctl(PR_SET_PDEATHSIG)`` alone does not do it: it fires when
the parent *thread* exits, and it reaches only the direct child, not what
that child forks.  So the owner starts a small supervisor instead (this
module, run as a script): it leads a process group of its own, starts the
real command in that group and blocks reading a pipe whose only write end the
owner holds.  When the owner dies, for any reason, the kernel closes that end;
the read returns end-of-file and the supervisor SIGKILLs the command, its
process group and its own group, itself included.  When the command exits
first, the supervisor exits with its status (``128 + N`` for a signal).

Run as ``python -I tether.py FD -- COMMAND...``; it imports nothing but the
standard library, so it starts in a few milliseconds.

``python -I tether.py FD --on-close -- COMMAND...`` is the watcher form, for
what a kill of processes cannot stop (a podman container lives under conmon,
not under us): it starts nothing, waits on the pipe and, once the owner is
gone, replaces itself with ``COMMAND``, the cleanup.  The owner cancels the
cleanup by SIGKILLing the watcher before closing its end of the pipe.
"""

from __future__ import annotations

import os
import signal
import sys
import threading


def _wait_closed(fd: int) -> None:
    """Block until the owner's end of the pipe is closed (the owner is gone)."""
    while True:
        try:
            if not os.read(fd, 1):
                return
        except InterruptedError:
            continue
        except OSError:
            return


def _watch(fd: int, child: int) -> None:
    """Block until the owner's end of the pipe is closed, then kill everything.

    The command may have moved to a process group of its own (heat-all does:
    its WSGI server calls ``setpgid``), so its group is killed as well as ours.
    """
    _wait_closed(fd)
    for kill, target in ((os.killpg, child), (os.kill, child), (os.killpg, os.getpgrp())):
        try:
            kill(target, signal.SIGKILL)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    """Run the command after ``FD [--on-close] --`` (see the module docstring)."""
    on_close = argv[2:3] == ["--on-close"]
    command = argv[4:] if on_close else argv[3:]
    if len(command) < 1 or argv[3 if on_close else 2] != "--":
        sys.stderr.write("usage: tether.py FD [--on-close] -- COMMAND...\n")
        return 2
    fd = int(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the owner decides
    if on_close:
        _wait_closed(fd)
        os.close(fd)
        try:
            os.execv(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"tether.py: cannot run {command[0]}: {exc}\n")
        return 127
    pid = os.fork()
    if pid == 0:
        os.close(fd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            os.execv(command[0], command)
        finally:
            os._exit(127)
    threading.Thread(target=_watch, args=(fd, pid), daemon=True).start()
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else \
        128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
