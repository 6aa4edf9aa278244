"""Workflows started over HTTP use only the server paths it allows: template sources are
uploads (or under ``[api] allowed_paths``), outputs land in the download area, work
directories in the server's work area; a user workbook cannot reach other paths
through an action.  The Python API keeps accepting local paths."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.functional.http.conftest import Api, finished, running_api
from tests.functional.http.test_api import tarball
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow.client.paths import purge_downloads

CREATE = "/v1/workflows/create_deployment_plan/executions"
EXPORT = "/v1/workflows/export_deployment_plan/executions"


def _refused(api: Api, path: str, inputs: dict[str, Any], *words: str) -> None:
    before = api("GET", "/v1/executions").json()
    response = api("POST", path, json={"input": inputs})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["kind"] == "invalid-input"
    for word in words:
        assert word in error["message"], error["message"]
    assert api("GET", "/v1/executions").json() == before  # nothing started


@pytest.fixture
def secret_tree(tmp_path: Path) -> Path:
    """A template tree next to something no API user may read."""
    tree = write_tree(tmp_path / "server" / "templates", basic_tree())
    (tree / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    return tree


def test_templates_from_a_server_directory_are_refused(api: Api, secret_tree: Path) -> None:
    _refused(api, CREATE, {"plan": "stolen", "templates": str(secret_tree)},
             "'templates'", "POST /v1/uploads")
    _refused(api, CREATE, {"plan": "stolen", "templates": "/etc"}, "is not an upload")
    uploads = Path(api.client.data_dir) / "uploads"
    _refused(api, CREATE, {"plan": "stolen", "templates": f"{uploads}/../../.."},
             "is not an upload")
    _refused(api, CREATE, {"plan": "stolen", "templates": ["/etc"]}, "must be a path")
    assert api("GET", "/v1/plans").json() == []


def test_a_symlink_among_uploads_is_not_an_upload(api: Api, secret_tree: Path) -> None:
    uploads = Path(api.client.data_dir) / "uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    link = uploads / f"{'d' * 32}.tar.gz"
    link.symlink_to(secret_tree)
    _refused(api, CREATE, {"plan": "stolen", "templates": str(link)}, "is not an upload")


def test_an_upload_creates_the_plan(api: Api, tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "tree", basic_tree())
    upload = api("POST", "/v1/uploads", data=tarball(tree),
                 headers={"Content-Type": "application/gzip"}).json()
    # The answer names the upload in the server's data area, not the area's path.
    assert upload["path"] == f"<data>/uploads/{upload['id']}.tar.gz"
    started = api("POST", CREATE, json={"input": {"plan": "up", "templates": upload["path"]}})
    assert started.status_code == 202, started.text
    assert finished(api, started.json()["id"])["state"] == "SUCCESS"
    record = api("GET", f"/v1/executions/{started.json()['id']}").text
    assert str(api.client.data_dir) not in record and upload["path"] in record


def test_allowed_paths_let_a_directory_in(tmp_path: Path, secret_tree: Path) -> None:
    allowed = secret_tree.parent
    with running_api(tmp_path / "srv", {"api": {"allowed_paths": [str(allowed)]}}) as api:
        started = api("POST", CREATE, json={"input": {"plan": "ok", "templates": str(secret_tree)}})
        assert started.status_code == 202, started.text
        assert finished(api, started.json()["id"])["state"] == "SUCCESS"
        outside = write_tree(tmp_path / "elsewhere", basic_tree())
        _refused(api, CREATE, {"plan": "no", "templates": str(outside)},
                 "or a path under [api] allowed_paths")
        # A link inside the allowed directory that leads out of it is followed first.
        (allowed / "escape").symlink_to(outside)
        _refused(api, CREATE, {"plan": "no", "templates": str(allowed / "escape")},
                 "is not an upload")


def test_export_writes_only_to_the_download_area(api: Api, tmp_path: Path) -> None:
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    target = tmp_path / "anywhere.tar.gz"
    _refused(api, EXPORT, {"plan": "p", "output": str(target)}, "plain file name")
    _refused(api, EXPORT, {"plan": "p", "output": "../x.tar.gz"}, "plain file name")
    assert not target.exists()
    started = api("POST", EXPORT, json={"input": {"plan": "p", "output": "p.tar.gz"}})
    assert started.status_code == 202, started.text
    link = started.json()["downloads"]["output"]
    assert finished(api, started.json()["id"])["state"] == "SUCCESS"
    response = api("GET", link)
    assert response.status_code == 200
    assert response.headers["Content-Disposition"].endswith('"p.tar.gz"')
    with tarfile.open(fileobj=io.BytesIO(response.content)) as archive:
        assert "plan-environment.yaml" in archive.getnames()
    assert api("GET", "/v1/downloads/" + "0" * 32).status_code == 404
    assert api("GET", "/v1/downloads/..%2F..%2Fetc").status_code == 404


def test_old_downloads_are_deleted(tmp_path: Path) -> None:
    downloads = tmp_path / "data" / "downloads"
    old, fresh = downloads / ("a" * 32), downloads / ("b" * 32)
    for directory in (old, fresh):
        directory.mkdir(parents=True)
        (directory / "x.tar.gz").write_bytes(b"x")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    (downloads / "notes").mkdir()
    with running_api(tmp_path, {"api": {"upload_ttl": 3600}}) as api:
        assert api("GET", f"/v1/downloads/{'a' * 32}").status_code == 404
        assert api("GET", f"/v1/downloads/{'b' * 32}").content == b"x"
    assert sorted(p.name for p in downloads.iterdir()) == ["b" * 32, "notes"]
    assert purge_downloads(downloads, 0) == []


def test_deploy_work_dir_is_a_name_in_the_work_area(api: Api, tmp_path: Path) -> None:
    for work_dir in (str(tmp_path / "w"), "/etc", "../w", ".hidden"):
        _refused(api, "/v1/workflows/deploy/executions",
                 {"plan": "p", "work_dir": work_dir}, "'work_dir'", "plain name")



def test_deploy_ssh_key_is_a_server_path_it_allows(api: Api, secret_tree: Path) -> None:
    """The key config-download's inventory names is read by Ansible on the server:
    over HTTP only an allowed path (refused before anything starts)."""
    for workflow in ("deploy", "config_download_only"):
        _refused(api, f"/v1/workflows/{workflow}/executions",
                 {"plan": "p", "work_dir": "w", "overcloud_ssh_key": str(secret_tree / "id_rsa")},
                 "'overcloud_ssh_key'", "is not an upload")


USER_WORKBOOK = """
version: '2.0'
name: mine
workflows:
  literal:
    input: [plan]
    tasks:
      create:
        action: plan.create plan=<% $.plan %> templates="{templates}"
  computed:
    input: [plan, dir]
    tasks:
      create:
        action: plan.create
        input:
          plan: <% $.plan %>
          templates: <% $.dir + '/templates' %>
  shadowed:
    input: [plan, templates]
    tasks:
      pick:
        action: std.echo output="{templates}"
        publish:
          templates: <% task().result %>
        on-success: create
      create:
        action: plan.create
        input:
          plan: <% $.plan %>
          templates: <% $.templates %>
  calls_with_a_default:
    input: [plan]
    tasks:
      call:
        workflow: with_default
        input:
          plan: <% $.plan %>
  with_default:
    input:
      - plan
      - templates: {templates}
    tasks:
      create:
        action: plan.create
        input:
          plan: <% $.plan %>
          templates: <% $.templates %>
  passes_through:
    input: [plan, source]
    tasks:
      call:
        workflow: with_default
        input:
          plan: <% $.plan %>
          templates: <% $.source %>
"""


@pytest.fixture
def user_api(tmp_path: Path, secret_tree: Path) -> Iterator[Api]:
    with running_api(tmp_path / "srv") as api:
        book = tmp_path / "mine.yaml"
        book.write_text(USER_WORKBOOK.format(templates=secret_tree))
        api.client.workbooks.create(book)
        yield api


@pytest.mark.parametrize("workflow, words", [
    ("literal", "task 'create' of 'mine.literal' gives 'templates' the value"),
    ("computed", "gives 'templates' the value \"<% $.dir + '/templates' %>\""),
    ("shadowed", "task 'create' of 'mine.shadowed' gives 'templates'"),
    ("calls_with_a_default", "gives 'templates' its default"),
    ("with_default", "is not an upload"),
])
def test_user_workbooks_cannot_reach_server_paths(user_api: Api, workflow: str,
                                                  words: str, secret_tree: Path) -> None:
    inputs = {"plan": "stolen", "dir": str(secret_tree.parent),
              "templates": "/etc"}
    wanted = {i["name"] for w in user_api("GET", "/v1/workflows").json()
              if w["name"] == f"mine.{workflow}" for i in w["inputs"]}
    _refused(user_api, f"/v1/workflows/mine.{workflow}/executions",
             {k: v for k, v in inputs.items() if k in wanted} if workflow != "with_default"
             else {"plan": "stolen"}, words)
    assert user_api("GET", "/v1/plans").json() == []


def test_a_path_passed_through_a_sub_workflow_is_checked(user_api: Api,
                                                         secret_tree: Path) -> None:
    _refused(user_api, "/v1/workflows/mine.passes_through/executions",
             {"plan": "stolen", "source": str(secret_tree)}, "'source'", "is not an upload")


def test_the_python_api_keeps_local_paths(user_api: Api, secret_tree: Path) -> None:
    execution = user_api.client.executions.create("mine.literal", {"plan": "local"})
    assert execution.state == "SUCCESS"
    assert user_api.client.executions.create(
        "create_deployment_plan", {"plan": "local2", "templates": str(secret_tree)}
    ).state == "SUCCESS"


def test_a_cli_path_under_no_server_root_is_not_shown(api: Api) -> None:
    """An execution the CLI started with ``--templates`` outside every known root
    (issue 29: ``"templates": "/srv/tht"`` was shown as it is) names only the last
    part of it over HTTP, in the execution, the list and the event stream."""
    outside = Path(tempfile.mkdtemp(prefix="s29-tht-", dir="/var/tmp"))
    try:
        templates = write_tree(outside / "tht", basic_tree())
        api.client.plans.create("cli", templates)
        [execution] = api.client.executions.list()
        assert execution.input["templates"] == str(templates)
        answers = [api("GET", "/v1/executions").text,
                   api("GET", f"/v1/executions/{execution.id}").text,
                   api("GET", f"/v1/executions/{execution.id}/tasks").text,
                   api("GET", f"/v1/executions/{execution.id}/events").text]
        for answer in answers:
            assert str(outside) not in answer
        assert '"templates": "<server>/tht"' in answers[1]
    finally:
        shutil.rmtree(outside)
