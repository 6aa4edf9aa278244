"""Bad input over HTTP, on both plan stores: 400 or 404 with the error's message,
never a 500, and the plan byte-identical after every refused request (issue 10)."""

from __future__ import annotations

import gzip
import io
import secrets
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.fixtures_plans import make_client, snapshot
from tests.functional.http.conftest import Api, finished, serving
from tests.functional.http.test_api import tarball
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import exceptions
from tripleo_flow.http.app import ROUTES
from tripleo_flow.plans.store import PlanStore

pytestmark = pytest.mark.functional

GZ = {"Content-Type": "application/gzip"}


@pytest.fixture
def api(tmp_path: Path, plan_store: PlanStore) -> Iterator[Api]:
    """The API over each plan store, with small limits, and a plan 'overcloud'."""
    plan_store.history_max = 3
    client = make_client(tmp_path, plan_store)
    token = secrets.token_hex(16)
    client.conf.set_override("auth_token", token, group="api")
    client.conf.set_override("archive_max_size", 1 << 20, group="limits")
    with serving(client, token) as running:
        tree = write_tree(tmp_path / "tree", basic_tree())
        created = running("POST", "/v1/plans", params={"name": "overcloud"},
                          data=tarball(tree), headers=GZ)
        assert created.status_code == 201, created.text
        yield running


def _plan(api: Api) -> dict[str, bytes]:
    return snapshot(api.client._session.store, "overcloud")


def _error(response: requests.Response, status: int) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    return str(response.json()["error"]["message"])


def test_restore_finds_only_version_ids_the_store_issued(api: Api, tmp_path: Path) -> None:
    assert api("PUT", "/v1/plans/overcloud/parameters",
               json={"parameters": {"ComputeCount": 3}}).status_code == 200
    (tmp_path / "evil.yaml").write_text("parameter_defaults: {Stolen: true}\n")
    before = _plan(api)
    for version in ["../" * 12 + str(tmp_path / "evil.yaml").lstrip("/"),
                    "../../objects/plan-environment.yaml", "../../../meta.json",
                    "00000000000000000001", "1234567890.12345", "null", "", "a/b"]:
        response = api("POST", "/v1/plans/overcloud/restore", json={"version": version})
        assert _error(response, 404) == exceptions.VersionNotFound(
            "overcloud", version).render(exceptions.API)
        assert _plan(api) == before
    history = api("GET", "/v1/plans/overcloud/history").json()
    restored = api("POST", "/v1/plans/overcloud/restore", json={"version": history[1]["version"]})
    assert restored.status_code == 200
    assert b"ComputeCount" not in _plan(api)["plan-environment.yaml"]


def test_history_is_pruned_to_plan_history_max(api: Api) -> None:
    for count in range(1, 6):
        api("PUT", "/v1/plans/overcloud/parameters", json={"parameters": {"ComputeCount": count}})
    history = api("GET", "/v1/plans/overcloud/history").json()
    assert len(history) == 3 and history[0]["current"]


_PLAN_ROUTES = [(route.path, method) for route in ROUTES if "{name}" in route.path
                and route.path.startswith("/v1/plans/") for method in route.operations]


def test_every_plan_route_refuses_bad_plan_names_with_400(api: Api) -> None:
    before = _plan(api)
    for bad in ("a" * 300, "-bad", "b" * 129):
        for path, method in _PLAN_ROUTES:
            body = {"data": b"x", "headers": GZ} if path == "/v1/plans/{name}" and \
                method == "put" else {"json": {}}
            response = api(method.upper(), path.replace("{name}", bad), **body)
            assert response.status_code == 400, (path, method, response.text)
            assert response.json()["error"]["kind"] == "invalid-input"
        created = api("POST", "/v1/plans", params={"name": bad, "sample": "true"})
        assert "Invalid plan name" in _error(created, 400)
    assert [p["name"] for p in api("GET", "/v1/plans").json()] == ["overcloud"]
    assert _plan(api) == before


def test_parameter_names_that_heat_cannot_take_are_refused(api: Api) -> None:
    before = _plan(api)
    for name in ("../x", "A B", "", "1abc", "a" * 256):
        response = api("PUT", "/v1/plans/overcloud/parameters",
                       json={"parameters": {name: 1, "ComputeCount": 2}})
        assert "Invalid parameter name" in _error(response, 400)
    assert _plan(api) == before


def _bomb() -> bytes:
    info = tarfile.TarInfo("big.bin")
    info.size = 50 << 20
    return gzip.compress(info.tobuf() + b"\0" * (info.size + 1024))


def test_archives_past_the_limits_are_refused(api: Api) -> None:
    before = _plan(api)
    bomb = _bomb()
    assert "archive_max_size" in _error(
        api("POST", "/v1/plans", params={"name": "other"}, data=bomb, headers=GZ), 400)
    assert "archive_max_size" in _error(api("PUT", "/v1/plans/overcloud", data=bomb,
                                            headers=GZ), 400)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name in ("overcloud.yaml", ".tripleo-flow/manifest.json", "o" * 256):
            info = tarfile.TarInfo(name)
            archive.addfile(info, io.BytesIO(b""))
    message = _error(api("PUT", "/v1/plans/overcloud", data=buffer.getvalue(), headers=GZ), 400)
    assert ".tripleo-flow/" in message
    assert [p["name"] for p in api("GET", "/v1/plans").json()] == ["overcloud"]
    assert _plan(api) == before


def test_a_wrong_shape_capabilities_map_is_a_400_naming_the_entry(api: Api) -> None:
    api.client._session.store.put_object("overcloud", "capabilities-map.yaml",
                                         b"topics:\n  - title: T\n    environment_groups: [[1]]\n")
    before = _plan(api)
    for method, body in (("GET", None), ("PUT", {"environments": {"environments/base.yaml":
                                                                   True}})):
        message = _error(api(method, "/v1/plans/overcloud/capabilities", json=body), 400)
        assert "capabilities-map.yaml" in message
        assert "topics[0].environment_groups[0] must be a mapping" in message
    assert _plan(api) == before


@pytest.mark.parametrize("workflow", ["tripleo.deploy.deploy",
                                      "tripleo.deploy.config_download_only",
                                      "tripleo.deploy.config_download_deploy"])
def test_a_deploy_started_over_http_keeps_the_deploy_rules(api: Api, workflow: str) -> None:
    """The GUI starts the deploy workflows through POST .../executions: their rules on
    the inputs are the workflows' own first task, so they hold there as for the CLI
    (issue 28: Ansible tags without run_ansible were silently ignored over HTTP); so
    do the steps after the stack, the sub-workflow of both, started alone."""
    before = api("GET", "/v1/plans/overcloud/deployment").json()
    steps = {"heat": {}, "stack_request": {}} if workflow.endswith("_deploy") else {}
    started = api("POST", f"/v1/workflows/{workflow}/executions",
                  json={"input": {"plan": "overcloud", "work_dir": "w",
                                  "ansible_tags": "step0", **steps}})
    assert started.status_code in (201, 202), started.text
    ended = finished(api, started.json()["id"])
    assert ended["state"] == "ERROR", ended
    assert "with --run-ansible" in ended["error"], ended["error"]
    # refused before anything changed: no deployment status, no work dir
    assert api("GET", "/v1/plans/overcloud/deployment").json() == before
    assert not (Path(api.client.data_dir) / "work" / "w").exists()


_ENV = {"name": "env.yaml", "files": {"env.yaml": "parameter_defaults: {A: 1}\n"}}
_BAREMETAL = "- name: Controller\n  count: 1\n"


@pytest.mark.parametrize(("given", "refused"), [
    ({"environments": [_ENV]}, {"user_environments": [_ENV]}),
    ({"baremetal_deployment": _BAREMETAL}, {"baremetal_deployment": _BAREMETAL})])
def test_config_download_only_refuses_what_it_would_not_read_over_http(
        api: Api, tmp_path: Path, given: dict[str, Any], refused: dict[str, Any]) -> None:
    """``config_download_only`` re-renders the kept stack without reading the plan: user
    environments or a baremetal deployment given to it are refused by the workflow's
    own first task, so a start over HTTP (the GUI's POST .../executions) is refused with
    the message the CLI and the Python API give, and nothing changes (issue 28)."""
    before = (_plan(api), api("GET", "/v1/plans/overcloud/deployment").json())
    with pytest.raises(exceptions.InvalidInput) as raised:  # the Python API's refusal
        api.client.deployments.create("overcloud", work_dir=tmp_path / "py",
                                      config_download_only=True,
                                      **given)
    started = api("POST", "/v1/workflows/tripleo.deploy.config_download_only/executions",
                  json={"input": {"plan": "overcloud", "work_dir": "w", **refused}})
    assert started.status_code in (201, 202), started.text
    ended = finished(api, started.json()["id"])
    assert ended["state"] == "ERROR", ended
    assert str(raised.value) in ended["error"], (str(raised.value), ended["error"])
    assert "leave out -e, --environment-directory and --baremetal-deployment" in ended["error"]
    assert (_plan(api), api("GET", "/v1/plans/overcloud/deployment").json()) == before
    assert not (Path(api.client.data_dir) / "work" / "w").exists()
    assert not (tmp_path / "py").exists()
