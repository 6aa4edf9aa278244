"""One API writer, or nobody, must not take the API down (issue 29): each attack runs
against the real server (waitress on 127.0.0.1, 4 request threads) while another
client keeps asking it questions, and every question gets its answer."""

from __future__ import annotations

import concurrent.futures
import socket
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


class _FromAddress(requests.adapters.HTTPAdapter):
    """Connects from ``source`` (another loopback address is another client)."""

    def __init__(self, source: str) -> None:
        self.source = source
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.source, 0)
        super().init_poolmanager(*args, **kwargs)


class Bystander:
    """Another client asking ``GET /v1/openapi.json`` over and over in a thread, each
    answer within :data:`PATIENCE` seconds; :meth:`stop` returns how many it got.

    :param source: the address it connects from (default: the system's choice)
    """

    def __init__(self, api: Api, source: str | None = None) -> None:
        self.api = api
        self.source = source
        self.answers: list[int] = []
        self.failure: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._ask, daemon=True)

    def _ask(self) -> None:
        with requests.Session() as session:
            if self.source:
                session.mount("http://", _FromAddress(self.source))
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


def _raw(api: Api, data: bytes) -> socket.socket:
    """A connection to the server that has sent ``data``."""
    port = int(api.url.rsplit(":", 1)[1])
    conn = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
    if data:
        conn.sendall(data)
    return conn


def _closed_by_server(conn: socket.socket) -> bool:
    """Whether the server closes ``conn`` (reads to the end; an answer may come first)."""
    try:
        while conn.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


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
    api.client.workbooks.create(workbook)
    api.client.workbooks.create(WORKBOOKS / "good" / "std_only.yaml")
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
        assert end["state"] == "ERROR", end
        assert "[limits] expression_timeout" in end["error"], end["error"]


def test_half_open_connections_are_closed_and_others_still_served(tmp_path: Path) -> None:
    limits = {"api": {"connection_limit": 20, "header_timeout": 1.0}}
    with running_api(tmp_path, limits) as api:
        # as many as the server takes: half of them silent, half stuck in their headers
        stuck = [_raw(api, b"" if i % 2 else b"GET /v1/plans HTTP/1.1\r\nHost: x\r\n")
                 for i in range(20)]
        try:
            with Bystander(api) as bystander:
                for conn in stuck:
                    assert _closed_by_server(conn)
            bystander.check()
        finally:
            for conn in stuck:
                conn.close()


def test_one_address_cannot_hold_every_connection(tmp_path: Path) -> None:
    """Half-open and idle connections from one address past [api] connections_per_client
    are answered 503 and closed at once: another address is served throughout, even
    with no header timeout (without the limit they fill connection_limit)."""
    limits = {"api": {"connection_limit": 40, "connections_per_client": 8,
                      "header_timeout": 0.0}}
    with running_api(tmp_path, limits) as api:
        with Bystander(api, source="127.0.0.2") as bystander:
            held = [_raw(api, b"" if i % 2 else b"GET /v1/plans HTTP/1.1\r\nHost: x\r\n")
                    for i in range(100)]
            try:
                time.sleep(1)
                answers = [_answer_then_close(conn) for conn in held]
                refused = [a for a in answers if a is not None]
                assert len(refused) == 100 - 8
                for answer in refused:
                    assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
                    assert b"[api] connections_per_client" in answer
            finally:
                for conn in held:
                    conn.close()
        bystander.check()
        # once they are closed, that address is served again
        deadline = time.monotonic() + PATIENCE
        while api("GET", "/v1/openapi.json").status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def _answer_then_close(conn: socket.socket, within: float = 1.0) -> bytes | None:
    """What the server sent on ``conn`` before closing it, if it does within ``within``
    seconds (None: still open)."""
    conn.settimeout(within)
    received = b""
    try:
        while chunk := conn.recv(65536):
            received += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return received


def test_a_body_without_the_token_is_refused_before_it_is_read(api: Api) -> None:
    length = 100 << 20
    conn = _raw(api, b"POST /v1/uploads HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/gzip\r\n"
                     b"Content-Length: %d\r\n\r\n" % length + b"x" * 1000)
    with conn:
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 401"), answer[:300]
    assert b'"kind": "unauthorized"' in body and b"X-Auth-Token" in body
    assert not (Path(api.client.data_dir) / "uploads").exists() or not any(
        (Path(api.client.data_dir) / "uploads").iterdir())
    # the token's holder still uploads, and the login route still takes a body
    assert api("POST", "/v1/uploads", data=b"x" * 10, headers=GZIP).status_code == 201
    login = requests.post(api.url + "/v1/auth/tokens", json={"username": "u"},
                          timeout=PATIENCE)
    assert login.status_code == 400 and "auth_strategy = token" in login.text


def test_event_streams_leave_threads_for_others_and_free_them_when_clients_leave(
        tmp_path: Path) -> None:
    workbook = tmp_path / "waits.yaml"
    # The execution never ends by itself (an asynchronous action nobody completes): a
    # slot that comes back was freed by its client leaving, however slow the machine.
    workbook.write_text("version: '2.0'\nname: waits\nworkflows:\n  long:\n    tasks:\n"
                        "      nap:\n        action: std.async_noop\n")
    with running_api(tmp_path, {"api": {"max_event_streams": 2}}) as api:
        api.client.workbooks.create(workbook)
        execution_id = api("POST", "/v1/workflows/waits.long/executions", json={}).json()["id"]
        deadline = time.monotonic() + PATIENCE
        while not api("GET", f"/v1/executions/{execution_id}/tasks").json():
            assert time.monotonic() < deadline
            time.sleep(0.1)
        path = f"/v1/executions/{execution_id}/events"

        def stream() -> requests.Response:
            return requests.get(api.url + path, headers={"X-Auth-Token": api.token},
                                stream=True, timeout=PATIENCE)

        with Bystander(api) as bystander:
            streams = [stream() for _ in range(2)]
            assert [s.status_code for s in streams] == [200, 200]
            refused = stream()
            assert refused.status_code == 503, refused.text
            assert "[api] max_event_streams" in refused.json()["error"]["message"]
            for response in streams:
                response.close()
            # the clients have left: their threads and slots come back while the
            # execution still runs (a keepalive write finds them gone)
            deadline = time.monotonic() + 4 * PATIENCE  # a hang guard, not a figure
            # A stream that got its slot keeps it; only the refused one asks again (closing
            # an open one too would hold its slot until its own keepalive, so on a loaded
            # machine the two retries could keep taking each other's slot for good).
            again = [stream() for _ in range(2)]
            while any(a.status_code == 503 for a in again):
                assert time.monotonic() < deadline, [a.text for a in again]
                time.sleep(0.2)
                for index, response in enumerate(again):
                    if response.status_code == 503:
                        response.close()
                        again[index] = stream()
            assert [a.status_code for a in again] == [200, 200]
            for response in again:
                response.close()
            assert api("GET", f"/v1/executions/{execution_id}").json()["state"] == "RUNNING"
        bystander.check()


SHADOW = """version: '2.0'
name: {name}
workflows:
  {workflow}:
    tasks:
      boom:
        action: std.fail
"""


@pytest.mark.parametrize("name, workflow", [
    ("tripleo", "plan.create_deployment_plan"),  # the same full name
    ("tripleo.plan", "create_deployment_plan"),  # a shipped workbook's name
    ("mine", "create_deployment_plan"),          # the same short name
])
def test_a_user_workbook_never_replaces_a_shipped_workflow(api: Api, tmp_path: Path,
                                                          name: str, workflow: str) -> None:
    from tripleo_flow import exceptions

    path = tmp_path / "shadow.yaml"
    path.write_text(SHADOW.format(name=name, workflow=workflow))
    if name != "mine":
        with pytest.raises(exceptions.Conflict, match="another name"):
            api.client.workbooks.create(path)
        # one put there by hand is ignored, and says why
        api.client._session.workbooks_dir.mkdir(parents=True, exist_ok=True)
        (api.client._session.workbooks_dir / "shadow.yaml").write_text(path.read_text())
    else:
        api.client.workbooks.create(path)  # its own namespace: fine
    assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}).status_code == 201
    for ref in ("create_deployment_plan", "tripleo.plan.create_deployment_plan"):
        shown = api("GET", f"/v1/workflows/{ref}")
        assert shown.status_code == 200, shown.text
        assert "boom" not in shown.text and "generate_passwords" in shown.text
    listed = [w["name"] for w in api("GET", "/v1/workflows").json()]
    assert listed.count("tripleo.plan.create_deployment_plan") == 1


UPDATE = "/v1/workflows/tripleo.parameters.update_parameters/executions"


def _plan_environment(api: Api, plan: str) -> bytes:
    return api.client._session.context.store.get_object(plan, "plan-environment.yaml")


def test_a_50_mb_value_is_refused_at_once(tmp_path: Path) -> None:
    limits = {"api": {"max_json_size": 1 << 20}}
    with running_api(tmp_path, limits) as api:
        assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}).status_code \
            == 201
        before = api("GET", "/v1/executions").json()
        with Bystander(api) as bystander:
            started = time.monotonic()
            refused = api("POST", UPDATE, json={"input": {"plan": "p", "parameters": {
                "NtpServer": "a" * (50 << 20)}}})
            took = time.monotonic() - started
        bystander.check()
        assert refused.status_code == 413, refused.text[:300]
        assert "[api] max_json_size" in refused.json()["error"]["message"]
        assert took < PATIENCE
        assert api("GET", "/v1/executions").json() == before  # nothing recorded


@pytest.mark.parametrize("max_size, option", [
    (None, "[limits] parameters_max_size"),        # 300,000 parameters take 3.7 MB
    (64 << 20, "[limits] input_max_items"),        # within a raised size limit
])
def test_300000_parameters_are_refused_before_anything_is_recorded(
        tmp_path: Path, max_size: int | None, option: str) -> None:
    """Over the plan's parameters resource and over the workflow itself: a 400 within
    seconds naming the option, no execution recorded, the plan unchanged (they failed
    after 42 s naming [limits] expression_max_items, their execution recorded)."""
    limits: dict[str, dict[str, Any]] = {"api": {"max_json_size": 64 << 20}}
    if max_size:
        limits["limits"] = {"parameters_max_size": max_size}
    parameters = {f"P{i}": i for i in range(300_000)}
    with running_api(tmp_path, limits) as api:
        assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}).status_code \
            == 201
        before = api("GET", "/v1/executions").json()
        plan_environment = _plan_environment(api, "p")
        with Bystander(api) as bystander:
            for method, path, body, named in (
                    ("PUT", "/v1/plans/p/parameters", {"parameters": parameters}, option),
                    # a workflow's inputs are counted, whatever the workflow
                    ("POST", UPDATE, {"input": {"plan": "p", "parameters": parameters}},
                     "[limits] input_max_items")):
                started = time.monotonic()
                refused = api(method, path, json=body)
                took = time.monotonic() - started
                assert refused.status_code == 400, refused.text[:300]
                assert named in refused.json()["error"]["message"], refused.text[:300]
                assert took < PATIENCE, took
        bystander.check()
        assert api("GET", "/v1/executions").json() == before
        assert _plan_environment(api, "p") == plan_environment


def test_large_values_and_environments_are_refused_and_nothing_changes(api: Api) -> None:
    api.client.conf.set_override("parameters_max_size", 100_000, group="limits")
    assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}).status_code == 201
    before = _plan_environment(api, "p")
    executions = api("GET", "/v1/executions").json()
    # Refused before anything is recorded (the workflow's own rule, applied at its
    # start): no execution, nothing changed.
    refused = api("POST", UPDATE, json={"input": {"plan": "p", "parameters": {
        "NtpServer": "a" * 200_000}}})
    assert refused.status_code == 400, refused.text[:300]
    assert "[limits] parameters_max_size" in refused.json()["error"]["message"]
    assert api("GET", "/v1/executions").json() == executions
    big = {"name": "big.yaml", "files": {
        "big.yaml": "parameter_defaults:\n  NtpServer: " + "a" * 200_000 + "\n"}}
    added = api("POST", "/v1/plans/p/environments", json={"environments": [big]})
    assert added.status_code == 400, added.text[:300]
    assert "[limits] parameters_max_size" in added.json()["error"]["message"]
    assert _plan_environment(api, "p") == before
    fine = api("POST", UPDATE, json={"input": {"plan": "p", "parameters": {
        "NtpServer": "a" * 1000}}})
    assert finished(api, fine.json()["id"])["state"] == "SUCCESS"


@pytest.mark.parametrize("count", [1000000000, "1000000000", "1e20", 10 ** 400, 1001],
                         ids=["int", "text", "exponent", "400-digits", "one-over"])
def test_role_counts_past_nodes_max_are_refused(api: Api, count: Any) -> None:
    assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}).status_code == 201
    before = _plan_environment(api, "p")
    started = api("POST", UPDATE, json={"input": {"plan": "p", "parameters": {
        "ComputeCount": count}}})
    assert started.status_code == 202, started.text
    body = finished(api, started.json()["id"])
    assert body["state"] == "ERROR", body
    assert "ComputeCount" in body["error"] and "[limits] nodes_max (1000)" in body["error"]
    assert _plan_environment(api, "p") == before
    fine = api("POST", UPDATE, json={"input": {"plan": "p", "parameters": {
        "ComputeCount": 1000}}})
    assert finished(api, fine.json()["id"])["state"] == "SUCCESS"


def test_a_count_default_past_nodes_max_is_refused(api: Api, tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "tree", {
        "roles_data.yaml": "- name: Controller\n  CountDefault: 100000000000000000000\n",
        "overcloud.yaml": "heat_template_version: wallaby\n"})
    created = api("POST", "/v1/plans", params={"name": "p"}, data=tarball(tree), headers=GZIP)
    assert created.status_code == 400, created.text
    message = created.json()["error"]["message"]
    assert "CountDefault" in message and "[limits] nodes_max (1000)" in message
    assert api("GET", "/v1/plans/p").status_code == 404


def test_parameter_schema_heats_start_one_at_a_time(tmp_path: Path) -> None:
    """Three cache misses at once ([heat] schema_launches_max = 1, the default): each
    gets its schema from a real ephemeral Heat, never two Heats at a time (the limit
    keeps their memory, about 330 MB each, bounded)."""
    with running_api(tmp_path) as api:
        plans = [f"p{i}" for i in range(3)]
        for plan in plans:
            assert api("POST", "/v1/plans", params={"name": plan, "sample": "true"}) \
                .status_code == 201
        heat_dirs = Path(api.client.data_dir) / "parameters-heat"
        seen: list[int] = []
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                seen.append(len(list(heat_dirs.glob("validate-*")))
                            if heat_dirs.is_dir() else 0)
                time.sleep(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            with concurrent.futures.ThreadPoolExecutor(3) as pool:
                answers = list(pool.map(lambda plan: requests.get(
                    f"{api.url}/v1/plans/{plan}/parameters/schema",
                    headers={"X-Auth-Token": api.token}, timeout=300), plans))
        finally:
            done.set()
            watcher.join()
        assert [a.status_code for a in answers] == [200, 200, 200], [a.text for a in answers]
        assert all(a.json()["parameters"] for a in answers)
        assert max(seen) == 1, max(seen)
