"""The backup archive of a data directory: written atomically, read back checked.

An archive is one ``.tar.gz`` holding ``manifest.json`` (format, tripleo-flow version,
what is inside, each file's size, mode and SHA-256) and the kept files under
``data/``.  It is written to a hidden ``.partial`` file created 0600 beside the
target and renamed over it only when complete, so a reader never sees half of one.

The executions database is copied with SQLite's online backup API (a consistent
snapshot even while another connection writes, the WAL included), never as raw
file bytes.  What a data directory holds is sorted once here: the state that is
kept (:data:`KEPT`), what is rebuilt or transient and left out (:data:`REBUILT`);
any other entry is left out and named in the manifest's ``left_out``.

Reading reuses the plan tarball reader (:func:`~tripleo_flow.plans.sources.read_tarball`:
no absolute paths, ``..``, links or devices, ``[limits]`` on members and size), then
checks the manifest against the files: a missing, extra or changed file refuses the
archive.  Restoring stages the files in a new directory beside the data directory
and swaps the two with one ``renameat2(RENAME_EXCHANGE)`` where the kernel has it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import sqlite3
import stat
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from tripleo_flow import __version__, exceptions
from tripleo_flow.common import pids, sealing
from tripleo_flow.plans.sources import read_tarball
from tripleo_flow.workspace.files import DIR_MODE, FILE_MODE, make_dirs

FORMAT = "tripleo-flow-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DATA = "data"
EXECUTIONS_DB = "executions.sqlite"
#: The top-level entries of a data directory that are its state.
KEPT = ("plans", "deployments", "work", "validations", "workbooks", "ironic")
#: Where the backups made over the HTTP API are kept (never inside a backup).
BACKUPS = "backups"
#: Entries left out on purpose: rebuilt, transient, earlier backups, or the live
#: database's side files.
REBUILT = ("locks", "uploads", "downloads", BACKUPS, "parameters-heat", "podman", "heat-venv",
           "ironic-venv", "heat-install.log", f"{EXECUTIONS_DB}-wal", f"{EXECUTIONS_DB}-shm",
           f"{EXECUTIONS_DB}-journal", "checks")


#: How a backup being written is named: ``.<name>.<pid>-<random><PARTIAL>`` beside it.
PARTIAL = ".partial"
_PARTIAL_NAME = re.compile(r"^\..+\.(?P<pid>[0-9]+)-[0-9a-f]{8}\.partial$")


def sweep_partials(directory: Path, max_age: float) -> list[str]:
    """Remove from ``directory`` the partial backups (:data:`PARTIAL`) left by a writer
    that was killed: those whose process has ended, and any older than ``max_age``
    seconds (a reused process id).  Return the names removed."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    removed = []
    now = time.time()
    for name in names:
        match = _PARTIAL_NAME.match(name)
        if match is None:
            continue
        path = directory / name
        try:
            age = now - path.lstat().st_mtime
            if pids.alive(int(match["pid"])) and age <= max_age:
                continue
            path.unlink()
        except FileNotFoundError:  # published or removed meanwhile
            continue
        removed.append(name)
    return sorted(removed)


def sort_entries(data_dir: Path) -> tuple[list[str], list[str]]:
    """The data directory's top-level entries that are kept, and those left out that
    are neither kept nor known to be rebuilt (a virtualenv, a user's file)."""
    names = sorted(os.listdir(data_dir)) if data_dir.is_dir() else []
    kept = [n for n in names if n in KEPT or n == EXECUTIONS_DB]
    left_out = [n for n in names if n not in KEPT and n != EXECUTIONS_DB and n not in REBUILT]
    return kept, left_out


def _files(data_dir: Path, top: str) -> list[tuple[str, Path]]:
    """Every regular file below ``data_dir/top`` as (archive name, path), refusing
    links and special files (a restore refuses them: the backup would be partial)."""
    found: list[tuple[str, Path]] = []
    root = data_dir / top
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            mode = path.lstat().st_mode
            rel = path.relative_to(data_dir).as_posix()
            if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise exceptions.InvalidInput(
                    f"Cannot back up {str(path)!r}: it is a link or a special file, which a "
                    "backup does not hold; remove it or replace it with a copy, then run "
                    "the backup again.")
            if stat.S_ISREG(mode):
                found.append((rel, path))
    return found


def snapshot_sqlite(source: Path, target: Path) -> None:
    """Copy the SQLite database ``source`` to a new file ``target`` (0600) with
    SQLite's online backup API: one consistent state, the WAL's commits included."""
    os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    src = sqlite3.connect(str(source), timeout=30)
    try:
        dst = sqlite3.connect(str(target))
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")
        finally:
            dst.close()
    except sqlite3.Error as exc:
        raise exceptions.BackendUnavailable(
            f"Cannot copy the executions database {str(source)!r}: {exc}") from exc
    finally:
        src.close()


def _add(archive: tarfile.TarFile, name: str, data: bytes, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = int(time.time())
    archive.addfile(info, io.BytesIO(data))


def write_archive(data_dir: Path, target: Path, details: Mapping[str, Any],
                  max_size: int, max_members: int,
                  before_publish: Callable[[], None] = lambda: None,
                  passphrase: str | None = None) -> dict[str, Any]:
    """Write the backup of ``data_dir`` to ``target`` (which must not exist);
    return its manifest.  ``before_publish`` runs once everything is written and
    before the rename: an error it raises leaves no archive behind.  With
    ``passphrase``, the archive is sealed (:mod:`tripleo_flow.common.sealing`).

    :raises InvalidInput: ``target`` exists, the data directory holds a link, or
        the archive would pass ``[limits]`` (a restore would refuse it).
    """
    if target.exists():
        raise exceptions.InvalidInput(
            f"Backup file {str(target)!r} already exists; choose another name or remove it.")
    kept, left_out = sort_entries(data_dir)
    entries = [item for top in kept if top != EXECUTIONS_DB for item in _files(data_dir, top)]
    manifest: dict[str, Any] = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "tripleo_flow_version": __version__,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "data_dir": str(data_dir), "kept": kept, "left_out": left_out, **details, "files": {}}
    make_dirs(target.parent)
    partial = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}{PARTIAL}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    total = 0
    try:
        with os.fdopen(fd, "wb") as raw, tempfile.TemporaryDirectory() as tmp:
            plain = io.BytesIO()
            with tarfile.open(fileobj=plain if passphrase else raw, mode="w:gz") as archive:
                if EXECUTIONS_DB in kept:
                    snapshot = Path(tmp) / EXECUTIONS_DB
                    snapshot_sqlite(data_dir / EXECUTIONS_DB, snapshot)
                    entries.append((EXECUTIONS_DB, snapshot))
                if len(entries) + 1 > max_members:
                    raise exceptions.InvalidInput(
                        f"The data directory {str(data_dir)!r} holds {len(entries)} files: more "
                        f"than [limits] archive_max_members ({max_members}) lets a restore "
                        "read. Raise that limit (here and where you restore) and retry.")
                for rel, path in entries:
                    data = path.read_bytes()
                    total += len(data)
                    if total > max_size:
                        raise exceptions.InvalidInput(
                            f"The data directory {str(data_dir)!r} holds more than [limits] "
                            f"archive_max_size ({max_size} bytes) that a restore reads. Raise "
                            "that limit (here and where you restore) and retry.")
                    mode = FILE_MODE if rel == EXECUTIONS_DB else stat.S_IMODE(
                        path.stat().st_mode) & 0o700 | FILE_MODE
                    manifest["files"][rel] = {"size": len(data), "mode": oct(mode),
                                              "mtime_ns": path.stat().st_mtime_ns,
                                              "sha256": hashlib.sha256(data).hexdigest()}
                    _add(archive, f"{DATA}/{rel}", data, FILE_MODE)
                text = json.dumps(manifest, indent=1, sort_keys=True).encode()
                _add(archive, MANIFEST, text, FILE_MODE)
            if passphrase:
                raw.write(sealing.seal(plain.getvalue(), passphrase))
            raw.flush()
            os.fsync(raw.fileno())
        before_publish()
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        raise
    return manifest


def _open_sealed(source: Path, max_size: int, passphrase: str | None) -> bytes | None:
    """The archive's tar.gz bytes when it is sealed (None when it is not).

    :raises InvalidInput: sealed and no passphrase, or a passphrase for a plain one.
    :raises InvalidArchive: too large to be one, or it does not open.
    """
    where = str(source)
    try:
        with open(source, "rb") as stream:
            head = stream.read(len(sealing.MAGIC))
            if not sealing.is_sealed(head):
                if passphrase:
                    raise exceptions.InvalidInput(
                        f"Backup archive {where!r} is not encrypted, yet a passphrase was "
                        "given: refusing it, since anyone could have written it.")
                return None
            if passphrase is None:
                raise exceptions.InvalidInput(
                    f"Backup archive {where!r} is encrypted: give its passphrase "
                    "(--passphrase-file FILE).")
            if os.fstat(stream.fileno()).st_size > max_size + (1 << 20):
                raise exceptions.InvalidArchive(
                    where, f"it is larger than [limits] archive_max_size ({max_size} bytes)")
            data = head + stream.read()
    except OSError as exc:
        raise exceptions.InvalidArchive(where, f"cannot read it: {exc.strerror}") from exc
    try:
        return sealing.unseal(data, passphrase)
    except sealing.SealError as exc:
        raise exceptions.InvalidArchive(where, str(exc)) from None


def read_archive(source: Path, max_size: int, max_members: int,
                 passphrase: str | None = None) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest and files (by data-directory path) of a backup archive, every
    file checked against the manifest (the archive opened with ``passphrase`` first
    when it is sealed).

    :raises InvalidArchive: unreadable, unsafe, past a limit, not a backup of this
        format, or a file missing, extra or not matching its checksum.
    """
    where = str(source)
    opened = _open_sealed(source, max_size, passphrase)
    members = read_tarball(where, data=opened, max_size=max_size, max_members=max_members)
    try:
        manifest = json.loads(members.pop(MANIFEST))
        listed = manifest["files"]
        if manifest["format"] != FORMAT or not isinstance(listed, dict):
            raise ValueError("not a tripleo-flow backup")
    except (KeyError, ValueError, TypeError) as exc:
        raise exceptions.InvalidArchive(
            where, f"it is not a tripleo-flow backup (no readable {MANIFEST}: {exc})") from None
    if manifest.get("format_version") != FORMAT_VERSION:
        raise exceptions.InvalidArchive(
            where, f"its format version {manifest.get('format_version')!r} is not "
            f"{FORMAT_VERSION}; restore it with the tripleo-flow version that wrote it "
            f"({manifest.get('tripleo_flow_version')!r})")
    files: dict[str, bytes] = {}
    for name, data in members.items():
        rel = name[len(DATA) + 1:] if name.startswith(f"{DATA}/") else None
        if rel is None or rel not in listed:
            raise exceptions.InvalidArchive(where, f"member {name!r} is not in its manifest")
        files[rel] = data
    for rel, entry in listed.items():
        top = PurePosixPath(rel).parts[0] if rel else ""
        if top not in KEPT and rel != EXECUTIONS_DB:
            raise exceptions.InvalidArchive(where, f"its manifest lists {rel!r}, outside "
                                            "what a backup holds")
        if rel not in files:
            raise exceptions.InvalidArchive(where, f"{rel!r} is missing (truncated?)")
        data = files[rel]
        if not _sane(entry):
            raise exceptions.InvalidArchive(where, f"its manifest entry of {rel!r} is invalid")
        if len(data) != entry.get("size") or \
                hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            raise exceptions.InvalidArchive(
                where, f"{rel!r} does not match its checksum: the archive was changed")
    return manifest, files


def _sane(entry: Any) -> bool:
    """Whether a manifest entry's mode and time are values a restore can apply."""
    if not isinstance(entry, dict) or not isinstance(entry.get("mode"), str):
        return False
    try:
        int(entry["mode"], 8)
    except ValueError:
        return False
    mtime = entry.get("mtime_ns")
    return isinstance(mtime, int) and 0 <= mtime < 1 << 62


def stage(files: Mapping[str, bytes], manifest: Mapping[str, Any], data_dir: Path) -> Path:
    """Write ``files`` into a new private directory beside ``data_dir``; return it."""
    make_dirs(data_dir.parent)
    staging = Path(tempfile.mkdtemp(prefix=f".{data_dir.name}.restore-", dir=data_dir.parent))
    try:
        os.chmod(staging, DIR_MODE)
        for rel, data in sorted(files.items()):
            path = staging / rel
            make_dirs(path.parent)
            entry = manifest["files"][rel]
            mode = int(entry["mode"], 8) & 0o700 | FILE_MODE
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(path, mode)
            os.utime(path, ns=(entry["mtime_ns"], entry["mtime_ns"]))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2``); False where unsupported."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second),
                 rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(first))


def swap_in(staging: Path, data_dir: Path) -> Path | None:
    """Make ``staging`` the data directory.  An existing one is swapped out whole,
    then its entries a backup does not hold (virtualenvs, locks ...) are moved into
    the new one; what remains of it is kept beside, its path returned (None when
    nothing remains)."""
    try:
        if not data_dir.exists():
            os.rename(staging, data_dir)
            return None
        if not any(data_dir.iterdir()):
            data_dir.rmdir()
            os.rename(staging, data_dir)
            return None
        if not _exchange(staging, data_dir):
            old = staging.with_name(staging.name + ".old")
            os.rename(data_dir, old)
            try:
                os.rename(staging, data_dir)
            except BaseException:
                os.rename(old, data_dir)
                raise
            staging = old
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    # From here ``staging`` holds the replaced data directory: never removed.
    for name in sorted(os.listdir(staging)):
        if name not in KEPT and not name.startswith(EXECUTIONS_DB) and \
                not (data_dir / name).exists():
            os.rename(staging / name, data_dir / name)
    if not any(staging.iterdir()):  # it held only what moved along (locks)
        staging.rmdir()
        return None
    previous = data_dir.with_name(
        f"{data_dir.name}.before-restore-{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(2)}")
    os.rename(staging, previous)
    return previous


__all__ = ["BACKUPS", "EXECUTIONS_DB", "KEPT", "PARTIAL", "REBUILT", "read_archive",
           "snapshot_sqlite", "sort_entries", "stage", "swap_in", "sweep_partials",
           "write_archive"]
