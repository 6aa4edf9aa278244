"""Private files of a work dir (directories 0700, files 0600), with undo."""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import Mapping
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


def write(root: Path, files: Mapping[str, bytes]) -> dict[str, str | None]:
    """Write ``files`` under ``root``; return what each held before (base64, or None)."""
    backup: dict[str, str | None] = {}
    for name, data in files.items():
        path = root / name
        backup[name] = base64.b64encode(path.read_bytes()).decode() if path.exists() else None
        write_private(path, data)
    return backup


def restore(root: Path, backup: Mapping[str, str | None]) -> None:
    """Undo :func:`write`: put back old contents, remove files that did not exist."""
    for name, old in backup.items():
        path = root / name
        if old is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        else:
            write_private(path, base64.b64decode(old))
