"""``GET /v1/executions`` answers are bounded in bytes, not only in count (issue 29: 7
executions carrying large values made a 38.8 MB page): as Mistral's list, the
executions come without their output unless ``include_output=true``, and a page ends
early when its executions' records take over ``[api] executions_page_max_bytes``;
``GET /v1/executions/{id}`` keeps everything."""

from __future__ import annotations

from pathlib import Path

from tests.functional.http.conftest import running_api
from tests.functional.http.test_executions_paging import (  # noqa: F401 (a fixture)
    add_executions,
    store,
    walk,
)
from tripleo_flow.config import API_OPTS
from tripleo_flow.engine.store.executions import ExecutionStore

PAGE_BYTES = next(o.default for o in API_OPTS if o.name == "executions_page_max_bytes")
MB = 1 << 20


def add_large(executions: ExecutionStore, count: int, input_size: int,
              output_size: int) -> list[str]:
    """``count`` ended executions with an input and an output of these sizes (as
    executions recorded before ``[limits] input_max_size``, or whose workflow
    returned that much); their ids, oldest first."""
    return add_executions(executions, count, "tripleo.plan.big", {
        "input": {"v": "i" * input_size}, "output": {"result": "o" * output_size}})


def test_the_list_leaves_outputs_out_unless_asked(tmp_path: Path) -> None:
    with running_api(tmp_path) as api:
        ids = add_large(api.client._session.runner().store, 7, 100, 3 * MB)
        answer = api("GET", "/v1/executions", params={"limit": 1000})
        assert answer.status_code == 200, answer.text[:300]
        assert all("output" not in e and e["input"] == {"v": "i" * 100}
                   for e in answer.json())
        assert len(answer.content) < 16 << 10  # not 21 MB
        # (a page holds what the server reads within the bound: the records, outputs
        # included, past it are not read)
        listed, sizes = walk(api, "/v1/executions?limit=1000")
        assert listed == ids and max(sizes) < 16 << 10
        # Mistral's include_output: the outputs, within the page's byte bound
        with_output, sizes = walk(api, "/v1/executions?include_output=true&limit=1000")
        assert with_output == ids and len(sizes) == 4  # 2 + 2 + 2 + 1 of them
        assert max(sizes) <= PAGE_BYTES
        page = api("GET", "/v1/executions", params={"include_output": "true"}).json()
        assert page[0]["output"] == {"result": "o" * 3 * MB}
        # one execution keeps everything
        one = api("GET", f"/v1/executions/{ids[0]}").json()
        assert one["output"] == {"result": "o" * 3 * MB}
        assert api("GET", "/v1/executions", params={"include_output": "maybe"}) \
            .status_code == 400


def test_pages_end_within_the_byte_bound(tmp_path: Path) -> None:
    """Large inputs (kept in the list, as Mistral's): each page holds what fits in
    [api] executions_page_max_bytes, one at least; the next links reach every one."""
    with running_api(tmp_path, {"api": {"executions_page_max_bytes": 5 * MB}}) as api:
        ids = add_large(api.client._session.runner().store, 7, 2 * MB, 10)
        listed, sizes = walk(api, "/v1/executions?limit=1000")
        assert listed == ids
        assert len(sizes) == 4 and max(sizes) <= 5 * MB  # 2 + 2 + 2 + 1 of them
        first, marker = api.client.executions.page(limit=1000)
        assert len(first) == 2 and marker == first[-1].id
    with running_api(tmp_path / "one", {"api": {"executions_page_max_bytes": MB}}) as api:
        ids = add_large(api.client._session.runner().store, 3, 2 * MB, 10)
        listed, sizes = walk(api, "/v1/executions")
        assert listed == ids and len(sizes) == 3  # one a page, each larger than the bound


def test_the_store_reads_only_what_fits(store: ExecutionStore) -> None:  # noqa: F811
    ids = add_large(store, 5, MB, 10)
    page, more = store.page(100, max_bytes=3 * MB)
    assert [e.id for e in page] == ids[:2] and more
    page, more = store.page(100, marker=ids[1], max_bytes=3 * MB, descending=True)
    assert [e.id for e in page] == ids[:1] and not more
    page, more = store.page(100, max_bytes=0)
    assert [e.id for e in page] == ids and not more
    page, more = store.page(3, max_bytes=100 * MB)
    assert [e.id for e in page] == ids[:3] and more
