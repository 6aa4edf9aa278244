"""One page of the executions list, read with SQL ``LIMIT`` (never every row).

Executions are ordered by their row's creation time, then id (so the order is
total and a page boundary never skips or repeats one, even when several
executions share a timestamp); a page starts after the execution whose id is
the ``marker``, as Mistral's ``GET /v2/executions`` pages.
"""

from __future__ import annotations

import re
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.engine.lang.action_workflows import PREFIX as ACTION_RUN

#: An execution id (what a marker must be).
UUID_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
UUID = re.compile(UUID_PATTERN)


def check_page(limit: int, maximum: int, sort_dir: str) -> int:
    """``limit``, checked against ``maximum`` (``[api] executions_page_max``), and
    ``sort_dir`` (``asc`` or ``desc``).

    :raises InvalidInput: either is out of range
    """
    if not 1 <= limit <= maximum:
        raise exceptions.InvalidInput(
            f"The page size must be between 1 and {maximum} ([api] executions_page_max), "
            f"not {limit}.")
    if sort_dir not in ("asc", "desc"):
        raise exceptions.InvalidInput(
            f"The sort direction must be 'asc' or 'desc', not {sort_dir!r}.")
    return limit


def check_request(limit: int, marker: str | None) -> None:
    """Check a page request as both readers of the executions database do.

    :raises InvalidInput: ``limit`` below 1, or ``marker`` is no execution id
    """
    if limit < 1:
        raise exceptions.InvalidInput(f"The page size must be at least 1, not {limit}.")
    if marker is not None and not UUID.fullmatch(marker):
        raise exceptions.InvalidInput(
            f"The marker {marker[:60]!r} is no execution id: pass the id of the last "
            "execution of the previous page.")


def marker_not_found(marker: str) -> exceptions.NotFound:
    """The error of a page request whose ``marker`` names no execution."""
    return exceptions.NotFound(
        f"The marker {marker!r} is no execution (deleted, or of another "
        "database): start again from the first page.")


def flow_page(conn: Any, book_uuid: str, limit: int, marker: str | None = None,
              workflow: str | None = None, descending: bool = False,
              max_bytes: int = 0) -> tuple[list[Any], bool]:
    """Up to ``limit`` lazy flow details of the book, and whether more follow.

    With ``max_bytes`` (``[api] executions_page_max_bytes``), the page also ends
    before the execution whose stored record (its meta: input, output, error...)
    would take the page's records past that many bytes, and always holds one: the
    sizes are read first, so the records past the bound are never loaded.

    :param conn: a TaskFlow SQLAlchemy connection of the executions database
    :param marker: the id of the last execution of the previous page
    :param workflow: only executions of this workflow (its full name, or its name
        without the workbook: ``deploy`` matches ``tripleo.deployment.deploy``)
    :raises InvalidInput: ``limit`` below 1, or ``marker`` is no execution id
    :raises NotFound: no execution has the id ``marker``
    """
    # Imported here: the API's checks of a page request (check_page, UUID_PATTERN) load
    # without SQLAlchemy and TaskFlow.
    import sqlalchemy as sa
    from taskflow.persistence import models

    check_request(limit, marker)
    flush = getattr(conn, "flush", None)
    if flush is not None:
        flush()  # a connection that defers writes shows them first
    table = conn._tables.flowdetails
    query = sa.select(table).where(table.c.parent_uuid == book_uuid)
    if workflow:
        # a short name is no part of an action run's name (action:heat.launch)
        query = query.where(sa.or_(table.c.name == workflow, sa.and_(
            table.c.name.endswith("." + workflow, autoescape=True),
            sa.not_(table.c.name.startswith(ACTION_RUN, autoescape=True)))))
    with conn._engine.connect() as db:
        if marker is not None:
            after = db.execute(sa.select(table.c.created_at, table.c.uuid).where(
                table.c.parent_uuid == book_uuid, table.c.uuid == marker)).first()
            if after is None:
                raise marker_not_found(marker)
            later = sa.or_(table.c.created_at > after.created_at,
                           sa.and_(table.c.created_at == after.created_at,
                                   table.c.uuid > after.uuid))
            earlier = sa.or_(table.c.created_at < after.created_at,
                             sa.and_(table.c.created_at == after.created_at,
                                     table.c.uuid < after.uuid))
            query = query.where(earlier if descending else later)
        order = (table.c.created_at.desc(), table.c.uuid.desc()) if descending \
            else (table.c.created_at.asc(), table.c.uuid.asc())
        sizes = db.execute(query.with_only_columns(
            table.c.uuid, sa.func.coalesce(sa.func.length(table.c.meta), 0))
            .order_by(*order).limit(limit + 1)).all()
        chosen = within(sizes, limit, max_bytes)
        rows = {row.uuid: row for row in db.execute(
            sa.select(table).where(table.c.uuid.in_(chosen)).limit(len(chosen))).all()} \
            if chosen else {}
    details = [models.FlowDetail.from_dict(dict(rows[uuid]._mapping))
               for uuid in chosen if uuid in rows]
    return details, len(sizes) > len(chosen)


def within(sizes: list[Any], limit: int, max_bytes: int) -> list[str]:
    """The ids of the first ``(uuid, size)`` rows that fit: at most ``limit``, and
    (``max_bytes`` > 0) at most ``max_bytes`` in all but always the first."""
    chosen: list[str] = []
    total = 0
    for uuid, size in sizes[:limit]:
        total += int(size)
        if chosen and max_bytes and total > max_bytes:
            break
        chosen.append(uuid)
    return chosen
