"""The plan store port: containers of objects with metadata.

Two adapters implement :class:`PlanStore`: :mod:`tripleo_flow.plans.swift`
(a real Swift cluster) and :mod:`tripleo_flow.plans.local` (a directory tree,
the default on a single machine).  One contract test suite
(``tests/functional/test_store_contract.py``) runs against both.

Rules every adapter follows:

* names are plain strings; object names may contain ``/``; both stores refuse
  the same names (:func:`check_container_name`, :func:`check_object_name`);
* version ids are opaque: only the ids a store listed (:meth:`PlanStore.list_versions`)
  are found, anything else raises ObjectNotFound, whatever it looks like;
* a versioned container keeps at most ``history_max`` versions of an object:
  a write prunes the oldest;
* metadata keys are lower-case strings of letters, digits and ``-`` (at most
  128 characters; Swift drops other header names), values strings of at most
  256 UTF-8 bytes without control characters; setting a key to ``None`` or
  ``""`` removes it (Swift cannot store empty values), see
  :func:`check_metadata`;
* a missing container raises :class:`~tripleo_flow.exceptions.ContainerNotFound`,
  a missing object :class:`~tripleo_flow.exceptions.ObjectNotFound`; any other
  backend failure raises :class:`~tripleo_flow.exceptions.PlanStoreError`;
* constructors do no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from tripleo_flow import exceptions
from tripleo_flow.core.deploy.progress import CountListener

_META_KEY = re.compile(r"^[a-z0-9][a-z0-9-]{0,127}$")
MAX_META_VALUE_BYTES = 256
#: Longest container name, in UTF-8 bytes (a file name on the local store; Swift: 256).
MAX_CONTAINER_NAME = 255
#: Longest object name, in UTF-8 bytes (Swift's default ``max_object_name_length``).
MAX_OBJECT_NAME = 1024
#: Longest segment between two ``/`` of an object name (a file name on the local store).
MAX_NAME_SEGMENT = 255
#: Versions of each object a versioned container keeps (``[limits] plan_history_max``).
DEFAULT_HISTORY_MAX = 100
#: The ``check`` of :meth:`PlanStore.put_objects`: refuses a part of the upload by raising.
PartCheck = Callable[[Mapping[str, bytes]], None]


def _encoded(kind: str, name: object) -> bytes:
    if not isinstance(name, str) or not name:
        raise exceptions.InvalidInput(f"Invalid {kind} name {name!r}: give a non-empty string.")
    try:
        data = name.encode()
    except UnicodeEncodeError:
        raise exceptions.InvalidInput(
            f"Invalid {kind} name {name!r}: it is not valid Unicode text.") from None
    if any(ch < 32 or ch == 127 for ch in data):
        raise exceptions.InvalidInput(
            f"Invalid {kind} name {name!r}: control characters are not allowed.")
    return data


def check_container_name(name: str) -> str:
    """Return ``name`` when every store can keep a container of that name.

    :raises InvalidInput: for an empty name, a ``/``, ``.`` or ``..``, control
        characters, or more than :data:`MAX_CONTAINER_NAME` bytes.
    """
    data = _encoded("container", name)
    if "/" in name or name in (".", ".."):
        raise exceptions.InvalidInput(
            f"Invalid container name {name!r}: '/', '.' and '..' are not allowed.")
    if len(data) > MAX_CONTAINER_NAME:
        raise exceptions.InvalidInput(
            f"Invalid container name {name[:40]!r}...: longer than {MAX_CONTAINER_NAME} "
            "bytes; use a shorter name.")
    return name


def check_object_name(name: str) -> str:
    """Return ``name`` when every store can keep an object of that name.

    Object names are relative paths: no leading ``/``, no empty, ``.`` or
    ``..`` segment, at most :data:`MAX_OBJECT_NAME` bytes in all and
    :data:`MAX_NAME_SEGMENT` bytes between two ``/``.

    :raises InvalidInput: naming what is wrong.
    """
    data = _encoded("object", name)
    if any(part in ("", ".", "..") for part in name.split("/")):
        raise exceptions.InvalidInput(
            f"Invalid object name {name!r}: use a relative path without empty, '.' or '..' "
            "parts.")
    if len(data) > MAX_OBJECT_NAME or any(len(p) > MAX_NAME_SEGMENT for p in data.split(b"/")):
        raise exceptions.InvalidInput(
            f"Invalid object name {name[:40]!r}...: longer than {MAX_OBJECT_NAME} bytes, or a "
            f"part between two '/' longer than {MAX_NAME_SEGMENT} bytes; use a shorter name.")
    return name


def check_metadata(key: str, value: str | None) -> str:
    """Validate one container metadata item; return the lower-case key.

    :raises InvalidInput: for a key or value every store cannot keep as given.
    """
    lowered = key.lower()
    if not _META_KEY.match(lowered):
        raise exceptions.InvalidInput(
            f"Invalid metadata key {key!r}: use letters, digits and '-' "
            "(at most 128 characters, starting with a letter or digit).")
    if value is not None:
        if not isinstance(value, str) or any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise exceptions.InvalidInput(
                f"Invalid value for metadata key {key!r}: use a string without control "
                "characters.")
        if len(value.encode()) > MAX_META_VALUE_BYTES:
            raise exceptions.InvalidInput(
                f"Value of metadata key {key!r} is too long: at most "
                f"{MAX_META_VALUE_BYTES} bytes (UTF-8); keep larger data in an object.")
    return lowered


@dataclass(frozen=True)
class ContainerInfo:
    """A container and its metadata."""

    name: str
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ObjectVersion:
    """One stored version of an object (newest first in listings)."""

    version_id: str
    last_modified: str
    size: int
    is_latest: bool


@runtime_checkable
class PlanStore(Protocol):
    """Containers of objects with metadata, and object versions."""

    #: Versions of each object a versioned container keeps, the current one included;
    #: writing one more prunes the oldest.
    history_max: int

    def list_containers(self) -> list[ContainerInfo]:
        """All containers, sorted by name, with their metadata."""
        ...

    def container_exists(self, container: str) -> bool: ...

    def create_container(
        self,
        container: str,
        metadata: Mapping[str, str] | None = None,
        versioned: bool = False,
    ) -> None:
        """Create ``container``; raise ContainerExists when it is already there.

        With ``versioned`` every overwrite or delete of an object keeps the
        earlier content as a version (:meth:`list_versions`).
        """
        ...

    def set_versioning(self, container: str, enabled: bool) -> None:
        """Turn object versioning of ``container`` on or off.

        Versioning makes every write slower (Swift writes each object twice), so
        a large first upload goes in before versioning is turned on.
        """
        ...

    def get_container_metadata(self, container: str) -> dict[str, str]: ...

    def set_container_metadata(self, container: str, metadata: Mapping[str, str | None]) -> None:
        """Merge ``metadata`` into the container's; ``None`` values remove keys."""
        ...

    def delete_container(self, container: str) -> None:
        """Delete ``container`` with every object and version in it."""
        ...

    def list_objects(self, container: str, prefix: str = "") -> list[str]:
        """Names of the current objects, sorted."""
        ...

    def get_object(self, container: str, name: str, version_id: str | None = None) -> bytes:
        """The object's content, or that of the version ``version_id`` listed by
        :meth:`list_versions` (any other id raises ObjectNotFound)."""
        ...

    def get_objects(self, container: str, names: Iterable[str]) -> dict[str, bytes]:
        """The content of each of ``names`` that could be read, read at once (in
        parallel where the store can); one missing or unreadable is left out, for
        :meth:`get_object` to report."""
        ...

    def put_object(self, container: str, name: str, data: bytes) -> None: ...

    def put_objects(self, container: str, objects: Mapping[str, bytes],
                    progress: CountListener | None = None,
                    check: PartCheck | None = None) -> None:
        """Upload many objects at once (the fast path for template trees).

        :param progress: called with ``(bytes done, bytes total)`` as the upload goes;
            with ``check``, only once every part is checked.
        :param check: called with parts of ``objects`` (together all of them, each
            once) before any object of the part is written, which it may refuse by
            raising: then no further part is written, the writes under way are
            waited for and the error is raised (what was written stays).
        """
        ...

    def delete_object(self, container: str, name: str) -> None:
        """Delete one object; a missing object is not an error."""
        ...

    def delete_objects(self, container: str, names: Iterable[str]) -> None:
        """Delete many objects; missing ones are not an error."""
        ...

    def list_versions(self, container: str, name: str) -> list[ObjectVersion]:
        """Stored versions of ``name``, newest first, the current one flagged ``is_latest``.

        An unversioned container keeps no old versions: only the current
        object is listed (nothing when it does not exist).  A deleted object of
        a versioned container lists its earlier versions, none flagged latest.
        """
        ...
