"""The plan store port: containers of objects with metadata.

Two adapters implement :class:`PlanStore`: :mod:`tripleo_flow.plans.swift`
(a real Swift cluster) and :mod:`tripleo_flow.plans.local` (a directory tree,
the default on a single machine).  One contract test suite
(``tests/functional/test_store_contract.py``) runs against both.

Rules every adapter follows:

* names are plain strings; object names may contain ``/``;
* metadata keys are lower-case strings, values strings; setting a key to
  ``None`` removes it;
* a missing container raises :class:`~tripleo_flow.exceptions.ContainerNotFound`,
  a missing object :class:`~tripleo_flow.exceptions.ObjectNotFound`; any other
  backend failure raises :class:`~tripleo_flow.exceptions.PlanStoreError`;
* constructors do no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


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

    def get_object(self, container: str, name: str, version_id: str | None = None) -> bytes: ...

    def put_object(self, container: str, name: str, data: bytes) -> None: ...

    def put_objects(self, container: str, objects: Mapping[str, bytes]) -> None:
        """Upload many objects at once (the fast path for template trees)."""
        ...

    def delete_object(self, container: str, name: str) -> None:
        """Delete one object; a missing object is not an error."""
        ...

    def delete_objects(self, container: str, names: Iterable[str]) -> None:
        """Delete many objects; missing ones are not an error."""
        ...

    def list_versions(self, container: str, name: str) -> list[ObjectVersion]:
        """Stored versions of ``name``, newest first (empty when unversioned)."""
        ...
