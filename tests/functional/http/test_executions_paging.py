"""GET /v1/executions pages (limit, marker, sort_dir): bounded answers over thousands
of executions, the whole list reached by following the Link rel="next" header, bad
paging values refused with 400; the store pages with SQL on SQLite and MariaDB."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from taskflow import states
from taskflow.persistence import models

from tests.fixtures_services import new_database
from tests.functional.http.conftest import Api, running_api
from tests.functional.mariadb import PrivateMariaDB
from tripleo_flow import exceptions
from tripleo_flow.engine.store.execution_backend import ExecutionBackend
from tripleo_flow.engine.store.executions import BOOK_NAME, ExecutionStore
from tripleo_flow.http.server import make_server

MANY = 3000
LINK = re.compile(r'<([^>]*)>\s*;\s*rel="?next"?')


def add_executions(store: ExecutionStore, count: int, workflow: str,
                   meta: dict[str, Any] | None = None) -> list[str]:
    """``count`` ended executions saved in one write (as fast as the database allows),
    with ``meta`` over their records' (an input, an output); their ids, oldest first."""
    book = models.LogBook(BOOK_NAME, uuid=store.book().uuid)
    ids = []
    now = time.time()
    for n in range(count):
        fd = models.FlowDetail(workflow, uuid=str(uuid.uuid4()))
        fd.state = states.SUCCESS
        fd.meta = {"workflow": workflow, "input": {"n": n}, "created_at": now + n,
                   "updated_at": now + n, "finished_at": now + n, **(meta or {})}
        book.add(fd)
        ids.append(fd.uuid)
    with store._conn() as conn:
        conn.save_logbook(book)
    return ids


def walk(api: Api, path: str) -> tuple[list[str], list[int]]:
    """Every execution id reached by following next links from ``path``, and the size
    in bytes of each answer."""
    ids: list[str] = []
    sizes = []
    next_path: str | None = path
    while next_path is not None:
        answer = api("GET", next_path)
        assert answer.status_code == 200, answer.text
        sizes.append(len(answer.content))
        ids += [e["id"] for e in answer.json()]
        link = LINK.search(answer.headers.get("Link", ""))
        next_path = link.group(1) if link else None
        assert len(sizes) <= MANY, "the next links never end"
    return ids, sizes


@pytest.fixture
def many(tmp_path: Path) -> Iterator[tuple[Api, list[str]]]:
    with running_api(tmp_path, {"api": {"executions_page_size": 50}}) as api:
        store = api.client._session.runner().store
        ids = add_executions(store, MANY, "tripleo.plan.noop")
        yield api, ids


def test_pages_are_bounded_and_following_them_reaches_every_execution(
        many: tuple[Api, list[str]]) -> None:
    api, ids = many
    first = api("GET", "/v1/executions")
    assert first.status_code == 200
    assert len(first.json()) == 50  # [api] executions_page_size, not 3000
    assert len(first.content) < 50_000
    listed, sizes = walk(api, "/v1/executions?limit=1000")
    assert sorted(listed) == sorted(ids) and len(set(listed)) == MANY  # each once
    assert len(sizes) == 3 and max(sizes) < 1_000_000
    newest_first, _ = walk(api, "/v1/executions?limit=700&sort_dir=desc")
    assert newest_first == listed[::-1]
    # The default page size is kept in the next links too; the filter as well.
    filtered, sizes = walk(api, "/v1/executions?workflow=noop")
    assert filtered == listed and len(sizes) == MANY // 50
    assert walk(api, "/v1/executions?workflow=other")[0] == []


def test_python_client_pages(many: tuple[Api, list[str]]) -> None:
    api, ids = many
    with pytest.raises(exceptions.InvalidInput, match="executions_page_max"):
        api.client.executions.page(limit=2000)
    first, marker = api.client.executions.page(limit=1000, sort_dir="desc")
    assert len(first) == 1000 and marker == first[-1].id
    seen = [e.id for e in first]
    while marker is not None:
        page, marker = api.client.executions.page(limit=1000, marker=marker, sort_dir="desc")
        seen += [e.id for e in page]
    assert sorted(seen) == sorted(ids) and len(set(seen)) == MANY


@pytest.mark.parametrize("query, words", [
    ("limit=0", "between 1 and 1000"),
    ("limit=-1", "positive whole number"),
    ("limit=abc", "positive whole number"),
    ("limit=1e3", "positive whole number"),
    ("limit=%EF%BC%91", "positive whole number"),  # a full-width digit one
    ("limit=1001", "executions_page_max"),
    ("limit=" + "9" * 5000, "positive whole number"),
    ("marker=nonexistent", "no execution id"),
    ("marker=%27%20OR%201%3D1%20--", "no execution id"),
    ("sort_dir=sideways", "'asc' or 'desc'"),
])
def test_bad_paging_values_get_400(api: Api, query: str, words: str) -> None:
    answer = api("GET", "/v1/executions?" + query)
    assert answer.status_code == 400, answer.text
    assert words in answer.text
    assert len(answer.text) < 2000


def test_an_unknown_marker_gets_404(api: Api) -> None:
    answer = api("GET", f"/v1/executions?marker={uuid.uuid4()}")
    assert answer.status_code == 404 and "first page" in answer.text


def test_the_last_execution_as_marker_gives_an_empty_last_page(
        many: tuple[Api, list[str]]) -> None:
    api, _ = many
    last = api("GET", "/v1/executions?limit=1&sort_dir=desc").json()[0]["id"]
    answer = api("GET", f"/v1/executions?marker={last}")
    assert answer.status_code == 200 and answer.json() == []
    assert "Link" not in answer.headers


@pytest.fixture(params=["sqlite", "mariadb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ExecutionStore]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'executions.sqlite'}"
    else:
        server: PrivateMariaDB = request.getfixturevalue("mariadb_server")
        name, where = new_database(server, "pages")
        url = f"mysql+pymysql://{where}/{name}"
    backend = ExecutionBackend(url)
    yield ExecutionStore(backend)
    backend.close()


def test_the_store_pages_with_sql(store: ExecutionStore) -> None:
    ids = add_executions(store, 1200, "tripleo.a.run")
    others = add_executions(store, 30, "tripleo.b.run")
    seen: list[str] = []
    marker = None
    queries: list[Any] = []
    while True:
        page, more = store.page(500, marker)
        queries.append(len(page))
        seen += [e.id for e in page]
        if not more:
            break
        marker = page[-1].id
    # Executions of one write share a row timestamp on MariaDB: the order is
    # total all the same (then by id), so pages neither skip nor repeat one.
    assert sorted(seen) == sorted(ids + others) and len(set(seen)) == len(seen)
    assert queries == [500, 500, 230]
    page, more = store.page(10, workflow="b.run")
    assert {e.id for e in page} <= set(others) and more
    with pytest.raises(exceptions.InvalidInput, match="at least 1"):
        store.page(0)
    with pytest.raises(exceptions.NotFound, match="first page"):
        store.page(5, marker=str(uuid.uuid4()))
    with pytest.raises(exceptions.InvalidInput, match="no execution id"):
        store.page(5, marker="x' OR 1=1")


def test_the_gui_lists_executions_newest_first_and_follows_pages(
        tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    from tests.functional.http.test_gui_browser import Shots, chromium_page

    with running_api(tmp_path, {"api": {"executions_page_size": 40}}) as api, \
            chromium_page() as raw_page:
        ids = add_executions(api.client._session.runner().store, 100, "tripleo.plan.noop")
        newest_first = [e.id for e in api.client.executions.page(100, sort_dir="desc")[0]]
        assert sorted(newest_first) == sorted(ids)
        page: Page = raw_page  # type: ignore[assignment]
        shot = Shots(page, tmp_path / "screenshots", "executions")
        page.goto(api.url + "/")
        page.get_by_label("API token").fill(api.token)
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("link", name="Executions", exact=True).click()
        rows = page.locator("main tbody tr")
        expect(rows).to_have_count(40)  # one page, not all 100
        more = page.get_by_role("button", name="Older executions")
        expect(more).to_be_visible()
        shot("first-page")
        more.click()
        expect(rows).to_have_count(80)
        more.click()
        expect(rows).to_have_count(100)
        expect(more).to_be_hidden()  # the last page has no next link
        shot("all-pages")
        assert rows.locator("td:first-child").all_inner_texts() == newest_first


def test_execution_list_pages_on_the_command_line(tmp_path: Path) -> None:
    from tests.unit.cli.test_cli import Cli

    backend = ExecutionBackend(f"sqlite:///{tmp_path / 'data' / 'executions.sqlite'}") \
        if (tmp_path / "data").mkdir() is None else None
    assert backend is not None
    ids = add_executions(ExecutionStore(backend), 250, "tripleo.plan.noop")
    backend.close()
    cli = Cli(tmp_path)
    first = cli("execution", "list", "--limit", "200", "-f", "json")
    listed = [row["ID"] for row in json.loads(first.stdout)]
    assert len(listed) == 200
    marker = re.search(r"--marker (\S+)", first.stderr)
    assert marker is not None and marker.group(1) == listed[-1]
    rest = cli("execution", "list", "--limit", "200", "--marker", marker.group(1), "-f", "json")
    listed += [row["ID"] for row in json.loads(rest.stdout)]
    assert "--marker" not in rest.stderr
    assert sorted(listed) == sorted(ids)
    assert len(cli.json("execution", "list")) == 100  # [api] executions_page_size
    refused = cli("execution", "list", "--limit", "5000", ok=False)
    assert refused.returncode != 0 and "executions_page_max" in refused.stderr
    refused = cli("execution", "list", "--marker", "nope", ok=False)
    assert refused.returncode != 0 and "no execution id" in refused.stderr


class Statements:
    """The SELECTs of the executions table the database is sent while the block runs."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.selects: list[str] = []

    def _seen(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "flowdetails" in statement:
            self.selects.append(" ".join(statement.split()))

    def __enter__(self) -> Statements:
        sa.event.listen(self.engine, "before_cursor_execute", self._seen)
        return self

    def __exit__(self, *exc: object) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._seen)

    def unbounded(self) -> list[str]:
        """Those that may read every execution (no LIMIT, not one row by its id)."""
        return [s for s in self.selects if " LIMIT " not in s.upper()
                and "flowdetails.uuid = " not in s]


def test_list_executions_reads_page_by_page(tmp_path: Path) -> None:
    """Client.executions.list() reads [api] executions_page_max at a time (it read every
    execution in one query): all of them, oldest first, the filter in SQL."""
    with running_api(tmp_path, {"api": {"executions_page_max": 40}}) as api:
        store = api.client._session.runner().store
        ids = add_executions(store, 50, "tripleo.plan.noop")
        ids += add_executions(store, 45, "mine.other")
        with Statements(store.backend.engine) as statements:
            listed = api.client.executions.list()
            noop = api.client.executions.list("noop")
            other = api.client.executions.list("mine.other")
        assert sorted(e.id for e in listed) == sorted(ids) and len(listed) == len(ids)
        assert sorted(e.id for e in noop) == sorted(ids[:50])
        assert sorted(e.id for e in other) == sorted(ids[50:])
        first, _ = api.client.executions.page(limit=40)
        assert [e.id for e in listed[:40]] == [e.id for e in first]  # in the pages' order
        assert statements.selects and statements.unbounded() == []
        assert len(statements.selects) >= 3 + 2 + 2  # pages of 40


def test_the_server_warms_up_without_reading_every_execution(tmp_path: Path) -> None:
    with running_api(tmp_path) as api:
        store = api.client._session.runner().store
        add_executions(store, 500, "tripleo.plan.noop")
        with Statements(store.backend.engine) as statements:
            make_server(api.client, "127.0.0.1", 0, threads=2).close()
        assert statements.unbounded() == [], statements.unbounded()
