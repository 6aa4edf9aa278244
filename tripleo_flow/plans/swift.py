"""The Swift plan store: one Swift container per plan.

:class:`SwiftStore` implements :class:`~tripleo_flow.plans.store.PlanStore`
with python-swiftclient, through a :class:`~tripleo_flow.plans.swift_conn.SwiftSession`
(pooled connections sharing one auth token, error translation).

Versioned containers use Swift object versioning (``X-Versions-Enabled``,
:mod:`tripleo_flow.plans.swift_versions`); :meth:`SwiftStore.put_objects`
uploads template trees as tar archives through the bulk middleware
(``?extract-archive=tar``, :mod:`tripleo_flow.plans.swift_bulk`), split into
parallel chunks, which measured faster than parallel single PUTs
(``bench/plan_upload.py``); without the bulk middleware (``/info`` has no
``bulk_upload``) it falls back to parallel single PUTs.

Version ids are Swift's (a timestamp, or ``null`` for an object written before
versioning was on): any other id is not found without asking Swift.  After a
write to a versioned container, versions of the written objects past
``history_max`` are deleted, oldest first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NoReturn
from urllib.parse import quote

from oslo_config import cfg
from swiftclient.exceptions import ClientException

from tripleo_flow import exceptions
from tripleo_flow.core.deploy.progress import CountListener
from tripleo_flow.plans import store as _store
from tripleo_flow.plans import swift_versions as _versions
from tripleo_flow.plans.store import ContainerInfo, ObjectVersion
from tripleo_flow.plans.swift_bulk import (
    Failures,
    bulk_delete,
    make_tar,
    raise_failures,
    split_evenly,
    upload_archive,
)
from tripleo_flow.plans.swift_conn import SwiftSession, options_from_conf
from tripleo_flow.plans.transfer import TransferMeter

_META = "x-container-meta-"
_BULK_DELETE_MAX = 1000


class SwiftStore:
    """A :class:`~tripleo_flow.plans.store.PlanStore` in a Swift account.

    The parameters are those of :class:`~tripleo_flow.plans.swift_conn.SwiftSession`
    (auth URL, user, key, Keystone v3 names, ``upload_threads``, ``retries``);
    the store's requests go through that session (:attr:`session`).
    """

    def __init__(self, auth_url: str, user: str, key: str, auth_version: str = "1",
                 project_name: str | None = None, user_domain_name: str = "Default",
                 project_domain_name: str = "Default", upload_threads: int = 8,
                 retries: int = 3, history_max: int = _store.DEFAULT_HISTORY_MAX) -> None:
        self.history_max = history_max
        self.session = SwiftSession(
            auth_url, user, key, auth_version=auth_version, project_name=project_name,
            user_domain_name=user_domain_name, project_domain_name=project_domain_name,
            upload_threads=upload_threads, retries=retries)

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> SwiftStore:
        """Build a store from the ``[swift]`` group of ``conf``.

        :raises InvalidInput: when auth_url, user or key is missing.
        """
        return cls(**options_from_conf(conf), history_max=conf.limits.plan_history_max)

    @property
    def auth_url(self) -> str:
        return self.session.auth_url

    @property
    def user(self) -> str:
        return self.session.user

    @property
    def upload_threads(self) -> int:
        return self.session.upload_threads

    def __repr__(self) -> str:
        return f"SwiftStore({self.auth_url!r}, user={self.user!r})"

    def connection_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``swiftclient.Connection`` (no token)."""
        return self.session.connection_kwargs()

    def close(self) -> None:
        """Close every pooled connection (the store stays usable)."""
        self.session.close()

    def __enter__(self) -> SwiftStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests ------------------------------------------------------------

    def _head(self, container: str) -> dict[str, str]:
        _check_container(container)
        try:
            return self.session.call("read container", repr(container),
                                     lambda c: c.head_container(container))
        except ClientException as exc:
            raise exceptions.ContainerNotFound(container) from exc

    def _not_found(self, container: str, name: str, exc: Exception) -> NoReturn:
        """Raise ObjectNotFound or, when the container is gone, ContainerNotFound."""
        self._head(container)
        raise exceptions.ObjectNotFound(container, name) from exc

    # -- containers --------------------------------------------------------

    def list_containers(self) -> list[ContainerInfo]:
        try:
            _, listing = self.session.call("list containers", "of the account",
                                            lambda c: c.get_account(full_listing=True))
        except ClientException:
            return []  # the account does not exist yet
        result = []
        for entry in listing:
            try:
                headers = self._head(entry["name"])
            except exceptions.ContainerNotFound:
                continue  # deleted since the listing
            result.append(ContainerInfo(entry["name"], _metadata(headers)))
        return sorted(result, key=lambda info: info.name)

    def container_exists(self, container: str) -> bool:
        try:
            self._head(container)
        except exceptions.ContainerNotFound:
            return False
        return True

    def create_container(self, container: str, metadata: Mapping[str, str] | None = None,
                         versioned: bool = False) -> None:
        if self.container_exists(container):
            raise exceptions.ContainerExists(container)
        headers = _meta_headers(metadata or {}, removals=False)
        if versioned:
            headers["X-Versions-Enabled"] = "true"
        response: dict[str, Any] = {}
        try:
            self.session.call("create container", repr(container),
                               lambda c: c.put_container(container, headers=headers,
                                                         response_dict=response))
        except ClientException as exc:
            raise self.session.error("create container", repr(container), exc) from exc
        if response.get("status") == 202:  # created concurrently by someone else
            raise exceptions.ContainerExists(container)

    def get_container_metadata(self, container: str) -> dict[str, str]:
        return _metadata(self._head(container))

    def set_container_metadata(self, container: str, metadata: Mapping[str, str | None]) -> None:
        _check_container(container)
        headers = _meta_headers(metadata, removals=True)
        try:
            self.session.call("update metadata of container", repr(container),
                               lambda c: c.post_container(container, headers))
        except ClientException as exc:
            raise exceptions.ContainerNotFound(container) from exc

    def delete_container(self, container: str) -> None:
        headers = self._head(container)
        versioned = _ever_versioned(headers)
        enabled = headers.get("x-versions-enabled", "").lower() == "true"
        if enabled:
            # Swift deletes a versioned container only with versioning off.
            _versions.set_versioning(self.session, container, False)
        try:
            self._empty_and_delete(container, versioned)
        except BaseException:
            if enabled:  # leave a container we could not delete as it was
                with contextlib.suppress(ClientException, exceptions.TripleoFlowError):
                    _versions.set_versioning(self.session, container, True)
            raise

    def set_versioning(self, container: str, enabled: bool) -> None:
        _check_container(container)
        _versions.set_versioning(self.session, container, enabled)

    def _empty_and_delete(self, container: str, versioned: bool) -> None:
        last: exceptions.PlanStoreError | None = None
        for _attempt in range(3):
            if versioned:
                entries = _versions.list_versions(self.session, container, "")
                _versions.delete_versions(self.session, container, entries)
            else:
                self.delete_objects(container, self.list_objects(container))
            try:
                self.session.call("delete container", repr(container),
                                   lambda c: c.delete_container(container))
                return
            except ClientException:
                return  # 404: already gone
            except exceptions.PlanStoreError as exc:
                if getattr(exc.__cause__, "http_status", None) != 409:
                    raise
                last = exc  # objects were added meanwhile: empty it again
        assert last is not None
        raise last

    # -- objects -----------------------------------------------------------

    def list_objects(self, container: str, prefix: str = "") -> list[str]:
        _check_container(container)
        try:
            _, listing = self.session.call(
                "list objects of container", repr(container),
                lambda c: c.get_container(container, prefix=prefix or None, full_listing=True))
        except ClientException as exc:
            raise exceptions.ContainerNotFound(container) from exc
        return sorted(entry["name"] for entry in listing)

    def get_object(self, container: str, name: str, version_id: str | None = None) -> bytes:
        _check_container(container)
        _check_object(name)
        if version_id is not None and not _versions.is_version_id(version_id):
            self._head(container)
            raise exceptions.ObjectNotFound(container, f"{name}?version-id={version_id}")
        query = f"version-id={quote(version_id, safe='')}" if version_id is not None else None
        target = f"{name!r} in container {container!r}"
        try:
            return bytes(self.session.call("read object", target,
                                            lambda c: c.get_object(container, name,
                                                                   query_string=query)[1]))
        except ClientException as exc:
            shown = name if version_id is None else f"{name}?version-id={version_id}"
            self._not_found(container, shown, exc)
        except exceptions.InvalidInput as exc:
            if version_id is None:  # Swift answers 400 to an unknown version id
                raise
            self._not_found(container, f"{name}?version-id={version_id}", exc)

    def get_objects(self, container: str, names: Iterable[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}

        def get(name: str) -> Failures:
            try:
                found[name] = self.get_object(container, name)
            except exceptions.TripleoFlowError as exc:
                return [(name, str(exc))]  # its own read reports it
            return []

        self.session.parallel(get, list(names))
        return found

    def put_object(self, container: str, name: str, data: bytes) -> None:
        self._put(container, name, data)
        _versions.prune(self.session, container, [name], self.history_max)

    def _put(self, container: str, name: str, data: bytes) -> None:
        _check_container(container)
        _check_object(name)
        try:
            self.session.call("write object", f"{name!r} in container {container!r}",
                               lambda c: c.put_object(container, name, data))
        except ClientException as exc:
            raise exceptions.ContainerNotFound(container) from exc

    def put_objects(self, container: str, objects: Mapping[str, bytes],
                    progress: CountListener | None = None,
                    check: _store.PartCheck | None = None) -> None:
        """Upload ``objects`` as tar archives, one parallel chunk per upload thread.

        :param progress: called with ``(bytes sent, bytes total)``; the bytes are
            those of the archives (objects plus their tar headers).
        :param check: called with each chunk before its upload starts, in the
            calling thread, while the chunks before it upload.
        :raises PlanStoreError: naming the objects Swift did not store.
        """
        for name in objects:
            _check_object(name)
        # extract-archive would create a missing container
        versioned = _ever_versioned(self._head(container))
        if not objects:
            return
        if "bulk_upload" not in self.session.capabilities():
            if check is not None:
                check(objects)
            self.put_objects_single(container, objects, progress)
            return
        parts = [(chunk, make_tar(chunk)) for chunk in split_evenly(objects, self.upload_threads)]
        meter = TransferMeter(sum(len(archive) for _, archive in parts), progress,
                              held=check is not None)

        def checked() -> Iterator[tuple[dict[str, bytes], bytes]]:
            if check is None:
                yield from parts
                return
            for part in parts:
                check(part[0])
                yield part
            meter.release()

        failures = self.session.parallel(
            lambda part: upload_archive(self.session, container, part[0], part[1],
                                        meter.part(id(part[1]))), checked())
        raise_failures("upload", container, failures)
        if versioned:
            _versions.prune(self.session, container, list(objects), self.history_max)

    def put_objects_single(self, container: str, objects: Mapping[str, bytes],
                           progress: CountListener | None = None) -> None:
        """Upload ``objects`` with one PUT each over parallel connections.

        The alternative to :meth:`put_objects` kept for ``bench/plan_upload.py``.
        """
        for name in objects:
            _check_object(name)
        versioned = _ever_versioned(self._head(container))
        meter = TransferMeter(sum(len(d) for d in objects.values()), progress)

        def put(name: str) -> Failures:
            try:
                self._put(container, name, objects[name])
            except exceptions.TripleoFlowError as exc:
                return [(name, str(exc))]
            meter.add(len(objects[name]))
            return []

        raise_failures("upload", container, self.session.parallel(put, list(objects)))
        if versioned:
            _versions.prune(self.session, container, list(objects), self.history_max)

    def delete_object(self, container: str, name: str) -> None:
        _check_container(container)
        _check_object(name)
        try:
            self.session.call("delete object", f"{name!r} in container {container!r}",
                               lambda c: c.delete_object(container, name))
        except ClientException:
            self._head(container)  # missing object: fine; missing container: raise

    def delete_objects(self, container: str, names: Iterable[str]) -> None:
        names = list(names)
        for name in names:
            _check_object(name)
        self._head(container)
        bulk = self.session.capabilities().get("bulk_delete")
        if not bulk:
            raise_failures("delete", container,
                            self.session.parallel(lambda n: self._delete_one(container, n), names))
            return
        # Parallel batches: one bulk request deletes its objects one after another.
        size = min(_BULK_DELETE_MAX, int(bulk.get("max_deletes_per_request", _BULK_DELETE_MAX)),
                   max(1, -(-len(names) // self.upload_threads)))
        batches = [names[i:i + size] for i in range(0, len(names), size)]
        failures = self.session.parallel(
            lambda batch: bulk_delete(self.session, container, batch), batches)
        raise_failures("delete", container, failures)

    def _delete_one(self, container: str, name: str) -> Failures:
        try:
            self.delete_object(container, name)
        except exceptions.TripleoFlowError as exc:
            return [(name, str(exc))]
        return []

    def list_versions(self, container: str, name: str) -> list[ObjectVersion]:
        _check_container(container)
        _check_object(name)
        return _versions.object_versions(_versions.list_versions(self.session, container, name),
                                         name)


# -- module helpers ------------------------------------------------------------


def _ever_versioned(headers: Mapping[str, str]) -> bool:
    """Whether a container (its HEAD ``headers``) has had versioning on, now or once.

    One that never had holds a single version of each object: writing to it leaves
    nothing to prune, and a listing of the versions of a whole template tree (what a
    plan create's upload would ask for) can be spared.
    """
    return "x-versions-enabled" in headers


def _metadata(headers: Mapping[str, str]) -> dict[str, str]:
    return {key[len(_META):].lower(): value for key, value in headers.items()
            if key.lower().startswith(_META)}


def _meta_headers(metadata: Mapping[str, str | None], removals: bool) -> dict[str, str]:
    headers = {}
    for key, value in metadata.items():
        key = _store.check_metadata(key, value)
        if value:
            headers[f"X-Container-Meta-{key}"] = value
        elif removals:
            headers[f"X-Remove-Container-Meta-{key}"] = "x"
    return headers


_check_container = _store.check_container_name
_check_object = _store.check_object_name
