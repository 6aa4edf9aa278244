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
"""

from __future__ import annotations

import os
import signal
import sys
import threading


def _watch(fd: int, child: int) -> None:
    """Block until the owner's end of the pipe is closed, then kill everything.

    The command may have moved to a process group of its own (heat-all does:
    its WSGI server calls ``setpgid``), so its group is killed as well as ours.
    """
    while True:
        try:
            if not os.read(fd, 1):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    for kill, target in ((os.killpg, child), (os.kill, child), (os.killpg, os.getpgrp())):
        try:
            kill(target, signal.SIGKILL)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    """Run ``argv[3:]`` (after ``FD --``) until it exits or the owner dies."""
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: tether.py FD -- COMMAND...\n")
        return 2
    fd = int(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the owner decides
    pid = os.fork()
    if pid == 0:
        os.close(fd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            os.execv(argv[3], argv[3:])
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
