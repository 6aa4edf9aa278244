"""The local embedded plan store: a directory tree on one machine.

Layout under ``root``::

    <container>/meta.json              container metadata (and the versioned flag)
    <container>/objects/<name>         current objects
    <container>/versions/<name>/<id>   earlier versions (versioned containers)
    <container>/staging/               temporary files of writes in progress

Every write goes to a temporary file first and is renamed into place, so a
reader never sees a half-written object; temporary files live outside
``objects/``, so no object name is reserved for them.

Version ids are the 20-digit nanosecond timestamps this store issues, plus
``current`` for the current object; any other id is not found (it is never
joined to a path).  A versioned container keeps at most ``history_max``
versions of an object, the current one included.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from tripleo_flow import exceptions
from tripleo_flow.core.deploy.progress import CountListener
from tripleo_flow.plans.store import (
    DEFAULT_HISTORY_MAX,
    ContainerInfo,
    ObjectVersion,
    PartCheck,
    check_container_name,
    check_metadata,
    check_object_name,
)
from tripleo_flow.plans.transfer import TransferMeter

_META = "meta.json"
_OBJECTS = "objects"
_VERSIONS = "versions"
_STAGING = "staging"
_CURRENT = "current"
_VERSION_ID = re.compile(r"^[0-9]{20}$")


def _atomic_write(path: Path, data: bytes, staging: Path | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file in ``staging`` (default:
    beside ``path``; it must be on the same file system)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp_dir = staging or path.parent
    tmp_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=tmp_dir, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with _suppress():
            os.unlink(tmp)
        raise


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is not None and issubclass(exc[0], OSError)  # type: ignore[arg-type]


class LocalStore:
    """A :class:`~tripleo_flow.plans.store.PlanStore` kept in a directory."""

    def __init__(self, root: str | os.PathLike[str],
                 history_max: int = DEFAULT_HISTORY_MAX) -> None:
        self.root = Path(root)
        self.history_max = history_max

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    # -- helpers -----------------------------------------------------------

    def _container_dir(self, container: str) -> Path:
        return self.root / check_container_name(container)

    def _existing(self, container: str) -> Path:
        path = self._container_dir(container)
        if not (path / _META).is_file():
            raise exceptions.ContainerNotFound(container)
        return path

    def _object_path(self, base: Path, name: str) -> Path:
        return base / _OBJECTS / check_object_name(name)

    def _read_meta(self, path: Path) -> dict[str, object]:
        try:
            return json.loads((path / _META).read_text())  # type: ignore[no-any-return]
        except FileNotFoundError:
            raise exceptions.ContainerNotFound(path.name)
        except (OSError, ValueError) as exc:
            raise exceptions.PlanStoreError(f"Cannot read metadata of {path}: {exc}") from exc

    def _versioned(self, path: Path) -> bool:
        return bool(self._read_meta(path).get("versioned"))

    def _keep_version(self, path: Path, name: str, current: Path) -> None:
        if not current.is_file() or not self._versioned(path):
            return
        version_id = f"{time.time_ns():020d}"
        target = path / _VERSIONS / name / version_id
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copy2(current, target)
        self._prune_versions(target.parent)

    def _prune_versions(self, vdir: Path) -> None:
        """Delete the oldest versions in ``vdir`` past ``history_max`` (with the current one)."""
        ids = sorted((e.name for e in vdir.iterdir() if _VERSION_ID.fullmatch(e.name)),
                     reverse=True)
        for old in ids[max(self.history_max - 1, 0):]:
            with _suppress():
                os.unlink(vdir / old)

    def _version_path(self, path: Path, container: str, name: str, version_id: str) -> Path:
        """The file of a version this store issued; ObjectNotFound for any other id."""
        current = self._object_path(path, name)
        if version_id == _CURRENT:
            return current
        if isinstance(version_id, str) and _VERSION_ID.fullmatch(version_id):
            return path / _VERSIONS / name / version_id
        raise exceptions.ObjectNotFound(container, f"{name}?version-id={version_id}")

    # -- containers --------------------------------------------------------

    def list_containers(self) -> list[ContainerInfo]:
        if not self.root.is_dir():
            return []
        result = []
        for entry in sorted(self.root.iterdir()):
            if (entry / _META).is_file():
                meta = self._read_meta(entry)
                result.append(ContainerInfo(entry.name, dict(meta.get("metadata", {}))))  # type: ignore[call-overload]
        return result

    def container_exists(self, container: str) -> bool:
        return (self._container_dir(container) / _META).is_file()

    def create_container(
        self,
        container: str,
        metadata: Mapping[str, str] | None = None,
        versioned: bool = False,
    ) -> None:
        path = self._container_dir(container)
        clean = {check_metadata(k, v): v for k, v in (metadata or {}).items()}
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            if (path / _META).is_file():
                raise exceptions.ContainerExists(container)
        meta = {"metadata": {k: v for k, v in clean.items() if v}, "versioned": versioned}
        (path / _OBJECTS).mkdir(exist_ok=True, mode=0o700)
        _atomic_write(path / _META, json.dumps(meta).encode())

    def set_versioning(self, container: str, enabled: bool) -> None:
        path = self._existing(container)
        meta = self._read_meta(path)
        meta["versioned"] = enabled
        _atomic_write(path / _META, json.dumps(meta).encode())

    def get_container_metadata(self, container: str) -> dict[str, str]:
        return dict(self._read_meta(self._existing(container)).get("metadata", {}))  # type: ignore[call-overload]

    def set_container_metadata(self, container: str, metadata: Mapping[str, str | None]) -> None:
        path = self._existing(container)
        meta = self._read_meta(path)
        current: dict[str, str] = dict(meta.get("metadata", {}))  # type: ignore[call-overload]
        for key, value in metadata.items():
            if value:
                current[check_metadata(key, value)] = value
            else:  # None or "" removes the key (Swift cannot store "")
                current.pop(check_metadata(key, value), None)
        meta["metadata"] = current
        _atomic_write(path / _META, json.dumps(meta).encode())

    def delete_container(self, container: str) -> None:
        path = self._existing(container)
        # Remove the marker first so a crash half-way leaves no container.
        os.unlink(path / _META)
        shutil.rmtree(path, ignore_errors=True)

    # -- objects -----------------------------------------------------------

    def list_objects(self, container: str, prefix: str = "") -> list[str]:
        base = self._existing(container) / _OBJECTS
        names = []
        for dirpath, _dirs, files in os.walk(base):
            for filename in files:
                rel = os.path.relpath(os.path.join(dirpath, filename), base)
                name = rel.replace(os.sep, "/")
                if name.startswith(prefix):
                    names.append(name)
        return sorted(names)

    def get_object(self, container: str, name: str, version_id: str | None = None) -> bytes:
        path = self._existing(container)
        if version_id is None:
            target, shown = self._object_path(path, name), name
        else:
            target = self._version_path(path, container, name, version_id)
            shown = f"{name}?version-id={version_id}"
        try:
            return target.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise exceptions.ObjectNotFound(container, shown)

    def get_objects(self, container: str, names: Iterable[str]) -> dict[str, bytes]:
        found = {}
        for name in names:
            try:
                found[name] = self.get_object(container, name)
            except exceptions.TripleoFlowError:
                continue  # its own read reports it
        return found

    def put_object(self, container: str, name: str, data: bytes) -> None:
        path = self._existing(container)
        target = self._object_path(path, name)
        self._keep_version(path, name, target)
        try:
            _atomic_write(target, data, path / _STAGING)
        except OSError as exc:
            raise exceptions.PlanStoreError(
                f"Cannot write {name!r} in container {container!r}: {exc}"
            ) from exc

    def put_objects(self, container: str, objects: Mapping[str, bytes],
                    progress: CountListener | None = None,
                    check: PartCheck | None = None) -> None:
        path = self._existing(container)
        for name in objects:  # refuse the whole batch before writing anything
            self._object_path(path, name)
        if check is not None:  # one part: the writes here are one after another
            check(objects)
        meter = TransferMeter(sum(len(d) for d in objects.values()), progress)
        for name, data in objects.items():
            self.put_object(container, name, data)
            meter.add(len(data))

    def delete_object(self, container: str, name: str) -> None:
        path = self._existing(container)
        target = self._object_path(path, name)
        self._keep_version(path, name, target)
        try:
            target.unlink()
        except FileNotFoundError:
            return
        # Prune directories left empty.
        parent = target.parent
        base = path / _OBJECTS
        while parent != base:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent

    def delete_objects(self, container: str, names: Iterable[str]) -> None:
        for name in names:
            self.delete_object(container, name)

    def list_versions(self, container: str, name: str) -> list[ObjectVersion]:
        path = self._existing(container)
        versions: list[ObjectVersion] = []
        current = self._object_path(path, name)
        if current.is_file():
            stat = current.stat()
            versions.append(ObjectVersion(_CURRENT, _iso(stat.st_mtime), stat.st_size, True))
        vdir = path / _VERSIONS / name
        if vdir.is_dir():
            for entry in sorted(vdir.iterdir(), reverse=True):
                if not _VERSION_ID.fullmatch(entry.name):
                    continue
                stat = entry.stat()
                versions.append(ObjectVersion(entry.name, _iso(int(entry.name) / 1e9),
                                              stat.st_size, False))
        return versions


def _iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(timestamp)) + (
        f".{int((timestamp % 1) * 1e6):06d}"
    )
