"""Swift object versioning for the plan store: listings, deletion, the switch.

A versioned container (``X-Versions-Enabled: true``) keeps every version of
its objects.  ``GET container?versions`` lists them in pages, by name and then
newest version first, delete markers included; an entry is a dict with
``name``, ``version_id``, ``last_modified``, ``bytes``, ``content_type`` and
``is_latest``.

A version id is a Swift timestamp (``1700000000.12345``, with an optional
``_`` and 16 hex digits of offset) or ``null`` (an object written while
versioning was off): :func:`is_version_id` checks that shape before an id
reaches Swift.  :func:`prune` keeps the newest versions of objects.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote

from swiftclient import client as swiftclient
from swiftclient.exceptions import ClientException

from tripleo_flow import exceptions
from tripleo_flow.plans.store import ObjectVersion
from tripleo_flow.plans.swift_bulk import Failures, raise_failures
from tripleo_flow.plans.swift_conn import SwiftSession

_DELETE_MARKER = "application/x-deleted;swift_versions_deleted=1"
_LISTING_LIMIT = 10000
_VERSION_ID = re.compile(r"^(null|[0-9]{10}\.[0-9]{5}(_[0-9a-f]{16})?)$")


def is_version_id(version_id: object) -> bool:
    """Whether ``version_id`` has the shape of an id Swift issues."""
    return isinstance(version_id, str) and bool(_VERSION_ID.fullmatch(version_id))


def prune(session: SwiftSession, container: str, names: list[str], keep: int) -> None:
    """Delete the versions of ``names`` past the ``keep`` newest (current one included).

    One listing covers every name (by their common prefix); delete markers older
    than the oldest kept version go too.  Nothing happens in an unversioned
    container, whose listing holds one entry per object.
    """
    if not names:
        return
    wanted = set(names)
    prefix = names[0] if len(wanted) == 1 else os.path.commonprefix(sorted(wanted))
    seen: dict[str, int] = {}
    excess = []
    for entry in list_versions(session, container, prefix):  # newest first per name
        if entry["name"] not in wanted:
            continue
        if seen.get(entry["name"], 0) >= keep:
            excess.append(entry)
        elif entry.get("content_type") != _DELETE_MARKER:
            seen[entry["name"]] = seen.get(entry["name"], 0) + 1
    if excess:
        delete_versions(session, container, excess)


def list_versions(session: SwiftSession, container: str, prefix: str) -> list[dict[str, Any]]:
    """Every version entry of the objects whose names start with ``prefix``.

    :raises ContainerNotFound: when the container does not exist.
    """
    entries: list[dict[str, Any]] = []
    marker: str | None = None
    version_marker: str | None = None
    while True:
        page: Callable[[swiftclient.Connection], tuple[Any, list[dict[str, Any]]]] = (
            functools.partial(_versions_page, container=container, prefix=prefix,
                              marker=marker, version_marker=version_marker))
        try:
            _, listing = session.call("list versions in container", repr(container), page)
        except ClientException as exc:
            raise exceptions.ContainerNotFound(container) from exc
        entries.extend(listing)
        if len(listing) < _LISTING_LIMIT:
            return entries
        marker, version_marker = listing[-1]["name"], listing[-1]["version_id"]


def object_versions(entries: Iterable[dict[str, Any]], name: str) -> list[ObjectVersion]:
    """The versions of object ``name`` among ``entries`` (delete markers left out)."""
    return [ObjectVersion(entry["version_id"], entry["last_modified"], int(entry["bytes"]),
                          bool(entry.get("is_latest")))
            for entry in entries
            if entry["name"] == name and entry.get("content_type") != _DELETE_MARKER]


def delete_versions(session: SwiftSession, container: str,
                    entries: list[dict[str, Any]]) -> None:
    """Delete each version in ``entries`` (one already gone is fine).

    :raises PlanStoreError: naming the versions Swift did not delete.
    """
    def delete(entry: dict[str, Any]) -> Failures:
        query = f"version-id={quote(entry['version_id'], safe='')}"
        try:
            session.call("delete version of", repr(entry["name"]),
                         lambda c: c.delete_object(container, entry["name"],
                                                   query_string=query))
        except ClientException:
            pass  # already gone
        except exceptions.TripleoFlowError as exc:
            return [(entry["name"], str(exc))]
        return []

    raise_failures("delete", container, session.parallel(delete, entries))


def set_versioning(session: SwiftSession, container: str, enabled: bool) -> None:
    """Turn object versioning of ``container`` on or off."""
    value = "true" if enabled else "false"
    session.call("change versioning of container", repr(container),
                 lambda c: c.post_container(container, {"X-Versions-Enabled": value}))


def _versions_page(conn: swiftclient.Connection, container: str, prefix: str,
                   marker: str | None, version_marker: str | None,
                   ) -> tuple[Any, list[dict[str, Any]]]:
    """One page of ``GET container?versions`` (names, then newest version first)."""
    return conn.get_container(container, marker=marker, version_marker=version_marker,
                              prefix=prefix or None, limit=_LISTING_LIMIT,
                              query_string="versions")
