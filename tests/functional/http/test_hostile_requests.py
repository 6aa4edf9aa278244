"""Hostile request bodies and names: a clear 4xx, never a 500, and nothing stored that
breaks a later answer.  Every GET route answers as before after each of them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.functional.http.conftest import Api, finished, running_api
from tests.functional.http.test_api import tarball
from tests.plan_trees import write_tree
from tripleo_flow.http.app import ROUTES

JSON = {"Content-Type": "application/json"}
LONG = "a" * 300
DEEP = "[" * 900 + "]" * 900
#: GET routes not asked here: the parameter schema launches an ephemeral Heat
#: (tests/functional/heat covers it); events stream until the execution ends.
SKIPPED = {"/v1/plans/{name}/parameters/schema"}


def strict_json(text: str) -> Any:
    """Parse ``text`` as JSON proper: NaN and Infinity are errors."""
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} in an answer")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    with running_api(tmp_path, {"limits": {"yaml_max_nodes": 5000}}) as running:
        yield running


def _setup(api: Api, tmp_path: Path) -> dict[str, str]:
    """A plan, ended executions, a download and an upload: the ids GET routes need."""
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    started = api("POST", "/v1/workflows/tripleo.parameters.update_parameters/executions",
                  json={"input": {"plan": "p", "parameters": {"Debug": True}}})
    assert started.status_code == 202, started.text
    execution_id = started.json()["id"]
    assert finished(api, execution_id)["state"] == "SUCCESS"
    export = api("POST", "/v1/workflows/tripleo.plan.export_deployment_plan/executions",
                 json={"input": {"plan": "p", "output": "p.tar.gz"}})
    assert export.status_code == 202, export.text
    assert finished(api, export.json()["id"])["state"] == "SUCCESS"
    download_id = export.json()["downloads"]["output"].rsplit("/", 1)[1]
    upload = api("POST", "/v1/uploads", data=tarball(write_tree(tmp_path / "up", {"a.yaml": "{}"})),
                 headers={"Content-Type": "application/gzip"})
    assert upload.status_code == 201
    backup = api("POST", "/v1/backups", json={"passphrase": "a long enough passphrase"})
    assert backup.status_code == 201, backup.text
    return {"name": "p", "execution_id": execution_id, "upload_id": upload.json()["id"],
            "download_id": download_id, "node": "node-0",  # no Ironic here: the node routes 404
            # nor a validations virtualenv: the validation routes 404
            "validation": "no-op", "result_id": "0" * 32 + "-no-op",
            "backup_id": backup.json()["id"], "workbook": "tripleo.deploy",
            "action": "std.echo"}


def _get_all(api: Api, ids: dict[str, str]) -> dict[str, tuple[int, Any]]:
    """Status and body of every GET route (bodies parsed as strict JSON)."""
    answers = {}
    for route in ROUTES:
        if "get" not in route.operations or route.path in SKIPPED:
            continue
        path = re.sub(r"\{(\w+)\}", lambda m: ids[m.group(1)], route.path)
        response = api("GET", path)
        if response.headers.get("Content-Type", "").startswith("application/json"):
            body = strict_json(response.text)
        else:
            body = len(response.content)
        if route.path.startswith("/v1/executions"):
            body = None  # timestamps move: the status is what matters
        answers[route.path] = (response.status_code, body)
    return answers


HOSTILE: list[tuple[str, str, dict[str, Any]]] = [
    ("PUT", "/v1/plans/p/parameters", {"data": '{"parameters": {"A": "\\ud800"}}'}),
    ("PUT", "/v1/plans/p/parameters", {"data": '{"parameters": {"A": "x\\udfff"}}'}),
    ("PUT", "/v1/plans/p/parameters", {"data": '{"parameters": {"\\ud800": 1}}'}),
    ("PUT", "/v1/plans/p/parameters", {"data": '{"parameters": {"A": NaN}}'}),
    ("PUT", "/v1/plans/p/parameters", {"data": '{"parameters": {"A": Infinity}}'}),
    ("PUT", "/v1/plans/p/parameters", {"data": '{"parameters": {"A": -Infinity}}'}),
    ("PUT", "/v1/plans/p/parameters", {"data": '{"parameters": {"A": ' + DEEP + "}}"}),
    ("PUT", "/v1/plans/p/parameters",
     {"data": json.dumps({"parameters": {"A": list(range(6000))}})}),
    ("PUT", "/v1/plans/p/parameters", {"data": b'{"parameters": {"A": "\xff"}}'}),
    ("PUT", "/v1/plans/p/roles",
     {"data": '{"roles": [{"name": "Controller", "description": "\\ud800"}]}'}),
    ("PUT", "/v1/plans/p/networks", {"data": '{"networks": [{"name": "N", "mtu": NaN}]}'}),
    ("PUT", "/v1/plans/p/capabilities", {"data": '{"environments": {"\\udc80": true}}'}),
    ("POST", "/v1/workflows/tripleo.parameters.update_parameters/executions",
     {"data": '{"input": {"plan": "p", "parameters": {"A": ' + DEEP + "}}}"}),
    ("POST", "/v1/workflows/tripleo.parameters.update_parameters/executions",
     {"data": '{"input": {"plan": "p", "parameters": {"A": NaN}}}'}),
    ("POST", "/v1/workflows/tripleo.parameters.update_parameters/executions",
     {"data": '{"input": {"plan": "\\ud800", "parameters": {}}}'}),
    ("POST", "/v1/plans/p/restore", {"data": '{"version": "\\ud800"}'}),
    ("GET", f"/v1/plans/{LONG}", {}),
    ("GET", f"/v1/plans/{LONG}/roles", {}),
    ("GET", f"/v1/plans/{LONG}/history", {}),
    ("GET", f"/v1/plans/{LONG}/parameters", {}),
    ("PUT", f"/v1/plans/{LONG}/parameters", {"json": {"parameters": {"A": 1}}}),
    ("DELETE", f"/v1/plans/{LONG}", {}),
    ("POST", f"/v1/plans?name={LONG}&sample=true", {}),
    ("GET", f"/v1/executions/{LONG}", {}),
    ("GET", f"/v1/uploads/{LONG}", {}),
    ("POST", f"/v1/workflows/{LONG}/executions", {"json": {}}),
    ("GET", f"/v1/validations/{LONG}", {}),
    ("GET", f"/v1/validations/results/{LONG}", {}),
    ("GET", "/v1/validations/results?plan=%2E%2E", {}),
    ("POST", "/v1/validations/run", {"data": '{"validations": ["\\ud800"]}'}),
    ("POST", "/v1/validations/run", {"json": {"validations": ["../x"], "inventory": "localhost"}}),
    ("POST", "/v1/validations/stop", {"json": {"execution": LONG}}),
]


def test_hostile_requests_get_4xx_and_every_get_still_answers(api: Api, tmp_path: Path) -> None:
    ids = _setup(api, tmp_path)
    before = _get_all(api, ids)
    assert {status for status, _ in before.values()} <= {200, 404}, before
    for method, path, kwargs in HOSTILE:
        response = api(method, path, headers=JSON, **kwargs)
        where = f"{method} {path[:60]}"
        assert 400 <= response.status_code < 500, (where, response.status_code, response.text)
        error = strict_json(response.text)["error"]
        assert error["kind"] in ("invalid-input", "not-found"), (where, error)
        assert "Traceback" not in response.text and "Internal error" not in response.text
        assert "/tmp" not in error["message"], (where, error)  # no server path
        assert _get_all(api, ids) == before, where


@pytest.mark.parametrize("body, words", [
    ('{"parameters": {"A": "\\ud800"}}', "lone UTF-16 surrogate"),
    ('{"parameters": {"A": NaN}}', "NaN is not a JSON number"),
    ('{"parameters": {"A": ' + DEEP + "}}",
     "nests deeper than 100 levels ([limits] yaml_max_depth)"),
    (json.dumps({"parameters": {"A": list(range(6000))}}),
     "more than 5000 values ([limits] yaml_max_nodes)"),
    ('{"parameters": {"A": ' + "7" * 100_000 + "}}",
     "an integer of more than 4300 digits, too long to read as a number; send it as a JSON "
     "string"),
])
def test_refusals_say_why(api: Api, body: str, words: str) -> None:
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    response = api("PUT", "/v1/plans/p/parameters", data=body, headers=JSON)
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert words in message and "set_int_max_str_digits" not in message, message


def test_a_missing_input_is_named_in_the_words_of_http(api: Api) -> None:
    """The hint of a missing workflow input is the request that passes it, never the
    CLI's --input (issue 29)."""
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    before = api("GET", "/v1/executions").json()
    path = "/v1/workflows/tripleo.parameters.update_parameters/executions"
    refused = api("POST", path, json={"input": {"plan": "p"}})
    assert refused.status_code == 400, refused.text
    message = refused.json()["error"]["message"]
    assert "needs input 'parameters'" in message, message
    assert f'Pass it with: POST {path} with {{"input": {{"parameters": VALUE}}}}' in message
    assert "--input" not in message and "tripleo-flow workflow run" not in message
    # the hint is the request; its CLI twin is there for the server's operator
    [hint] = refused.json()["error"]["hints"]
    assert hint["request"] == f'POST {path} with {{"input": {{"parameters": VALUE}}}}', hint
    assert api("GET", "/v1/executions").json() == before  # nothing recorded


@pytest.mark.parametrize("method, path", [
    ("GET", f"/v1/plans/{LONG}"), ("GET", f"/v1/plans/{LONG}/roles"),
    ("DELETE", f"/v1/plans/{LONG}"), ("POST", f"/v1/plans?name={LONG}&sample=true"),
])
def test_long_names_are_a_clear_4xx(api: Api, method: str, path: str) -> None:
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    response = api(method, path)
    assert response.status_code in (400, 404), response.text
    message = response.json()["error"]["message"]
    assert "OSError" not in message and "Errno" not in message and "/tmp" not in message


def test_stored_values_never_break_an_answer(api: Api, tmp_path: Path) -> None:
    """Values that reached the store another way (the Python API, an older version)
    are still answered as valid JSON."""
    ids = _setup(api, tmp_path)
    client = api.client
    # (The Python API's set_parameters refuses such values now: it runs a workflow,
    # whose inputs must be JSON. The action itself, as an older version did, stores them.)
    from tripleo_flow.actions.parameters import UpdateParameters
    UpdateParameters(client._session.context).execute(
        plan="p", parameters={"Bad": "x\ud800y", "Big": float("inf"), "Small": float("nan")})
    nested: Any = "end"
    for _ in range(900):
        nested = [nested]
    runner = client._session.runner()
    runner.store.create("tripleo.parameters.update_parameters",
                        {"plan": "p", "parameters": {"Deep": nested, "S": "\udc80"}}, None)
    answers = _get_all(api, ids)
    assert {status for status, _ in answers.values()} <= {200, 404}, answers
    parameters = strict_json(api("GET", "/v1/plans/p/parameters").text)
    assert parameters["Bad"] == "x\ufffdy"
    assert parameters["Big"] is None and parameters["Small"] is None
    executions = strict_json(api("GET", "/v1/executions",
                                 params={"workflow": "update_parameters"}).text)
    assert executions[-1]["input"]["parameters"]["S"] == "\ufffd"


def test_a_template_escaping_the_sandbox_is_refused_over_http(api: Api, tmp_path: Path) -> None:
    """A ``*.j2.yaml`` reaching for Python internals, uploaded by ``POST /v1/plans`` or
    ``PUT /v1/plans/{name}``, is a 400 naming the file and line: nothing runs on the
    server and every plan stays byte-identical."""
    from tests.plan_state import state_diff, store_state
    from tests.plan_trees import basic_tree

    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    pwned = tmp_path / "PWNED"
    tree = basic_tree()
    tree["puppet/hostile.j2.yaml"] = (
        "a: 1\n\nb: {{ cycler.__init__.__globals__.os.popen('touch PWNED').read() }}\n"
    ).replace("PWNED", str(pwned))
    archive = tarball(write_tree(tmp_path / "hostile", tree))
    before = store_state(api.client._session.store)
    for method, path in (("POST", "/v1/plans?name=q"), ("PUT", "/v1/plans/p")):
        response = api(method, path, data=archive, headers={"Content-Type": "application/gzip"})
        assert response.status_code == 400, (method, response.text)
        message = response.json()["error"]["message"]
        assert "'puppet/hostile.j2.yaml'" in message and "line 3" in message, message
        assert "Traceback" not in response.text
        assert not pwned.exists()
        assert state_diff(before, store_state(api.client._session.store)) == []
    assert [plan["name"] for plan in api("GET", "/v1/plans").json()] == ["p"]


@pytest.mark.parametrize("method, path", [("POST", "/v1/plans?name=q"), ("PUT", "/v1/plans/p")])
@pytest.mark.parametrize("data, words", [
    (b"not a tarball at all", "not a readable tar archive"),
    (None, "points outside the archive"),
])
def test_a_refused_upload_is_named_as_the_user_sent_it(api: Api, tmp_path: Path, method: str,
                                                        path: str, data: bytes | None,
                                                        words: str) -> None:
    """A broken or unsafe plan archive is refused as "the uploaded archive", never by the
    temporary file the server wrote it to (masked or not).  (The execution it recorded
    keeps its input and error with server paths masked, as every record does.)"""
    import io
    import tarfile

    if data is None:  # a member that climbs out of the tree
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            member = tarfile.TarInfo("../escape.yaml")
            member.size = 2
            archive.addfile(member, io.BytesIO(b"{}"))
        data = buffer.getvalue()
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    response = api(method, path, data=data, headers={"Content-Type": "application/gzip"})
    assert response.status_code == 400, response.text
    message = response.json()["error"]["message"]
    assert words in message and "the uploaded archive" in message, message
    assert "tripleo-flow-upload" not in response.text and "<tmp>" not in response.text
    assert "plan.tar.gz" not in response.text
    [failed] = [e for e in api("GET", "/v1/executions").json() if e["state"] == "ERROR"]
    assert words in failed["error"] and "/tripleo-flow-upload-" not in failed["error"].split(
        "<tmp>", 1)[0], failed["error"]  # masked
