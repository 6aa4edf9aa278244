"""Reading a template tree from a directory or a ``.tar.gz`` archive.

Everything is read and checked before anything is written to a plan, so a bad
archive never leaves a plan half-created.  Archive members with absolute
paths, ``..`` components, links, devices or FIFOs are refused, and so are file
names no plan store can keep (:func:`~tripleo_flow.plans.plan.check_file_names`).

An archive is read as a stream, member by member: the member count and the
uncompressed size are checked against ``[limits] archive_max_members`` and
``archive_max_size`` as each header is read, before its data is, so a small
archive that expands to gigabytes is refused after reading at most the limit.
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from tripleo_flow import exceptions
from tripleo_flow.common.safe_yaml import DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODES
from tripleo_flow.core.plan import userenvs
from tripleo_flow.plans.plan import check_file_names

#: Files never uploaded from a template directory.
_SKIP_DIRS = {".git", "__pycache__", ".tox", ".venv"}
#: Defaults of ``[limits] archive_max_size`` and ``archive_max_members``: about twenty
#: times a tripleo-heat-templates tree (18.0.0: 5.7 MB in 1,798 files).
ARCHIVE_MAX_SIZE = 128 << 20
ARCHIVE_MAX_MEMBERS = 20_000


def _check_member_name(source: str, name: str) -> str:
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("/"):
        raise exceptions.InvalidArchive(source, f"member {name!r} has an absolute path")
    if any(part == ".." for part in path.parts):
        raise exceptions.InvalidArchive(source, f"member {name!r} points outside the archive (..)")
    clean = "/".join(p for p in path.parts if p not in ("", "."))
    return clean


def read_tarball(source: str, data: bytes | None = None, max_size: int = ARCHIVE_MAX_SIZE,
                 max_members: int = ARCHIVE_MAX_MEMBERS) -> dict[str, bytes]:
    """Read every regular file of a tar(.gz) archive, refusing unsafe members.

    :param max_size: most bytes the members may hold in all, uncompressed.
    :param max_members: most members (files, directories ...) the archive may hold.
    :raises InvalidArchive: for an unsafe member, an archive past a limit, or one
        that is not a readable tar archive.
    """
    try:
        fileobj = io.BytesIO(data) if data is not None else open(source, "rb")
    except OSError as exc:
        raise exceptions.InvalidArchive(source, f"cannot open it: {exc.strerror}") from exc
    files: dict[str, bytes] = {}
    total = 0
    try:
        with fileobj, tarfile.open(fileobj=fileobj, mode="r|*") as archive:
            for count, member in enumerate(archive, 1):
                if count > max_members:
                    raise exceptions.InvalidArchive(
                        source, f"it holds more than {max_members} members; the limit is "
                        "[limits] archive_max_members")
                name = _check_member_name(source, member.name)
                if member.isdir():
                    continue
                if member.issym() or member.islnk():
                    raise exceptions.InvalidArchive(
                        source, f"member {member.name!r} is a link; links are not allowed")
                if not member.isfile():
                    raise exceptions.InvalidArchive(
                        source, f"member {member.name!r} is a device or FIFO")
                total += member.size
                if total > max_size:
                    raise exceptions.InvalidArchive(
                        source, f"its files hold more than {max_size} bytes uncompressed; "
                        "the limit is [limits] archive_max_size")
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
    files = _strip_common_root(files)
    check_file_names(source, files)
    return files


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
    only when they stay inside the tree).

    :raises InvalidArchive: for a link leaving the tree or a link loop, a file
        that cannot be read, or a file name no plan store can keep.
    """
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
            if path.is_symlink():
                try:
                    target = path.resolve()
                except (OSError, RuntimeError):  # Python 3.11 raises RuntimeError on a loop
                    raise exceptions.InvalidArchive(
                        str(root), f"{rel!r} is a symbolic link loop; remove it or make it "
                        "point to a file of the tree") from None
                if not target.is_relative_to(real_root):
                    raise exceptions.InvalidArchive(
                        str(root), f"{rel!r} links outside the template directory")
            if not path.is_file():
                continue
            try:
                files[rel] = path.read_bytes()
            except OSError as exc:
                raise exceptions.InvalidArchive(
                    str(root), f"cannot read {rel!r}: {exc.strerror}") from exc
    check_file_names(str(root), files)
    return files


def read_templates(source: str | os.PathLike[str], max_size: int = ARCHIVE_MAX_SIZE,
                   max_members: int = ARCHIVE_MAX_MEMBERS) -> dict[str, bytes]:
    """Read a template tree from a directory or a tarball path (``max_size`` and
    ``max_members`` limit a tarball: :func:`read_tarball`)."""
    path = Path(source)
    if path.is_dir():
        return read_directory(path)
    if path.is_file():
        return read_tarball(str(path), max_size=max_size, max_members=max_members)
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


def read_environment_file(path: str | os.PathLike[str], max_nodes: int = DEFAULT_MAX_NODES,
                          max_depth: int = DEFAULT_MAX_DEPTH,
                          max_items: int | None = None) -> userenvs.EnvironmentFile:
    """Read an environment file from disk with the files it references
    (:func:`~tripleo_flow.core.plan.userenvs.gather`); a link may not lead out of the
    environment's directory.

    :raises InvalidTemplate: for a missing or bad file or a reference leaving the
        environment's directory.
    """
    env_path = Path(path)
    if not env_path.is_file():
        raise exceptions.InvalidTemplate(
            str(path), "the file does not exist (give the path of an environment file).")
    root = env_path.absolute().parent
    real_root = root.resolve()

    def read(rel: str) -> bytes | None:
        target = root / rel
        try:
            if not target.resolve().is_relative_to(real_root):
                raise exceptions.InvalidTemplate(
                    str(path), f"{rel!r} links outside the environment's directory; copy "
                    "the file there instead.")
            return target.read_bytes() if target.is_file() else None
        except (OSError, RuntimeError):
            return None

    return userenvs.gather(env_path.name, read, str(path), max_nodes, max_depth, max_items)
