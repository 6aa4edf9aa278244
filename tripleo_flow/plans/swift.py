"""The Swift plan store: one Swift container per plan.

:class:`SwiftStore` implements :class:`~tripleo_flow.plans.store.PlanStore`
with python-swiftclient.  Connections are opened lazily and kept in a small
pool, one per thread that needs one (a swiftclient ``Connection`` is not
thread-safe); they share one auth token.

Versioned containers use Swift object versioning (``X-Versions-Enabled``);
:meth:`SwiftStore.put_objects` uploads template trees as tar archives through
the bulk middleware (``?extract-archive=tar``), split into parallel chunks,
which measured faster than parallel single PUTs (``bench/plan_upload.py``);
without the bulk middleware (``/info`` has no ``bulk_upload``) it falls back
to parallel single PUTs.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NoReturn, TypeVar
from urllib.parse import quote

from oslo_config import cfg
from swiftclient import client as swiftclient
from swiftclient.exceptions import ClientException

from tripleo_flow import exceptions
from tripleo_flow.core.progress import CountListener
from tripleo_flow.plans import store as _store
from tripleo_flow.plans.store import ContainerInfo, ObjectVersion
from tripleo_flow.plans.swift_bulk import (
    Failures,
    bulk_failures,
    make_tar,
    put_archive,
    raise_failures,
    split_evenly,
)
from tripleo_flow.plans.transfer import TransferMeter

_META = "x-container-meta-"
_DELETE_MARKER = "application/x-deleted;swift_versions_deleted=1"
_LISTING_LIMIT = 10000
_BULK_DELETE_MAX = 1000
_T = TypeVar("_T")


class SwiftStore:
    """A :class:`~tripleo_flow.plans.store.PlanStore` in a Swift account.

    :param auth_url: tempauth (``http://HOST:8080/auth/v1.0``) or Keystone
        (``http://HOST:5000/v3``) URL.
    :param user: user name (tempauth: ``account:user``).
    :param key: password or key.
    :param auth_version: ``"1"`` (tempauth) or ``"3"`` (Keystone v3).
    :param project_name: Keystone v3 project.
    :param user_domain_name: Keystone v3 user domain.
    :param project_domain_name: Keystone v3 project domain.
    :param upload_threads: parallel requests for many-object operations.
    :param retries: retries of a failed request (swiftclient backoff).
    """

    def __init__(self, auth_url: str, user: str, key: str, auth_version: str = "1",
                 project_name: str | None = None, user_domain_name: str = "Default",
                 project_domain_name: str = "Default", upload_threads: int = 8,
                 retries: int = 3) -> None:
        if auth_version not in ("1", "3"):
            raise exceptions.InvalidInput(
                f"Unsupported Swift auth_version {auth_version!r}: use '1' (tempauth) or "
                "'3' (Keystone v3) in the [swift] section.")
        self.auth_url = auth_url
        self.user = user
        self._key = key
        self.auth_version = auth_version
        self.os_options = {k: v for k, v in (("project_name", project_name),
                                             ("user_domain_name", user_domain_name),
                                             ("project_domain_name", project_domain_name))
                           if v} if auth_version == "3" else {}
        self.upload_threads = max(1, upload_threads)
        self.retries = retries
        self._idle: list[swiftclient.Connection] = []
        self._lock = threading.Lock()
        self._auth: tuple[str, str] | None = None
        self._caps: dict[str, Any] | None = None

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> SwiftStore:
        """Build a store from the ``[swift]`` group of ``conf``.

        :raises InvalidInput: when auth_url, user or key is missing.
        """
        group = conf.swift
        missing = [name for name in ("auth_url", "user", "key") if not group[name]]
        if missing:
            raise exceptions.InvalidInput(
                f"The Swift plan store needs {', '.join(missing)} in the [swift] section "
                "of the configuration file.")
        return cls(group.auth_url, group.user, group.key, auth_version=group.auth_version,
                   project_name=group.project_name, user_domain_name=group.user_domain_name,
                   project_domain_name=group.project_domain_name,
                   upload_threads=group.upload_threads, retries=group.retries)

    def __repr__(self) -> str:
        return f"SwiftStore({self.auth_url!r}, user={self.user!r})"

    def close(self) -> None:
        """Close every pooled connection (the store stays usable)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def __enter__(self) -> SwiftStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- connections and errors ----------------------------------------------

    def connection_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``swiftclient.Connection`` (no token)."""
        return {"authurl": self.auth_url, "user": self.user, "key": self._key,
                "auth_version": self.auth_version, "os_options": dict(self.os_options),
                "retries": self.retries, "starting_backoff": 0.5, "max_backoff": 8}

    @contextlib.contextmanager
    def _connection(self) -> Iterator[swiftclient.Connection]:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
            auth = self._auth
        if conn is None:
            if self.auth_version == "3" and importlib.util.find_spec("keystoneclient") is None:
                raise exceptions.PlanStoreError(
                    "Keystone v3 authentication for Swift needs python-keystoneclient: "
                    "pip install python-keystoneclient keystoneauth1")
            kwargs = self.connection_kwargs()
            if auth is not None:
                kwargs.update(preauthurl=auth[0], preauthtoken=auth[1])
            conn = swiftclient.Connection(**kwargs)
        try:
            yield conn
        finally:
            with self._lock:
                if conn.url and conn.token:
                    self._auth = (conn.url, conn.token)
                self._idle.append(conn)

    def _call(self, what: str, target: str, func: Callable[..., _T], *args: Any,
              **kwargs: Any) -> _T:
        """Run ``func(conn, *args)``, translating errors other than 404."""
        with self._connection() as conn:
            try:
                return func(conn, *args, **kwargs)
            except ClientException as exc:
                if exc.http_status == 404:
                    raise
                raise self._error(what, target, exc) from exc
            except OSError as exc:  # requests' errors are OSErrors too
                raise self._error(what, target, exc) from exc

    def _error(self, what: str, target: str, exc: BaseException) -> exceptions.TripleoFlowError:
        status = getattr(exc, "http_status", None)
        if status == 400:
            return exceptions.InvalidInput(f"Swift refused to {what} {target}: "
                                           f"{_reason(exc)}")
        # swiftclient reports Keystone's answers (refused credentials, unreachable, no
        # object-store endpoint) as ClientExceptions with no HTTP status.
        if status in (401, 403) or _from_keystone(exc, "Unauthorized"):
            options = ("user, key, project_name, user_domain_name, project_domain_name"
                       if self.auth_version == "3" else "user, key")
            roles = (" With Keystone the user also needs one of the proxy's operator roles "
                     "(keystoneauth operator_roles) on that project."
                     if self.auth_version == "3" and status == 403 else "")
            return exceptions.PlanStoreError(
                f"Swift refused to {what} {target}: not authorized ({status or 401}). Check "
                f"{options} and auth_url ({self.auth_url}) in the [swift] section.{roles}")
        if _from_keystone(exc, "Authorization Failure", "Endpoint for"):
            return exceptions.PlanStoreError(
                f"Cannot {what} {target}: Keystone at {self.auth_url} gave no Swift token or "
                f"endpoint: {_reason(exc)}. Check that Keystone is running and reachable and "
                "that its catalog has an object-store endpoint, then try again.")
        return exceptions.PlanStoreError(
            f"Cannot {what} {target} in Swift at {self.auth_url}: {_reason(exc)}. Check that "
            "Swift is running and reachable, then try again.")

    def _head(self, container: str) -> dict[str, str]:
        _check_container(container)
        try:
            return self._call("read container", repr(container),
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
            _, listing = self._call("list containers", "of the account",
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
            self._call("create container", repr(container),
                       lambda c: c.put_container(container, headers=headers,
                                                 response_dict=response))
        except ClientException as exc:
            raise self._error("create container", repr(container), exc) from exc
        if response.get("status") == 202:  # created concurrently by someone else
            raise exceptions.ContainerExists(container)

    def get_container_metadata(self, container: str) -> dict[str, str]:
        return _metadata(self._head(container))

    def set_container_metadata(self, container: str, metadata: Mapping[str, str | None]) -> None:
        _check_container(container)
        headers = _meta_headers(metadata, removals=True)
        try:
            self._call("update metadata of container", repr(container),
                       lambda c: c.post_container(container, headers))
        except ClientException as exc:
            raise exceptions.ContainerNotFound(container) from exc

    def delete_container(self, container: str) -> None:
        headers = self._head(container)
        versioned = "x-versions-enabled" in headers  # enabled now or once
        enabled = headers.get("x-versions-enabled", "").lower() == "true"
        if enabled:
            # Swift deletes a versioned container only with versioning off.
            self._set_versioning(container, False)
        try:
            self._empty_and_delete(container, versioned)
        except BaseException:
            if enabled:  # leave a container we could not delete as it was
                with contextlib.suppress(ClientException, exceptions.TripleoFlowError):
                    self._set_versioning(container, True)
            raise

    def set_versioning(self, container: str, enabled: bool) -> None:
        _check_container(container)
        self._set_versioning(container, enabled)

    def _set_versioning(self, container: str, enabled: bool) -> None:
        value = "true" if enabled else "false"
        self._call("change versioning of container", repr(container),
                   lambda c: c.post_container(container, {"X-Versions-Enabled": value}))

    def _empty_and_delete(self, container: str, versioned: bool) -> None:
        last: exceptions.PlanStoreError | None = None
        for _attempt in range(3):
            if versioned:
                self._delete_versions(container, self._list_versions(container, ""))
            else:
                self.delete_objects(container, self.list_objects(container))
            try:
                self._call("delete container", repr(container),
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
            _, listing = self._call("list objects of container", repr(container),
                                    lambda c: c.get_container(container, prefix=prefix or None,
                                                              full_listing=True))
        except ClientException as exc:
            raise exceptions.ContainerNotFound(container) from exc
        return sorted(entry["name"] for entry in listing)

    def get_object(self, container: str, name: str, version_id: str | None = None) -> bytes:
        _check_container(container)
        _check_object(name)
        query = f"version-id={quote(version_id, safe='')}" if version_id is not None else None
        target = f"{name!r} in container {container!r}"
        try:
            return bytes(self._call("read object", target,
                                    lambda c: c.get_object(container, name,
                                                           query_string=query)[1]))
        except ClientException as exc:
            shown = name if version_id is None else f"{name}?version-id={version_id}"
            self._not_found(container, shown, exc)
        except exceptions.InvalidInput as exc:
            if version_id is None:  # Swift answers 400 to an unknown version id
                raise
            self._not_found(container, f"{name}?version-id={version_id}", exc)

    def put_object(self, container: str, name: str, data: bytes) -> None:
        _check_container(container)
        _check_object(name)
        try:
            self._call("write object", f"{name!r} in container {container!r}",
                       lambda c: c.put_object(container, name, data))
        except ClientException as exc:
            raise exceptions.ContainerNotFound(container) from exc

    def put_objects(self, container: str, objects: Mapping[str, bytes],
                    progress: CountListener | None = None) -> None:
        """Upload ``objects`` as tar archives, one parallel chunk per upload thread.

        :param progress: called with ``(bytes sent, bytes total)``; the bytes are
            those of the archives (objects plus their tar headers).
        :raises PlanStoreError: naming the objects Swift did not store.
        """
        for name in objects:
            _check_object(name)
        self._head(container)  # extract-archive would create a missing container
        if not objects:
            return
        if "bulk_upload" not in self._capabilities():
            self.put_objects_single(container, objects, progress)
            return
        parts = [(chunk, make_tar(chunk)) for chunk in split_evenly(objects, self.upload_threads)]
        meter = TransferMeter(sum(len(archive) for _, archive in parts), progress)
        failures = self._parallel(
            lambda part: self._extract_archive(container, part[0], part[1],
                                               meter.part(id(part[1]))), parts)
        raise_failures("upload", container, failures)

    def put_objects_single(self, container: str, objects: Mapping[str, bytes],
                           progress: CountListener | None = None) -> None:
        """Upload ``objects`` with one PUT each over parallel connections.

        The alternative to :meth:`put_objects` kept for ``bench/plan_upload.py``.
        """
        for name in objects:
            _check_object(name)
        self._head(container)
        meter = TransferMeter(sum(len(d) for d in objects.values()), progress)

        def put(name: str) -> Failures:
            try:
                self.put_object(container, name, objects[name])
            except exceptions.TripleoFlowError as exc:
                return [(name, str(exc))]
            meter.add(len(objects[name]))
            return []

        raise_failures("upload", container, self._parallel(put, list(objects)))

    def delete_object(self, container: str, name: str) -> None:
        _check_container(container)
        _check_object(name)
        try:
            self._call("delete object", f"{name!r} in container {container!r}",
                       lambda c: c.delete_object(container, name))
        except ClientException:
            self._head(container)  # missing object: fine; missing container: raise

    def delete_objects(self, container: str, names: Iterable[str]) -> None:
        names = list(names)
        for name in names:
            _check_object(name)
        self._head(container)
        bulk = self._capabilities().get("bulk_delete")
        if not bulk:
            raise_failures("delete", container,
                            self._parallel(lambda n: self._delete_one(container, n), names))
            return
        # Parallel batches: one bulk request deletes its objects one after another.
        size = min(_BULK_DELETE_MAX, int(bulk.get("max_deletes_per_request", _BULK_DELETE_MAX)),
                   max(1, -(-len(names) // self.upload_threads)))
        batches = [names[i:i + size] for i in range(0, len(names), size)]
        failures = self._parallel(lambda batch: self._bulk_delete(container, batch), batches)
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
        return [ObjectVersion(entry["version_id"], entry["last_modified"], int(entry["bytes"]),
                              bool(entry.get("is_latest")))
                for entry in self._list_versions(container, name)
                if entry["name"] == name and entry.get("content_type") != _DELETE_MARKER]

    # -- bulk helpers ------------------------------------------------------

    def _capabilities(self) -> dict[str, Any]:
        """The cluster's ``/info`` (empty when Swift does not publish it)."""
        if self._caps is None:
            def get(conn: swiftclient.Connection) -> dict[str, Any]:
                if not conn.url:
                    conn.url, conn.token = conn.get_auth()
                return dict(conn.get_capabilities())
            try:
                self._caps = self._call("read capabilities", "of the cluster", get)
            except (ClientException, exceptions.PlanStoreError):
                self._caps = {}  # no /info: fall back to single requests
        return self._caps

    def _parallel(self, func: Callable[[_T], Failures], items: list[_T]) -> Failures:
        if len(items) <= 1:
            return [failure for item in items for failure in func(item)]
        with ThreadPoolExecutor(min(self.upload_threads, len(items)),
                                thread_name_prefix="swift-store") as pool:
            return [failure for result in pool.map(func, items) for failure in result]

    def _extract_archive(self, container: str, objects: Mapping[str, bytes], archive: bytes,
                         sent: Callable[[int], None]) -> Failures:
        target = f"{len(objects)} objects in container {container!r}"
        try:
            body = self._call("upload", target, lambda c: c._retry(
                None, put_archive, container, archive, sent=sent))
        except ClientException:
            return [(name, f"container {container!r} does not exist") for name in objects]
        except exceptions.TripleoFlowError as exc:
            return [(name, str(exc)) for name in objects]
        return bulk_failures(body, container, "Number Files Created", len(objects))

    def _bulk_delete(self, container: str, names: list[str]) -> Failures:
        data = "\n".join(quote(f"/{container}/{name}") for name in names).encode()
        headers = {"Accept": "application/json", "Content-Type": "text/plain"}
        try:
            _, body = self._call("delete", f"{len(names)} objects in container {container!r}",
                                 lambda c: c.post_account(headers, query_string="bulk-delete",
                                                          data=data))
        except (ClientException, exceptions.TripleoFlowError) as exc:
            return [(name, str(exc)) for name in names]
        return bulk_failures(body, container, None, len(names))

    def _list_versions(self, container: str, prefix: str) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        marker: str | None = None
        version_marker: str | None = None
        while True:
            page: Callable[[swiftclient.Connection], tuple[Any, list[dict[str, Any]]]] = (
                functools.partial(_versions_page, container=container, prefix=prefix,
                                  marker=marker, version_marker=version_marker))
            try:
                _, listing = self._call("list versions in container", repr(container), page)
            except ClientException as exc:
                raise exceptions.ContainerNotFound(container) from exc
            entries.extend(listing)
            if len(listing) < _LISTING_LIMIT:
                return entries
            marker, version_marker = listing[-1]["name"], listing[-1]["version_id"]

    def _delete_versions(self, container: str, entries: list[dict[str, Any]]) -> None:
        def delete(entry: dict[str, Any]) -> Failures:
            query = f"version-id={quote(entry['version_id'], safe='')}"
            try:
                self._call("delete version of", repr(entry["name"]),
                           lambda c: c.delete_object(container, entry["name"],
                                                     query_string=query))
            except ClientException:
                pass  # already gone
            except exceptions.TripleoFlowError as exc:
                return [(entry["name"], str(exc))]
            return []

        raise_failures("delete", container, self._parallel(delete, entries))


# -- module helpers ------------------------------------------------------------


def _versions_page(conn: swiftclient.Connection, container: str, prefix: str,
                   marker: str | None, version_marker: str | None,
                   ) -> tuple[Any, list[dict[str, Any]]]:
    """One page of ``GET container?versions`` (names, then newest version first)."""
    return conn.get_container(container, marker=marker, version_marker=version_marker,
                              prefix=prefix or None, limit=_LISTING_LIMIT,
                              query_string="versions")


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


def _check_container(container: str) -> None:
    if not container or "/" in container or container in (".", ".."):
        raise exceptions.InvalidInput(f"Invalid container name {container!r}.")


def _check_object(name: str) -> None:
    parts = name.split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise exceptions.InvalidInput(f"Invalid object name {name!r}.")


def _from_keystone(exc: BaseException, *prefixes: str) -> bool:
    """Whether ``exc`` is swiftclient's report of a Keystone answer starting with one of
    ``prefixes`` (these carry no HTTP status)."""
    return (isinstance(exc, ClientException) and not exc.http_status
            and str(exc.msg).startswith(prefixes))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ClientException):
        status = f"{exc.http_status} {exc.http_reason}".strip() if exc.http_status else ""
        body = exc.http_response_content
        if isinstance(body, bytes):
            body = body.decode(errors="replace")
        detail = (body or exc.msg or "").strip()
        if detail.startswith("<html>"):
            detail = ""
        return ": ".join(filter(None, [status, detail[:200]])) or str(exc)
    return str(exc) or type(exc).__name__
