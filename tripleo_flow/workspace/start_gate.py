"""The gate between workflow starts and a backup restore, across processes.

A restore checks that no execution runs, then swaps the data directory; a workflow
started between the two would be recorded in the executions database being swapped
away.  So every start (a run, an operation, a resume) holds ``<data_dir>/locks/
workflow-starts.lock`` shared (``flock(LOCK_SH)``) until its execution is recorded
(or, run to its end in this process, until it ends), and a restore holds it exclusive
from its check to its swap.  Neither waits: a start during a restore, or a restore
during a start, is refused (a restore is short; a start may last a whole deployment).

The lock file lives in ``locks/`` (rebuilt, never backed up) and moves into the
restored data directory with it, so its inode, and the lock, stay the same.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from tripleo_flow import exceptions
from tripleo_flow.workspace.files import FILE_MODE, make_dirs

#: The lock file, relative to the data directory.
LOCK_FILE = Path("locks") / "workflow-starts.lock"


@contextlib.contextmanager
def _held(data_dir: Path, mode: int, busy: exceptions.TripleoFlowError) -> Iterator[None]:
    path = data_dir / LOCK_FILE
    make_dirs(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy from None
        yield
    finally:
        os.close(fd)  # releases the lock


def starting(data_dir: Path) -> contextlib.AbstractContextManager[None]:
    """Hold the gate shared while a workflow starts.

    :raises Conflict: a backup restore is under way in ``data_dir``
    """
    return _held(data_dir, fcntl.LOCK_SH, exceptions.Conflict(
        "Refusing to start a workflow while a backup restore replaces the data directory "
        f"{str(data_dir)!r}: retry once it has ended."))


def restoring(data_dir: Path) -> contextlib.AbstractContextManager[None]:
    """Hold the gate exclusive while a restore checks and swaps ``data_dir``.

    :raises Conflict: a workflow is starting (or runs in the process that started it)
    """
    return _held(data_dir, fcntl.LOCK_EX, exceptions.Conflict(
        "Refusing to restore while a workflow is starting or runs: wait for it "
        "to end", hints=[exceptions.Hint("", "execution.list", sep=" (", tail="), then retry.")]))


__all__ = ["LOCK_FILE", "restoring", "starting"]
