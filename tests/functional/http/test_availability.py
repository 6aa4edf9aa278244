"""One API writer, or nobody, must not take the API down (issue 29): each attack runs
against the real server (waitress on 127.0.0.1, 4 request threads) while another
client keeps asking it questions, and every question gets its answer."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.engine_helpers import WORKBOOKS
from tests.functional.http.conftest import Api, finished, running_api
from tests.functional.http.test_api import tarball
from tests.plan_trees import write_tree

GZIP = {"Content-Type": "application/gzip"}
#: What an attack may delay another client's answer by, at most (the limits under
#: test are 1 s; without them the answers never come).
PATIENCE = 15.0
NESTED_LOOPS = ("x: {% for i in range(100000) %}{% for j in range(100000) %}"
                "{% endfor %}{% endfor %}1\n")
SLOW_YAQL = "<% range(0, 100000).select(range(0, 100000).len()).sum() %>"


class Bystander:
    """Another client asking ``GET /v1/openapi.json`` over and over in a thread, each
    answer within :data:`PATIENCE` seconds; :meth:`stop` returns how many it got."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.answers: list[int] = []
        self.failure: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._ask, daemon=True)

    def _ask(self) -> None:
        with requests.Session() as session:
            while not self._stop.is_set():
                try:
                    response = session.get(self.api.url + "/v1/openapi.json",
                                           timeout=PATIENCE)
                except requests.RequestException as exc:
                    self.failure = exc
                    return
                self.answers.append(response.status_code)
                time.sleep(0.05)

    def __enter__(self) -> Bystander:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(PATIENCE + 5)

    def check(self) -> None:
        assert self.failure is None, f"another client got no answer: {self.failure}"
        assert self.answers and set(self.answers) == {200}, self.answers


def _in_parallel(count: int, call: Callable[[], Any]) -> list[Any]:
    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        return list(pool.map(lambda _: call(), range(count)))


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    with running_api(tmp_path, {"limits": {"render_timeout": 1.0,
                                           "expression_timeout": 1.0}}) as running:
        yield running


def test_templates_that_loop_for_hours_stop_and_free_every_thread(api: Api,
                                                                  tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "hostile", {
        "roles_data.yaml": "- name: Controller\n", "loops.j2.yaml": NESTED_LOOPS})
    body = tarball(tree)

    def create() -> requests.Response:
        # a session of its own: requests' sessions are not thread-safe
        return requests.post(api.url + "/v1/plans", params={"name": "hostile"}, data=body,
                             headers={**GZIP, "X-Auth-Token": api.token}, timeout=PATIENCE)

    with Bystander(api) as bystander:
        started = time.monotonic()
        answers = _in_parallel(6, create)  # more than the server's 4 threads
        took = time.monotonic() - started
    bystander.check()
    assert took < PATIENCE
    for answer in answers:
        assert answer.status_code in (400, 409), answer.text  # 409: another holds the name
    refused = [a.json()["error"]["message"] for a in answers if a.status_code == 400]
    assert refused and all("[limits] render_timeout" in m and "loops.j2.yaml" in m
                           for m in refused), refused
    assert api("GET", "/v1/plans/hostile").status_code == 404
    # the normal render still works within the same limit
    assert api("POST", "/v1/plans", params={"name": "fine", "sample": "true"}) \
        .status_code == 201


def test_workflow_expressions_that_run_for_hours_stop(api: Api, tmp_path: Path) -> None:
    workbook = tmp_path / "slow.yaml"
    workbook.write_text(
        "version: '2.0'\nname: slow\nworkflows:\n"
        f"  yaql:\n    tasks:\n      spin:\n        action: std.echo output=\"{SLOW_YAQL}\"\n"
        "  jinja:\n    tasks:\n      spin:\n        action: std.noop\n        publish:\n"
        "          n: \"{% for i in range(100000) %}{% for j in range(100000) %}"
        "{% endfor %}{% endfor %}\"\n")
    api.client.create_workbook(workbook)
    api.client.create_workbook(WORKBOOKS / "good" / "std_only.yaml")
    with Bystander(api) as bystander:
        slow = [api("POST", f"/v1/workflows/slow.{name}/executions", json={})
                for name in ("yaql", "jinja") * 4]
        assert {s.status_code for s in slow} == {202}, [s.text for s in slow]
        fine = api("POST", "/v1/workflows/std_only.greet/executions",
                   json={"input": {"who": "x", "times": 1}})
        ends = [finished(api, s.json()["id"], timeout=PATIENCE * 2) for s in slow]
        assert finished(api, fine.json()["id"], timeout=PATIENCE * 2)["state"] == "SUCCESS"
    bystander.check()
    for end in ends:
        assert end["state"] == "REVERTED", end
        assert "[limits] expression_timeout" in end["error"], end["error"]
