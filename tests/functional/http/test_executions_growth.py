"""The executions database stays bounded per request (issue 29: one 50 MB parameter
value grew it by ~150 MB a request): the largest value ``[limits]
parameters_max_size`` lets through grows it by at most :data:`GROWTH_BOUND` a
time on average, one character more is refused with nothing written, and ``GET
/v1/executions`` answers a bounded page of them."""

from __future__ import annotations

import re
from pathlib import Path

from tests.functional.http.conftest import Api, finished, running_api
from tripleo_flow.common.value_limits import json_size
from tripleo_flow.config import LIMITS_OPTS

UPDATE = "/v1/workflows/tripleo.parameters.update_parameters/executions"
LIMIT = next(o.default for o in LIMITS_OPTS if o.name == "parameters_max_size")
#: How much the executions database (SQLite file and its write-ahead log) may grow,
#: on average, per parameter change carrying the largest value the default limit
#: allows. An execution record keeps the value in its input and output, in the
#: task's inputs, result (the value it replaced: an undo record), published values
#: and context (the input and what it published), and in the end's result: 8 copies
#: of 1 MiB, 8.4 MB a request measured (11 copies, 11.5-13.6 MB, when the start
#: context and the end's context were kept too). 10 copies leave room for the log's
#: page overhead; a copy more per request goes past it.
GROWTH_BOUND = 10 * LIMIT
#: The most one request may grow it (the write-ahead log grows by steps).
GROWTH_STEP_BOUND = 12 * LIMIT
REQUESTS = 3
LINK = re.compile(r'<([^>]*)>\s*;\s*rel="?next"?')


def _value(api: Api, fill: str, extra: int = 0) -> dict[str, str]:
    """``{"NtpServer": fill * n}`` taking exactly the default limit as the API counts
    (``extra`` characters more)."""
    overhead = json_size({"NtpServer": ""}, LIMIT)
    return {"NtpServer": fill * (LIMIT - overhead + extra)}


def _db_size(api: Api) -> int:
    data = Path(api.client.data_dir)
    return sum(f.stat().st_size for f in data.glob("executions.sqlite*")
               if not f.name.endswith("-shm"))  # the shared-memory index holds no rows


def test_largest_values_grow_the_executions_database_boundedly(tmp_path: Path) -> None:
    with running_api(tmp_path) as api:
        assert api.client.conf.limits.parameters_max_size == LIMIT
        assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}) \
            .status_code == 201
        growths = []
        for n in range(REQUESTS):
            before = _db_size(api)
            changed = api("PUT", "/v1/plans/p/parameters",
                          json={"parameters": _value(api, "abc"[n])})
            assert changed.status_code == 200, changed.text[:300]
            growths.append(_db_size(api) - before)
        # the same through the workflow itself
        before = _db_size(api)
        started = api("POST", UPDATE, json={"input": {"plan": "p", "parameters": _value(
            api, "d")}})
        assert started.status_code == 202, started.text[:300]
        assert finished(api, started.json()["id"])["state"] == "SUCCESS"
        growths.append(_db_size(api) - before)
        assert all(0 < g <= GROWTH_STEP_BOUND for g in growths), (growths, GROWTH_STEP_BOUND)
        assert sum(growths) / len(growths) <= GROWTH_BOUND, (growths, GROWTH_BOUND)

        # one character over: refused, nothing written
        listed = api("GET", "/v1/executions", params={"limit": 1000}).json()
        before = _db_size(api)
        refused = api("PUT", "/v1/plans/p/parameters",
                      json={"parameters": _value(api, "e", extra=1)})
        assert refused.status_code == 400, refused.text[:300]
        assert "[limits] parameters_max_size" in refused.json()["error"]["message"]
        assert _db_size(api) == before
        assert [e["id"] for e in api("GET", "/v1/executions",
                                     params={"limit": 1000}).json()] \
            == [e["id"] for e in listed]
        assert api("GET", "/v1/plans/p/parameters").json()["NtpServer"][0] == "d"


def test_the_executions_list_is_paged(tmp_path: Path) -> None:
    """Pages of ``limit`` executions, each carrying values within the limit: a page's
    answer is bounded by the page size times what one execution may hold (its input
    and the value it replaced, each at most the limit), the rest reached by the next
    link."""
    with running_api(tmp_path, {"api": {"executions_page_size": 2}}) as api:
        assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}) \
            .status_code == 201
        for fill in "abcde":
            assert api("PUT", "/v1/plans/p/parameters",
                       json={"parameters": _value(api, fill)}).status_code == 200
        every = []
        path: str | None = "/v1/executions"
        while path is not None:
            page = api("GET", path)
            assert page.status_code == 200, page.text[:300]
            assert 1 <= len(page.json()) <= 2  # [api] executions_page_size
            assert len(page.content) <= 2 * (2 * LIMIT + (64 << 10))
            every += [e["id"] for e in page.json()]
            link = LINK.search(page.headers.get("Link", ""))
            path = link.group(1) if link else None
            assert len(every) <= 100, "the next links never end"
        assert len(every) == len(set(every)) == 6  # the plan's creation and 5 changes
        over = api("GET", "/v1/executions", params={"limit": 1001})
        assert over.status_code == 400, over.text[:300]  # [api] executions_page_max
