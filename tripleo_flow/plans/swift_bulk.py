"""Bulk requests for the Swift plan store: tar archives and bulk answers.

Swift's bulk middleware extracts a tar archive into a container
(``PUT container?extract-archive=tar``) and deletes many objects in one
request (``POST ?bulk-delete``).  Both always answer HTTP 200 once they have
started: the outcome, with each failed object, is in the JSON body
(:func:`bulk_failures`).  :func:`upload_archive` and :func:`bulk_delete` make
those requests through a :class:`~tripleo_flow.plans.swift_conn.SwiftSession`
and return the failed objects instead of raising, so that parallel requests
can be reported together (:func:`raise_failures`).
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from swiftclient.exceptions import ClientException

from tripleo_flow import exceptions
from tripleo_flow.plans.transfer import CountingReader

if TYPE_CHECKING:
    from tripleo_flow.plans.swift_conn import SwiftSession

Failures = list[tuple[str, str]]
"""(object name, reason) for each object a request did not store or delete."""


def put_archive(url: str, token: str, container: str, archive: bytes,
                http_conn: tuple[Any, Any], service_token: str | None = None,
                sent: Callable[[int], None] | None = None) -> bytes:
    """PUT ``archive`` to ``container?extract-archive=tar``; return the JSON body.

    A function for ``Connection._retry`` (retries, re-authentication), like
    swiftclient's own request functions.  ``sent`` is told how many bytes of
    the archive have gone out; each attempt sends (and counts) from the start.
    """
    parsed, conn = http_conn
    path = f"{parsed.path}/{quote(container)}?extract-archive=tar"
    headers = {"X-Auth-Token": token, "Accept": "application/json",
               "Content-Type": "application/x-tar", "Content-Length": str(len(archive))}
    conn.request("PUT", path, CountingReader(archive, sent), headers)
    resp = conn.getresponse()
    body = resp.read()
    if not 200 <= resp.status < 300:
        raise ClientException.from_response(resp, "Archive upload failed", body)
    return bytes(body)


def upload_archive(session: SwiftSession, container: str, objects: Mapping[str, bytes],
                   archive: bytes, sent: Callable[[int], None]) -> Failures:
    """Extract ``archive`` (the tar of ``objects``) into ``container``; the failures."""
    target = f"{len(objects)} objects in container {container!r}"
    try:
        body = session.call("upload", target, lambda c: c._retry(
            None, put_archive, container, archive, sent=sent))
    except ClientException:
        return [(name, f"container {container!r} does not exist") for name in objects]
    except exceptions.TripleoFlowError as exc:
        return [(name, str(exc)) for name in objects]
    return bulk_failures(body, container, "Number Files Created", len(objects))


def bulk_delete(session: SwiftSession, container: str, names: list[str]) -> Failures:
    """Delete ``names`` from ``container`` in one ``POST ?bulk-delete``; the failures."""
    data = "\n".join(quote(f"/{container}/{name}") for name in names).encode()
    headers = {"Accept": "application/json", "Content-Type": "text/plain"}
    try:
        _, body = session.call("delete", f"{len(names)} objects in container {container!r}",
                               lambda c: c.post_account(headers, query_string="bulk-delete",
                                                        data=data))
    except (ClientException, exceptions.TripleoFlowError) as exc:
        return [(name, str(exc)) for name in names]
    return bulk_failures(body, container, None, len(names))


def bulk_failures(body: bytes, container: str, count_key: str | None,
                   expected: int) -> Failures:
    """Failed names in a bulk middleware answer (always HTTP 200: read the body)."""
    try:
        result = json.loads(body)
    except ValueError:
        return [(f"{expected} objects",
                 f"unreadable bulk answer {body[:200].decode(errors='replace')!r}")]
    failures = []
    for path, status in result.get("Errors") or []:
        name = unquote(path).lstrip("/")
        name = name[len(container) + 1:] if name.startswith(container + "/") else name
        failures.append((name, status))
    status = str(result.get("Response Status", ""))
    if not failures and not status.startswith("2"):
        failures.append((f"{expected} objects", f"{status} {result.get('Response Body', '')}"))
    elif count_key and not failures and int(result.get(count_key, 0)) != expected:
        failures.append((f"{expected} objects", f"only {result.get(count_key)} stored"))
    return failures


def raise_failures(what: str, container: str, failures: Failures) -> None:
    """Raise PlanStoreError naming the failed objects, grouped by reason."""
    if not failures:
        return
    by_reason: dict[str, list[str]] = {}
    for name, reason in failures:
        by_reason.setdefault(reason, []).append(name)
    parts = []
    for reason, names in by_reason.items():
        shown = ", ".join(repr(name) for name in names[:5])
        more = f" and {len(names) - 5} more" if len(names) > 5 else ""
        parts.append(f"{shown}{more} ({reason})")
    raise exceptions.PlanStoreError(
        f"Could not {what} {len(failures)} object(s) in container {container!r}: "
        f"{'; '.join(parts)}. Check the Swift proxy logs, then try again.")


def split_evenly(objects: Mapping[str, bytes], parts: int) -> list[dict[str, bytes]]:
    """Split into ``parts`` chunks of about equal size (largest objects first)."""
    parts = max(1, min(parts, len(objects)))
    chunks: list[dict[str, bytes]] = [{} for _ in range(parts)]
    sizes = [0] * parts
    for name in sorted(objects, key=lambda n: len(objects[n]), reverse=True):
        index = sizes.index(min(sizes))
        chunks[index][name] = objects[name]
        sizes[index] += len(objects[name]) + 512  # a tar header per member
    return chunks


def make_tar(objects: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in objects.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
