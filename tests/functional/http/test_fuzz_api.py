"""Schemathesis over every operation of /v1/openapi.json, on LocalStore and a real Swift.

A real server (waitress on 127.0.0.1) with a real token serves two sample plans,
``overcloud`` and ``spare``.  Each operation gets positive and negative cases
generated from the document, with the plan name (or workflow name) of the path
drawn half the time from the real ones, so writes reach real plans.  Each case
checks:

* no 5xx, and no traceback, Python repr or raw errno in the body;
* the response conforms to the document (status, content type, body schema);
* a refused request (4xx) left every object of every plan as it was
  (:func:`tests.plan_state.store_state`).

After a request that succeeded, the two plans are put back if it deleted one,
a plan it created is deleted, and a workflow it started is waited for.

The run is bounded and reproducible: ``FUZZ_EXAMPLES`` cases per operation and
mode (default 4; ``FUZZ_SWIFT_EXAMPLES`` on Swift, default 1), derandomized, no
example database.  The terminal summary prints the number of cases
(:mod:`tests.fuzz_report`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests import hostile
from tests.fixtures_plans import make_client
from tests.fixtures_swift import _empty_account
from tests.functional.http.conftest import Api, serving
from tests.fuzz_report import count
from tests.plan_state import state_diff, store_state
from tests.swift_server import SwiftServer
from tripleo_flow.http.app import ROUTES
from tripleo_flow.http.spec import GZIP, JSON, openapi
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.store import PlanStore
from tripleo_flow.plans.swift import SwiftStore

schemathesis.serializer.alias(GZIP, "application/octet-stream")

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "4"))
#: Swift is slower (a write and its checks take about a second): fewer cases there,
#: and only for the operations that write.
SWIFT_EXAMPLES = int(os.environ.get("FUZZ_SWIFT_EXAMPLES", "1"))
PLANS = ("overcloud", "spare")
#: Workflows safe to start with fuzzed input: they only touch the plan named in
#: it (deploy would start Heat; create/export take server paths).
WORKFLOWS = ("tripleo.parameters.update_parameters", "tripleo.parameters.reset_parameters",
             "tripleo.parameters.rotate_passwords", "tripleo.plan.delete_deployment_plan")
#: Operations that need Heat for a real plan: fuzzed with unknown plans only.
HEAT_ONLY = {"GET /v1/plans/{name}/parameters/schema"}
#: Read routes that must keep answering after any write that succeeded.
READS = ("/v1/executions", "/v1/plans/{name}", "/v1/plans/{name}/parameters",
         "/v1/plans/{name}/capabilities", "/v1/plans/{name}/roles?detail=true",
         "/v1/plans/{name}/networks?detail=true")
LEAKS = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+"
                   r"|<[\w.]+ object at 0x[0-9a-f]+>|\[Errno \d+\]")
DOCUMENT = openapi(ROUTES)
SCHEMA = schemathesis.openapi.from_dict(DOCUMENT)
OPERATIONS = {f"{op.method.upper()} {op.path}": op
              for op in (result.ok() for result in SCHEMA.get_all_operations())}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
#: Generated failures confirmed as bugs another branch fixes (the lead re-runs the
#: suite after merging them): operation -> branch and bug.
KNOWN: dict[str, str] = {}


def _header(response: Any, name: str) -> str:
    value = {k.lower(): v for k, v in response.headers.items()}.get(name, "")
    return value[0] if isinstance(value, list) else value


def _has_input(label: str) -> bool:
    """Whether the operation takes anything a negative case could break."""
    method, path = label.split(" ", 1)
    doc = DOCUMENT["paths"][path][method.lower()]
    return bool(doc["parameters"] or "requestBody" in doc)


class Fuzzer:
    """A served client, its store and the state every refused request must leave."""

    def __init__(self, api: Api, store: PlanStore, name: str) -> None:
        self.api = api
        self.store = store
        self.name = name
        self.state = store_state(store)
        self.examples = EXAMPLES if name == "local" else SWIFT_EXAMPLES
        #: A store state in which every read route was seen answering (None: none yet).
        self.reads_ok: dict[str, Any] | None = None

    def restore_plans(self) -> None:
        """Put the two sample plans back and drop any other one, then take the new state."""
        for info in self.store.list_containers():
            if info.metadata.get("usage-tripleo") == "plan" and info.name not in PLANS:
                self.api.client.plans.delete(info.name, force=True)
        present = {p["name"] for p in self.api.client.plans.list()}
        for plan in PLANS:
            if plan not in present:
                self.api.client.plans.create(plan, sample=True)
        self.state = store_state(self.store)

    def fresh(self) -> None:
        """Start a test from two sample plans that answer every read (an earlier test may
        have left a value that breaks them: recreate both then).  The reads are not sent
        again when the store holds exactly what it held when they last all answered (the
        previous test's writes were checked and undone): the plans' objects, metadata and
        versions decide every read route's answer."""
        self.restore_plans()
        if self.reads_ok is not None and not state_diff(self.reads_ok, self.state):
            return
        try:
            self.reads_still_work("the previous test")
        except AssertionError:
            for plan in PLANS:
                self.api.client.plans.delete(plan, force=True)
            self.restore_plans()
        else:
            self.reads_ok = self.state

    def wait_for_execution(self, location: str) -> None:
        for _ in range(600):
            state = self.api("GET", location).json().get("state", "")
            if state not in ("PENDING", "RUNNING"):
                return
            time.sleep(0.05)
        raise AssertionError(f"{location} still running after 30 s")

    def run(self, case: Any) -> None:
        """Send a schemathesis case and check the answer, the store and the document."""
        headers = {"X-Auth-Token": self.api.token}
        response = case.call(base_url=self.api.url, headers=headers, timeout=60)
        count(f"schemathesis-{self.name}")
        self.check(f"{case.method} {case.formatted_path}", response.status_code,
                   response.content, _header(response, "content-type"),
                   _header(response, "location"), case.method != "GET")
        case.validate_response(response, checks=CHECKS, headers=headers)

    def send(self, method: str, path: str, body: bytes | None = None,
             content_type: str = "application/json", **params: Any) -> requests.Response:
        """Send a hand-built request with the token and check the answer and the store."""
        query = "&".join(f"{k}={_quote(v)}" for k, v in params.items())
        response = self.api(method, path + (f"?{query}" if query else ""), data=body,
                            headers={"Content-Type": content_type} if body is not None else {})
        count(f"hostile-{self.name}")
        self.check(f"{method} {path} {params or ''}", response.status_code, response.content,
                   response.headers.get("content-type", ""),
                   response.headers.get("location", ""), True)
        return response

    def check(self, where: str, status: int, content: bytes, content_type: str,
              location: str, write: bool) -> None:
        """No 5xx, no leak, valid JSON; a refusal changed nothing; after a write that
        succeeded, every read route still answers."""
        where = f"{where} -> {status}"
        text = content.decode("utf-8", "replace")
        assert status < 500, f"{where}: {text[:500]}"
        if not content_type.startswith(GZIP):
            assert not LEAKS.search(text), f"{where} leaks internals: {text[:500]}"
        if content_type.startswith(JSON) and content:
            _strict_json(where, content)
        try:
            if 400 <= status < 500:
                changes = state_diff(self.state, store_state(self.store))
                assert not changes, f"refused request {where} changed the store: {changes[:10]}"
            elif status == 202 and location:
                self.wait_for_execution(location)
            if write and status < 400:
                self.reads_still_work(where)
        finally:
            if not 400 <= status < 500:
                self.restore_plans()

    def reads_still_work(self, after: str) -> None:
        for path in READS:
            for plan in PLANS:
                response = self.api("GET", path.format(name=plan))
                assert response.status_code < 500, (f"after {after}: GET {path.format(name=plan)}"
                                                    f" -> {response.status_code} "
                                                    f"{response.text[:300]}")
                _strict_json(f"after {after}: GET {path}", response.content)
                if "{name}" not in path:
                    break


def _quote(value: str) -> str:
    """``value`` percent-encoded as UTF-8, a lone surrogate as the bytes a client may send."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _strict_json(where: str, content: bytes) -> None:
    try:
        json.loads(content, parse_constant=_reject_constant)
    except ValueError as exc:
        raise AssertionError(f"{where}: the body is not valid JSON ({exc}): "
                             f"{content[:300]!r}") from None


def _with_body(case: Any, body: bytes | None) -> Any:
    if body is not None:
        case.body = body
    return case


def _cases(label: str, mode: GenerationMode) -> st.SearchStrategy[Any]:
    """Generated cases of one operation, half of them on a real plan or workflow; an
    archive body is a hostile .tar.gz half of the time."""
    operation = OPERATIONS[label]
    strategies = [operation.as_strategy(generation_mode=mode)]
    if "{name}" in operation.path and label not in HEAT_ONLY:
        names = WORKFLOWS if operation.path.startswith("/v1/workflows/") else PLANS
        strategies += [operation.as_strategy(generation_mode=mode, path_parameters={"name": n})
                       for n in names]
    cases = st.one_of(strategies)
    if "application/gzip" in str(DOCUMENT["paths"][operation.path][operation.method.lower()]
                                 .get("requestBody", "")):
        return st.builds(_with_body, cases, st.one_of(st.none(), hostile.tarballs))
    return cases


def _serve(store: PlanStore, tmp: Path) -> Iterator[Api]:
    import secrets

    client = make_client(tmp, store)
    token = secrets.token_hex(16)
    client.conf.set_override("auth_token", token, group="api")
    with serving(client, token) as api:
        for plan in PLANS:
            client.plans.create(plan, sample=True)
        yield api


class Fuzzers:
    """One served client per store kind, made on first use and kept for the module:
    every test of a kind shares its server and its two sample plans (each test starts
    from :meth:`Fuzzer.fresh`), rather than a new server, store and plans per test."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.tmp_path_factory = tmp_path_factory
        self.made: dict[str, Fuzzer] = {}
        self.stack = contextlib.ExitStack()

    def get(self, kind: str, swift: SwiftServer | None) -> Fuzzer:
        if kind not in self.made:
            self.made[kind] = self.stack.enter_context(self._make(kind, swift))
        return self.made[kind]

    @contextlib.contextmanager
    def _make(self, kind: str, swift: SwiftServer | None) -> Iterator[Fuzzer]:
        tmp = self.tmp_path_factory.mktemp(f"fuzz-{kind}")
        spare: str | None = None
        if swift is None:
            store: PlanStore = LocalStore(tmp / "plans")
            watcher: PlanStore = store
        else:
            # A spare account of its own (nothing to empty before or after), or once
            # they are all used the shared one, emptied before and after.
            spare = swift.new_account()
            user = spare or swift.user
            store = SwiftStore(swift.auth_url, user, swift.key)
            watcher = SwiftStore(swift.auth_url, user, swift.key)
            if spare is None:
                _empty_account(store)
        try:
            for api in _serve(store, tmp):
                yield Fuzzer(api, watcher, kind)
        finally:
            if isinstance(store, SwiftStore):
                if spare is None:
                    _empty_account(store)
                watcher.close()


@pytest.fixture(scope="module")
def fuzzers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzers]:
    made = Fuzzers(tmp_path_factory)
    with made.stack:
        yield made


@pytest.fixture(params=["local", "swift"])
def fuzzer(request: pytest.FixtureRequest, fuzzers: Fuzzers) -> Fuzzer:
    """The served client of the store kind ``request.param`` (the module's one)."""
    swift = request.getfixturevalue("swift_server") if request.param == "swift" else None
    return fuzzers.get(request.param, swift)


def _params() -> list[Any]:
    """(store, operation, mode); reads are fuzzed on LocalStore only: they do not
    write to the store, and a Swift write with its checks costs about a second."""
    params = []
    for kind in ("local", "swift"):
        for label in OPERATIONS:
            if kind != "local" and label.startswith("GET "):
                continue
            modes = [GenerationMode.POSITIVE] + (
                [GenerationMode.NEGATIVE] if _has_input(label) else [])
            for mode in modes:
                marks = ([pytest.mark.xfail(reason=KNOWN[label], strict=False)]
                         if label in KNOWN else [])
                params.append(pytest.param(kind, label, mode, marks=marks,
                                           id=f"{kind}-{mode.value}-{label}"))
    return params


@pytest.mark.parametrize(("fuzzer", "label", "mode"), _params(), indirect=["fuzzer"])
def test_operation_under_fuzzing(fuzzer: Fuzzer, label: str, mode: GenerationMode) -> None:
    """Generated requests to one operation: no 5xx, no leak, conformant, refusals change
    nothing."""

    @given(case=_cases(label, mode))
    @settings(max_examples=fuzzer.examples, deadline=None, database=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    def check(case: Any) -> None:
        fuzzer.run(case)

    fuzzer.fresh()
    check()


WORKFLOW_INPUTS = "update-parameters-workflow"
#: Hand-built bodies for each write, with hostile names and values (tests.hostile):
#: label -> (method, path, strategy of (body, query)).
role = st.fixed_dictionaries({"name": hostile.names}, optional={
    "description": hostile.values, "tags": hostile.values, "CountDefault": hostile.values,
    "networks": hostile.values, "ServicesDefault": hostile.values})
network = st.fixed_dictionaries({"name": hostile.names}, optional={
    "name_lower": hostile.names, "ip_subnet": hostile.values, "vip": hostile.values,
    "enabled": hostile.values, "allocation_pools": hostile.values})
HOSTILE: dict[str, tuple[str, str, st.SearchStrategy[Any]]] = {
    "parameters": ("PUT", "/v1/plans/{name}/parameters", st.fixed_dictionaries(
        {"parameters": st.dictionaries(hostile.names, hostile.values, max_size=3)},
        optional={"validate": st.booleans()})),
    "parameters-reset": ("POST", "/v1/plans/{name}/parameters/reset", st.fixed_dictionaries(
        {"names": st.lists(hostile.names, max_size=3)})),
    "capabilities": ("PUT", "/v1/plans/{name}/capabilities", st.fixed_dictionaries(
        {"environments": st.dictionaries(hostile.names, st.booleans(), max_size=3)},
        optional={"purge": st.booleans()})),
    "roles": ("PUT", "/v1/plans/{name}/roles", st.fixed_dictionaries(
        {"roles": st.lists(role, max_size=3)})),
    "networks": ("PUT", "/v1/plans/{name}/networks", st.fixed_dictionaries(
        {"networks": st.lists(network, max_size=3)})),
    # The text of a roles_data.yaml / network_data.yaml file (the GUI's upload): hostile
    # strings (alias bombs, a recursive anchor...) or hostile lists written as YAML flow.
    "roles-file": ("PUT", "/v1/plans/{name}/roles", st.fixed_dictionaries({"yaml": st.one_of(
        hostile.strings, st.lists(role, max_size=3).map(lambda r: hostile.json_bytes(r)
                                                        .decode()))})),
    "networks-file": ("PUT", "/v1/plans/{name}/networks", st.fixed_dictionaries(
        {"yaml": st.one_of(hostile.strings, st.lists(network, max_size=3).map(
            lambda n: hostile.json_bytes(n).decode()))})),
    "restore": ("POST", "/v1/plans/{name}/restore", st.fixed_dictionaries(
        {"version": hostile.strings})),
    WORKFLOW_INPUTS: (
        "POST", "/v1/workflows/tripleo.parameters.update_parameters/executions",
        st.fixed_dictionaries({"input": st.fixed_dictionaries(
            {"plan": st.sampled_from(PLANS),
             "parameters": st.dictionaries(hostile.names, hostile.shallow_values,
                                           max_size=3)})})),
}


#: Known failures left to other branches of issue 10 (the ``http`` ones are fixed).
KNOWN_HOSTILE: dict[str, str] = {}


def _xfail_known(labels: list[str]) -> list[Any]:
    return [pytest.param(label, marks=[pytest.mark.xfail(reason=KNOWN_HOSTILE[label],
                                                         strict=False)]
                         if label in KNOWN_HOSTILE else []) for label in labels]


def _hostile_bodies(fuzzer: Fuzzer, label: str) -> None:
    method, path, bodies = HOSTILE[label]

    @given(body=bodies, plan=st.sampled_from(PLANS))
    @settings(max_examples=fuzzer.examples * 2, deadline=None, database=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    def check(body: Any, plan: str) -> None:
        fuzzer.send(method, path.format(name=plan), hostile.json_bytes(body))

    fuzzer.fresh()
    check()


@pytest.mark.parametrize("label", _xfail_known(sorted(set(HOSTILE) - {WORKFLOW_INPUTS})))
def test_hostile_json_bodies(fuzzer: Fuzzer, label: str) -> None:
    """Hostile names and values in every JSON write: a clear 4xx that changes nothing, or
    a success after which every read route still answers valid JSON."""
    _hostile_bodies(fuzzer, label)


@pytest.mark.parametrize("method", ["POST", "DELETE"])
def test_hostile_plan_names(fuzzer: Fuzzer, method: str) -> None:
    """Plan names built to hurt, to create (the sample plan) and to delete."""

    @given(name=hostile.strings)
    @settings(max_examples=fuzzer.examples * 2, deadline=None, database=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    def check(name: str) -> None:
        if method == "POST":
            fuzzer.send("POST", "/v1/plans", None, name=name, sample="true")
        else:
            fuzzer.send("DELETE", f"/v1/plans/{_quote(name)}")

    fuzzer.fresh()
    check()


@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_hostile_archives(fuzzer: Fuzzer, method: str) -> None:
    """.tar.gz archives built to hurt, as a new plan and as the templates of a plan."""

    @given(archive=hostile.tarballs)
    @settings(max_examples=fuzzer.examples * 3, deadline=None, database=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    def check(archive: bytes) -> None:
        if method == "POST":
            fuzzer.send("POST", "/v1/plans", archive, GZIP, name="fuzzed")
        else:
            fuzzer.send("PUT", "/v1/plans/overcloud", archive, GZIP)

    fuzzer.fresh()
    check()


@pytest.mark.parametrize("label", _xfail_known([WORKFLOW_INPUTS]))
def test_hostile_workflow_inputs(fuzzer: Fuzzer, label: str) -> None:
    """Hostile workflow inputs: the run is refused or its execution stays readable.  Last
    of the module: a broken execution record cannot be removed for the tests after it."""
    _hostile_bodies(fuzzer, label)
