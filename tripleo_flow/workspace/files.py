"""Private files of a work dir (directories 0700, files 0600), with undo."""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def make_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents with mode 0700."""
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=DIR_MODE)
        os.chmod(directory, DIR_MODE)


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically with mode 0600 (umask left alone)."""
    make_dirs(path.parent)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


#: How an action keeps its undo record for a re-run (``ActionContext.undo_record``).
UndoRecord = Callable[[Callable[[], dict[str, str | None]]], dict[str, str | None]]

#: Suffix of the copy :func:`write` keeps of a file it replaces, until the next write.
PREVIOUS_SUFFIX = ".prev"


def write(root: Path, files: Mapping[str, bytes],
          undo_record: UndoRecord | None = None) -> dict[str, str | None]:
    """Write ``files`` under ``root``; return, for each, the name of the private copy of
    what it held before (``<name>.prev`` beside it), or None when it did not exist.

    The record names files instead of holding their content: these files can hold
    secrets and the record is persisted in the executions database.

    :param undo_record: the running task's
        :meth:`~tripleo_flow.actions.base.ActionContext.undo_record`: the copies are
        made once, so a re-run of the task (a resumed execution) keeps the copies of
        what was there before its first run instead of copying what that run wrote
    """
    def set_aside() -> dict[str, str | None]:
        backup: dict[str, str | None] = {}
        for name in files:
            path = root / name
            backup[name] = None
            if path.exists():
                previous = path.with_name(path.name + PREVIOUS_SUFFIX)
                write_private(previous, path.read_bytes())
                backup[name] = previous.name
        return backup

    kept = set_aside() if undo_record is None else undo_record(set_aside)
    for name, data in files.items():
        write_private(root / name, data)
    return kept


def restore(root: Path, backup: Mapping[str, str | None]) -> None:
    """Undo :func:`write`: put back old contents, remove files that did not exist.
    Safe to run twice (a copy already put back is gone)."""
    for name, old in backup.items():
        path = root / name
        if old is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        elif "." in old:  # the name of the copy (base64 text never holds a dot)
            previous = path.with_name(old)
            if previous.exists():
                os.replace(previous, path)
        else:  # a record written before records named copies: the content in base64
            write_private(path, base64.b64decode(old))
