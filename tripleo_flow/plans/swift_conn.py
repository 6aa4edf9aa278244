"""Connections to Swift for the plan store: auth, a pool, error translation.

:class:`SwiftSession` opens python-swiftclient connections lazily and keeps
them in a small pool, one per thread that needs one (a swiftclient
``Connection`` is not thread-safe); they share one auth token.
:meth:`SwiftSession.call` runs one request on a pooled connection and turns
swiftclient's errors into tripleo-flow's, except 404, which only the caller
can name (a missing container, object or version).
"""

from __future__ import annotations

import contextlib
import importlib.util
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from oslo_config import cfg
from swiftclient import client as swiftclient
from swiftclient.exceptions import ClientException

from tripleo_flow import exceptions
from tripleo_flow.plans.swift_bulk import Failures

_T = TypeVar("_T")


class SwiftSession:
    """Pooled, authenticated connections to one Swift account.

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
    :raises InvalidInput: for an auth_version other than "1" or "3".
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

    def connection_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``swiftclient.Connection`` (no token)."""
        return {"authurl": self.auth_url, "user": self.user, "key": self._key,
                "auth_version": self.auth_version, "os_options": dict(self.os_options),
                "retries": self.retries, "starting_backoff": 0.5, "max_backoff": 8}

    def close(self) -> None:
        """Close every pooled connection (the session stays usable)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

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

    def call(self, what: str, target: str, func: Callable[..., _T], *args: Any,
             **kwargs: Any) -> _T:
        """Run ``func(conn, *args, **kwargs)`` on a pooled connection.

        :param what: the operation, for messages (``"read object"``).
        :param target: what it works on, for messages (``"'a.yaml' in container 'c'"``).
        :raises ClientException: for HTTP 404, which the caller names.
        :raises InvalidInput: when Swift answers 400.
        :raises PlanStoreError: for any other failure.
        """
        with self._connection() as conn:
            try:
                return func(conn, *args, **kwargs)
            except ClientException as exc:
                if exc.http_status == 404:
                    raise
                raise self.error(what, target, exc) from exc
            except OSError as exc:  # requests' errors are OSErrors too
                raise self.error(what, target, exc) from exc

    def error(self, what: str, target: str, exc: BaseException) -> exceptions.TripleoFlowError:
        """The tripleo-flow error for a failed request (to raise ``from exc``)."""
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

    def capabilities(self) -> dict[str, Any]:
        """The cluster's ``/info`` (empty when Swift does not publish it)."""
        if self._caps is None:
            def get(conn: swiftclient.Connection) -> dict[str, Any]:
                if not conn.url:
                    conn.url, conn.token = conn.get_auth()
                return dict(conn.get_capabilities())
            try:
                self._caps = self.call("read capabilities", "of the cluster", get)
            except (ClientException, exceptions.PlanStoreError):
                self._caps = {}  # no /info: fall back to single requests
        return self._caps

    def parallel(self, func: Callable[[_T], Failures], items: Iterable[_T]) -> Failures:
        """``func`` on each item, up to ``upload_threads`` at a time; all their failures.

        Each item starts as soon as ``items`` yields it, so a generator can check an
        item while earlier ones run.  When ``items`` raises, no further item starts:
        the calls under way are waited for, their failures dropped, and the error raised.
        """
        if isinstance(items, list) and len(items) <= 1:
            return [failure for item in items for failure in func(item)]
        with ThreadPoolExecutor(self.upload_threads, thread_name_prefix="swift-store") as pool:
            futures = []
            try:
                for item in items:
                    futures.append(pool.submit(func, item))
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            return [failure for future in futures for failure in future.result()]


def options_from_conf(conf: cfg.ConfigOpts) -> dict[str, Any]:
    """:class:`SwiftSession` keyword arguments from the ``[swift]`` group of ``conf``.

    :raises InvalidInput: when auth_url, user or key is missing.
    """
    group = conf.swift
    missing = [name for name in ("auth_url", "user", "key") if not group[name]]
    if missing:
        raise exceptions.InvalidInput(
            f"The Swift plan store needs {', '.join(missing)} in the [swift] section "
            "of the configuration file.")
    return {"auth_url": group.auth_url, "user": group.user, "key": group.key,
            "auth_version": group.auth_version, "project_name": group.project_name,
            "user_domain_name": group.user_domain_name,
            "project_domain_name": group.project_domain_name,
            "upload_threads": group.upload_threads, "retries": group.retries}


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
