"""Reading a template tree from a directory or a ``.tar.gz`` archive.

Everything is read and checked before anything is written to a plan, so a bad
archive never leaves a plan half-created.  Archive members with absolute
paths, ``..`` components, links, devices or FIFOs are refused.
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from tripleo_flow import exceptions

#: Files never uploaded from a template directory.
_SKIP_DIRS = {".git", "__pycache__", ".tox", ".venv"}


def _check_member_name(source: str, name: str) -> str:
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("/"):
        raise exceptions.InvalidArchive(source, f"member {name!r} has an absolute path")
    if any(part == ".." for part in path.parts):
        raise exceptions.InvalidArchive(source, f"member {name!r} points outside the archive (..)")
    clean = "/".join(p for p in path.parts if p not in ("", "."))
    return clean


def read_tarball(source: str, data: bytes | None = None) -> dict[str, bytes]:
    """Read every regular file of a tar(.gz) archive, refusing unsafe members."""
    try:
        fileobj = io.BytesIO(data) if data is not None else open(source, "rb")
    except OSError as exc:
        raise exceptions.InvalidArchive(source, f"cannot open it: {exc.strerror}") from exc
    files: dict[str, bytes] = {}
    try:
        with fileobj, tarfile.open(fileobj=fileobj, mode="r:*") as archive:
            members = archive.getmembers()
            for member in members:
                name = _check_member_name(source, member.name)
                if member.isdir():
                    continue
                if member.issym() or member.islnk():
                    raise exceptions.InvalidArchive(
                        source, f"member {member.name!r} is a link; links are not allowed")
                if not member.isfile():
                    raise exceptions.InvalidArchive(
                        source, f"member {member.name!r} is a device or FIFO")
                if not name:
                    continue
                extracted = archive.extractfile(member)
                if extracted is None:  # pragma: no cover - isfile() guarantees a stream
                    raise exceptions.InvalidArchive(source, f"cannot read {member.name!r}")
                files[name] = extracted.read()
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise exceptions.InvalidArchive(source, f"not a readable tar archive ({exc})") from exc
    clash = file_directory_clash(files)
    if clash is not None:
        raise exceptions.InvalidArchive(
            source, f"{clash[0]!r} is both a file and a directory (of {clash[1]!r}); "
            "a plan holds one or the other")
    return _strip_common_root(files)


def file_directory_clash(names: Iterable[str]) -> tuple[str, str] | None:
    """The first name that is also a directory of another (``zz`` and ``zz/b.yaml``),
    with that other name; None when every name can be stored beside the others."""
    files = set(names)
    for name in sorted(files):
        parts = name.split("/")
        for end in range(1, len(parts)):
            parent = "/".join(parts[:end])
            if parent in files:
                return parent, name
    return None


def _strip_common_root(files: dict[str, bytes]) -> dict[str, bytes]:
    """Drop a single top-level directory shared by every file (as in sdists)."""
    if not files:
        return files
    tops = {name.split("/", 1)[0] for name in files}
    if len(tops) == 1 and all("/" in name for name in files):
        top = tops.pop()
        return {name[len(top) + 1:]: data for name, data in files.items()}
    return files


def read_directory(source: str | os.PathLike[str]) -> dict[str, bytes]:
    """Read every regular file below ``source`` (links to files are followed
    only when they stay inside the tree)."""
    root = Path(source)
    if not root.is_dir():
        raise exceptions.InvalidInput(f"Template directory {str(root)!r} does not exist.")
    real_root = root.resolve()
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            rel = path.relative_to(root).as_posix()
            if path.is_symlink() and not path.resolve().is_relative_to(real_root):
                raise exceptions.InvalidArchive(
                    str(root), f"{rel!r} links outside the template directory")
            if not path.is_file():
                continue
            files[rel] = path.read_bytes()
    return files


def read_templates(source: str | os.PathLike[str]) -> dict[str, bytes]:
    """Read a template tree from a directory or a tarball path."""
    path = Path(source)
    if path.is_dir():
        return read_directory(path)
    if path.is_file():
        return read_tarball(str(path))
    raise exceptions.InvalidInput(
        f"Templates {str(path)!r} not found: give a directory or a .tar.gz archive.")


def write_tarball(files: dict[str, bytes], fileobj: io.BufferedIOBase | io.BytesIO) -> None:
    """Write ``files`` as a gzip'd tar archive into ``fileobj`` (files 0644)."""
    with tarfile.open(fileobj=fileobj, mode="w:gz") as archive:
        for name in sorted(files):
            data = files[name]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
