"""The routes of the HTTP API are what the resource modules declare: the app routes each
declared path with exactly its declared methods (and nothing else but the GUI's files),
the OpenAPI document lists each once, and a JSON body is checked against its declared
schema before any handler runs: a 400 naming the field, never the value sent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import pytest

from tests.fixtures_plans import make_client
from tripleo_flow.http import ROUTES, gui, make_app
from tripleo_flow.http.json_bodies import JsonBodies, first_problem
from tripleo_flow.http.routes import JSON, Operation, Route, shadows
from tripleo_flow.http.spec import openapi
from tripleo_flow.plans.local import LocalStore

TOKEN = "t" * 32
MAX_JSON = 4096


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    client.conf.set_override("auth_token", TOKEN, group="api")
    client.conf.set_override("max_json_size", MAX_JSON, group="api")
    try:
        yield make_app(client)
    finally:
        client.close()


def routed(app: falcon.App) -> dict[str, set[str]]:
    """Every URI template the app routes (but the GUI's files), with the methods its
    resource answers."""
    found: dict[str, set[str]] = {}
    nodes = list(app._router._roots)
    while nodes:
        node = nodes.pop()
        nodes.extend(node.children)
        if node.resource is not None and node.uri_template not in gui.FILES:
            assert node.uri_template not in found, node.uri_template
            found[node.uri_template] = set(falcon.routing.map_http_methods(node.resource))
    return found


def declared() -> dict[str, set[str]]:
    """Each declared path with its methods, and a literal path also with the methods of
    the templated sibling it hides (:func:`tripleo_flow.http.routes.shadows`)."""
    found = {r.path: {m.upper() for m in r.operations} for r in ROUTES}
    for shadow in shadows(ROUTES):
        found[shadow.literal.path] |= {m.upper() for m in shadow.methods}
    return found


def test_each_path_is_declared_once() -> None:
    paths = [r.path for r in ROUTES]
    assert len(paths) == len(set(paths)), sorted(p for p in paths if paths.count(p) > 1)


def test_the_app_routes_exactly_the_declared_routes_and_methods(app: falcon.App) -> None:
    assert routed(app) == declared()


def test_the_openapi_document_lists_every_route_and_method_once(app: falcon.App) -> None:
    served = falcon.testing.TestClient(app).simulate_get("/v1/openapi.json").json
    assert served == json.loads(json.dumps(openapi(ROUTES)))
    assert {path: {m.upper() for m in item} for path, item in served["paths"].items()} \
        == {r.path: {m.upper() for m in r.operations} for r in ROUTES}


def test_the_literal_paths_hiding_a_templated_route_are_known() -> None:
    assert {(s.literal.path, s.templated.path, tuple(sorted(s.methods)))
            for s in shadows(ROUTES)} == {
        ("/v1/workbooks/validate", "/v1/workbooks/{workbook}", ("delete", "get")),
        ("/v1/backups/restore", "/v1/backups/{backup_id}", ("delete", "get")),
        ("/v1/validations/run", "/v1/validations/{validation}", ("get",)),
        ("/v1/validations/stop", "/v1/validations/{validation}", ("get",))} | {
        (f"/v1/nodes/{verb}", "/v1/nodes/{node}", ("get",)) for verb in (
            "introspect", "provide", "manage", "clean", "delete", "provision", "unprovision")}


def test_a_workbook_named_like_a_literal_route_is_read_and_deleted(app: falcon.App) -> None:
    """``GET /v1/workbooks/validate`` answered 405 (falcon routes the literal
    ``validate``), where the OpenAPI document promises ``/v1/workbooks/{workbook}``:
    schemathesis found it.  Now the workbook of that name answers."""
    api = falcon.testing.TestClient(app, headers={"X-Auth-Token": TOKEN})
    missing = api.simulate_get("/v1/workbooks/validate")
    assert missing.status_code == 404, missing.text
    assert "validate" in missing.json["error"]["message"]
    definition = ("version: '2.0'\nname: validate\nworkflows:\n  w:\n    tasks:\n"
                  "      t:\n        action: std.noop\n")
    made = api.simulate_post("/v1/workbooks", json={"definition": definition})
    assert made.status_code == 201, made.text
    read = api.simulate_get("/v1/workbooks/validate")
    assert read.status_code == 200, read.text
    assert read.json["name"] == "validate"
    checked = api.simulate_post("/v1/workbooks/validate", json={"definition": definition})
    assert checked.status_code == 200, checked.text
    assert api.simulate_delete("/v1/workbooks/validate").status_code == 204
    assert api.simulate_get("/v1/workbooks/validate").status_code == 404
    assert api.simulate_get("/v1/validations/run").status_code == 404


def test_a_route_added_without_a_declaration_is_caught(app: falcon.App) -> None:
    class Stray:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.media = {}

    class Extra:  # a handler method its route does not declare
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.media = {}

        def on_patch(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.media = {}

    app.add_route("/v1/stray", Stray())
    app.add_route("/v1/plans/{name}/extra", Extra())
    found = routed(app)
    assert found != declared()
    assert set(found) - set(declared()) == {"/v1/stray", "/v1/plans/{name}/extra"}


def _send(app: falcon.App, method: str, path: str, body: Any = None,
          data: str | None = None) -> falcon.testing.Result:
    return falcon.testing.TestClient(app).simulate_request(
        method, path, headers={"X-Auth-Token": TOKEN, "Content-Type": "application/json"},
        body=data if data is not None else json.dumps(body))


#: A body each route's schema refuses, and what the refusal says.  No plan, execution
#: or workflow of these names exists: a handler that ran would answer 404.
REFUSED = [
    ("PUT", "/v1/plans/p/parameters", {"parameters": [1]}, "'parameters' must be of type dict"),
    ("PUT", "/v1/plans/p/parameters", {}, "The request body needs 'parameters'."),
    ("PUT", "/v1/plans/p/capabilities", {"environments": {"a.yaml": "yes"}},
     "'environments.a.yaml' must be of type bool"),
    ("POST", "/v1/plans/p/environments", {"environments": [{"name": "e.yaml"}]},
     "'environments[0]' needs 'files'"),
    ("POST", "/v1/plans/p/environments", {"environments": [], "position": 1},
     "'environments' must not be empty"),
    ("POST", "/v1/plans/p/environments/remove", {"paths": ["a", 2]},
     "'paths[1]' must be of type str"),
    ("PUT", "/v1/plans/p/roles", {}, "either 'roles' (a list) or 'yaml' (a string)"),
    ("PUT", "/v1/plans/p/networks", {"networks": [], "yaml": "[]"},
     "either 'networks' (a list) or 'yaml'"),
    ("POST", "/v1/workflows/nope/executions", {"env": [1]}, "'env' must be of type dict"),
    ("POST", "/v1/workflows/nope/executions", {"evaluate_env": "no"},
     "'evaluate_env' must be of type bool"),
    ("PUT", "/v1/executions/e1", {"state": "ERROR", "bogus": 1}, "Unknown keys ['bogus']"),
    ("PUT", "/v1/executions/e1", {"params": {"other": 1}}, "Unknown keys ['other']: 'params'"),
    ("PUT", "/v1/executions/e1/tasks/t", {"state": "DONE"},
     "'state' must be 'RUNNING'. Only a rerun updates a task."),
    ("POST", "/v1/executions/e1/tasks/t/complete", {"state": "SUCCESS", "item": -1},
     "'item' must be at least 0"),
    ("POST", "/v1/executions/e1/tasks/t/complete", {"state": "SUCCESS", "item": True},
     "'item' must be of type int"),
    ("POST", "/v1/executions/e1/pause", {"state": "RUNNING"},
     "'state' must be 'PAUSED'. Resume an execution with POST"),
    ("POST", "/v1/executions/e1/cancel", {"state_info": 3}, "'state_info' must be of type str"),
    ("POST", "/v1/validations/run", {"inventory": "/etc/hosts"},
     "'inventory' must be 'localhost'"),
    ("POST", "/v1/validations/stop", {"execution": ""}, "'execution' must not be empty"),
    ("POST", "/v1/nodes/provision", {"plan": "p"}, "needs 'baremetal_deployment'"),
    ("POST", "/v1/backups", {"passphrase": "a long passphrase", "output": "/tmp/x"},
     "Unknown keys ['output']: the request body takes 'passphrase'."),
    ("POST", "/v1/backups/restore", {"passphrase": "x"}, "The request body needs 'upload'"),
    ("POST", "/v1/workbooks/validate", {"definition": 3}, "'definition' must be of type str"),
]


@pytest.mark.parametrize(("method", "path", "body", "said"), REFUSED,
                         ids=[f"{m} {p} {i}" for i, (m, p, _, _) in enumerate(REFUSED)])
def test_a_body_its_schema_refuses_is_a_400_naming_the_field(
        app: falcon.App, method: str, path: str, body: Any, said: str) -> None:
    answer = _send(app, method, path, body)
    assert answer.status_code == 400, answer.text
    assert answer.json["error"]["kind"] == "invalid-input"
    assert said in answer.json["error"]["message"], answer.json


def test_a_refusal_never_echoes_the_value_sent(app: falcon.App) -> None:
    answer = _send(app, "POST", "/v1/backups", {"passphrase": ["hunter2-secret"]})
    assert answer.status_code == 400
    assert "'passphrase' must be of type str" in answer.text
    assert "hunter2" not in answer.text


@pytest.mark.parametrize("data", ["[1]", '"text"', "{not json", ""])
def test_a_body_that_is_not_a_json_object_is_a_400(app: falcon.App, data: str) -> None:
    answer = _send(app, "PUT", "/v1/plans/p/parameters", data=data)
    assert answer.status_code == 400, answer.text
    assert answer.json["error"]["kind"] == "invalid-input"


def test_a_valid_body_reaches_its_handler(app: falcon.App) -> None:
    """A null field counts as left out, as before the schemas; an optional body may be
    empty: the handler runs (and finds no such plan or workflow)."""
    for method, path, body in [
            ("POST", "/v1/workflows/nope/executions", {"input": {}, "target": None}),
            ("PUT", "/v1/plans/p/parameters", {"parameters": {"A": None}, "validate": None}),
            ("POST", "/v1/plans/p/parameters/reset", None)]:
        answer = falcon.testing.TestClient(app).simulate_request(
            method, path, headers={"X-Auth-Token": TOKEN},
            **({} if body is None else {"json": body}))
        assert answer.status_code == 404, (path, answer.text)


def test_hostile_bodies_are_refused_as_before(app: falcon.App) -> None:
    deep = '{"parameters": {"A": ' + "[" * 900 + "]" * 900 + "}}"
    too_deep = _send(app, "PUT", "/v1/plans/p/parameters", data=deep)
    assert too_deep.status_code == 400 and too_deep.json["error"]["kind"] == "invalid-input"
    assert "Traceback" not in too_deep.text
    free = '{"input": {"a": ' + "[" * 900 + "]" * 900 + "}}"  # where the schema says nothing
    assert _send(app, "POST", "/v1/workflows/nope/executions", data=free).status_code == 400
    large = json.dumps({"parameters": {"A": "x" * (MAX_JSON + 1)}})
    too_large = _send(app, "PUT", "/v1/plans/p/parameters", data=large)
    assert too_large.status_code == 413, too_large.text
    assert "max_json_size" in too_large.text
    wide = json.dumps({"environments": {f"e{i}.yaml": "no" for i in range(200)}})[:MAX_JSON]
    answer = _send(app, "PUT", "/v1/plans/p/capabilities", data=wide)
    assert answer.status_code == 400 and len(answer.text) < 2000


def test_a_login_on_a_token_server_says_so_before_its_body_is_checked(
        app: falcon.App) -> None:
    answer = falcon.testing.TestClient(app).simulate_post("/v1/auth/tokens",
                                                          json={"username": "u"})
    assert answer.status_code == 400
    assert "auth_strategy = token" in answer.json["error"]["message"]


def _schema(method: str, path: str) -> dict[str, Any]:
    template = next(r for r in ROUTES if _matches(r.path, path))
    body = template.operations[method.lower()].body
    assert body is not None
    return body


def _matches(template: str, path: str) -> bool:
    parts, given = template.split("/"), path.split("/")
    return len(parts) == len(given) and all(
        p == g or (p.startswith("{") and p.endswith("}")) for p, g in zip(parts, given,
                                                                          strict=True))


#: Bodies the schemas accept (a null field counts as left out: not sent here).
ACCEPTED = [
    ("PUT", "/v1/plans/p/parameters", {"parameters": {"A": [1, {"b": None}]}, "validate": True}),
    ("PUT", "/v1/plans/p/roles", {"yaml": "- name: Controller\n"}),
    ("PUT", "/v1/plans/p/networks", {"networks": [{"name": "External"}]}),
    ("POST", "/v1/plans/p/environments",
     {"environments": [{"name": "e.yaml", "files": {"a.yaml": "{}"}}], "position": 2}),
    ("PUT", "/v1/executions/e1", {"state": "ERROR", "params": {"env": {"a": 1}}}),
    ("POST", "/v1/executions/e1/tasks/t/complete", {"state": "ERROR", "output": [None], "item": 0}),
    ("POST", "/v1/executions/e1/cancel", {"state": "CANCELLED", "state_info": "why"}),
    ("POST", "/v1/validations/run", {"group": "pre-deployment", "plan": "oc",
                                     "inventory": "localhost", "extra_vars": {}}),
    ("POST", "/v1/auth/tokens", {"username": "u", "password": "p", "project": "x"}),
    ("POST", "/v1/nodes", {"nodes": [{"name": "n"}], "initial_state": "manageable"}),
]


@pytest.mark.parametrize(("method", "path", "body", "accepted"),
                         [(m, p, b, False) for m, p, b, _ in REFUSED]
                         + [(m, p, b, True) for m, p, b in ACCEPTED])
def test_the_checker_agrees_with_jsonschema(method: str, path: str, body: Any,
                                            accepted: bool) -> None:
    """The server's checker of the keywords the schemas use says what JSON Schema (draft 7,
    the jsonschema package TaskFlow brings) says."""
    import jsonschema

    schema = _schema(method, path)
    assert jsonschema.Draft7Validator(schema).is_valid(body) is accepted
    assert (first_problem(schema, body) is None) is accepted


def test_every_declared_body_is_a_json_schema_the_checker_checks_whole() -> None:
    import jsonschema

    bodies = [op.body for r in ROUTES for op in r.operations.values()
              if op.body and op.body_type == JSON]
    assert len(bodies) > 25
    for body in bodies:
        jsonschema.Draft7Validator.check_schema(body)
    JsonBodies(ROUTES)  # every keyword checked (or it raises)


def test_a_schema_with_a_keyword_the_checker_does_not_check_is_refused() -> None:
    route = Route("/v1/things", "things", lambda services: None, {
        "post": Operation("Make", body={"type": "object", "properties": {
            "a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}})})
    with pytest.raises(ValueError, match=r"POST /v1/things/properties/a.*anyOf"):
        JsonBodies([route])


def test_a_million_values_are_checked_and_the_first_bad_one_named() -> None:
    schema = _schema("POST", "/v1/plans/p/environments/remove")
    paths: list[Any] = ["p"] * 1_000_000
    assert first_problem(schema, {"paths": paths}) is None
    paths[-1] = 1
    assert first_problem(schema, {"paths": paths}) == "'paths[999999]' must be of type str."
