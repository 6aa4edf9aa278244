"""One operation, one workflow: a plan created, updated, exported and deleted from
the Python API, the CLI (a subprocess) and the HTTP API (its plan resources and its
workflow executions) leaves executions of the same named workflow with the same tasks,
in one executions database that every interface lists."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.http.conftest import Api, finished, serving
from tests.functional.http.test_api import tarball
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import config
from tripleo_flow.client import Client
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow.plans.plan import PlanRepository

CREATE = "tripleo.plan.create_deployment_plan"
UPDATE = "tripleo.plan.update_deployment_plan"
EXPORT = "tripleo.plan.export_deployment_plan"
DELETE = "tripleo.plan.delete_deployment_plan"
RENDER = "tripleo.plan.render_deployment_plan"


class Cli:
    """The installed ``tripleo-flow`` command on the data directory of ``home``."""

    def __init__(self, xdg: Path, home: Path) -> None:
        exe = shutil.which("tripleo-flow", path=os.path.dirname(sys.executable))
        assert exe, "tripleo-flow is not installed in this virtualenv (pip install -e .)"
        self.exe = exe
        self.env = dict(os.environ, XDG_DATA_HOME=str(xdg), HOME=str(home))

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([self.exe, *args], env=self.env, capture_output=True, text=True,
                              timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"{args} exited {proc.returncode}: {proc.stderr}")
        return proc


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[tuple[Api, Cli]]:
    """The HTTP API (over a client) and the CLI, both on the CLI's default data
    directory: one plan store, one executions database, one lock directory."""
    data = tmp_path / "xdg" / "tripleo-flow"
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("data_dir", str(data))
    client = Client(conf, store=LocalStore(data / "plans"),
                    locks=PlanLocks(f"file://{data / 'locks'}", timeout=30))
    token = secrets.token_hex(16)
    client.conf.set_override("auth_token", token, group="api")
    with serving(client, token) as api:
        yield api, Cli(tmp_path / "xdg", tmp_path / "home")


def _runs(client: Client, workflow: str) -> dict[str, tuple[str, list[str]]]:
    """``{plan: (state, ["task STATE", ...] in order)}`` of the executions of
    ``workflow`` (a task no transition reached is not listed: the plan workflows run
    on Mistral's state machine, where it has no task execution)."""
    runs = {}
    for execution in client.executions.list(workflow):
        tasks = sorted(client.tasks.list(execution.id), key=lambda t: t.started_at or 0)
        runs[execution.input["plan"]] = (execution.state, [f"{t.name} {t.state}" for t in tasks])
    return runs


def _done(*names: str, skipped: str = "") -> list[str]:
    return [f"{n} SUCCESS" for n in names if n != skipped]


def test_every_interface_runs_the_same_plan_workflows(shared: tuple[Api, Cli],
                                                      tmp_path: Path) -> None:
    api, cli = shared
    client = api.client
    tree = write_tree(tmp_path / "tree", basic_tree())
    env = tmp_path / "env.yaml"
    env.write_text("parameter_defaults:\n  NtpServer: [pool.ntp.org]\n")

    # create, the same templates, from each interface
    made = client.plans.create("by-client", tree)
    shown = json.loads(cli("plan", "create", "by-cli", "--templates", str(tree),
                           "-f", "json").stdout)
    posted = api("POST", "/v1/plans", params={"name": "by-http"}, data=tarball(tree),
                 headers={"Content-Type": "application/gzip"})
    assert posted.status_code == 201, posted.text
    upload = api("POST", "/v1/uploads", data=tarball(tree),
                 headers={"Content-Type": "application/gzip"}).json()
    started = api("POST", f"/v1/workflows/{CREATE}/executions",
                  json={"input": {"plan": "by-gui", "templates": upload["path"]}})
    assert started.status_code == 202, started.text
    assert finished(api, started.json()["id"])["state"] == "SUCCESS"
    # What each interface shows of the result did not change with the workflow.
    expected = {"files": made["files"], "rendered": made["rendered"],
                "passwords": made["passwords"], "environments": []}
    assert made["passwords"] > 0 and made["rendered"] >= 5
    for result, name in ((made, "by-client"), (shown, "by-cli"),
                         (posted.json(), "by-http")):
        assert result == {"name": name, **expected}

    creates = _runs(client, CREATE)
    assert set(creates) == {"by-client", "by-cli", "by-http", "by-gui"}
    assert list(creates.values()) == [
        ("SUCCESS", _done("create_plan", "add_environments", "process_templates",
                          "generate_passwords", "publish_plan", skipped="add_environments"))] * 4

    # with user environments: one more task, whichever interface
    with_env = client.plans.create("env-client", tree, environments=[str(env)])
    assert with_env["environments"] == ["user-environments/1/env.yaml"]
    cli("plan", "create", "env-cli", "--templates", str(tree), "-e", str(env))
    creates = _runs(client, CREATE)
    assert creates["env-client"] == creates["env-cli"] == (
        "SUCCESS", _done("create_plan", "add_environments", "process_templates",
                         "generate_passwords", "publish_plan"))

    # update, export, delete
    client.plans.update("by-client", tree)
    cli("plan", "update", "by-cli", "--templates", str(tree))
    assert api("PUT", "/v1/plans/by-http", data=tarball(tree),
               headers={"Content-Type": "application/gzip"}).status_code == 200
    client.plans.export("by-client", tmp_path / "client.tar.gz")
    cli("plan", "export", "by-cli", "-o", str(tmp_path / "cli.tar.gz"))
    exported = api("GET", "/v1/plans/by-http/export")
    assert exported.status_code == 200 and exported.content[:2] == b"\x1f\x8b"
    assert (tmp_path / "client.tar.gz").stat().st_size > 0
    assert (tmp_path / "cli.tar.gz").stat().st_size > 0
    client.plans.delete("by-client")
    cli("plan", "delete", "by-cli")
    assert api("DELETE", "/v1/plans/by-http").status_code == 204
    for workflow, tasks in ((UPDATE, _done("update_plan", "add_environments",
                                           "process_templates", "generate_passwords",
                                           skipped="add_environments")),
                            (EXPORT, _done("export_plan")), (DELETE, _done("delete_plan"))):
        runs = _runs(client, workflow)
        assert runs == {p: ("SUCCESS", tasks) for p in ("by-client", "by-cli", "by-http")}
    assert [p["name"] for p in client.plans.list()] == ["by-gui", "env-cli", "env-client"]

    # The CLI lists every execution, whoever started it.
    listed = json.loads(cli("execution", "list", "-f", "json").stdout)
    assert sorted(row["ID"] for row in listed) == sorted(e.id for e in client.executions.list())
    assert len(listed) == 6 + 3 * 3


def test_a_render_is_an_execution_from_every_interface(shared: tuple[Api, Cli],
                                                      tmp_path: Path) -> None:
    """``plan render`` (CLI), ``Client.plans.render`` and the HTTP API run the workflow
    ``tripleo.plan.render_deployment_plan`` (issue 28: the Python API and the CLI ran
    its action outside any workflow, recording nothing); each shows what it did as
    before, and a refused render is recorded, reverted, with the error's kind."""
    api, cli = shared
    client = api.client
    client.plans.create("overcloud", write_tree(tmp_path / "tree", basic_tree()))
    rendered = len(PlanRepository(client._session.store).manifest("overcloud").rendered)
    # A rendered file edited by hand: the first render writes it back, the next ones
    # find nothing to write.
    [edited] = PlanRepository(client._session.store).manifest("overcloud").rendered[:1]
    client._session.store.put_objects("overcloud", {edited: b"edited: by hand\n"})
    shown = client.plans.render("overcloud")
    assert shown == {"name": "overcloud", "rendered": rendered, "written": 1, "removed": 0}
    again = json.loads(cli("plan", "render", "overcloud", "-f", "json").stdout)
    assert again == {**shown, "written": 0}
    started = api("POST", f"/v1/workflows/{RENDER}/executions",
                  json={"input": {"plan": "overcloud"}})
    assert started.status_code == 202, started.text
    ended = finished(api, started.json()["id"])
    assert ended["state"] == "SUCCESS", ended
    assert ended["output"] == {"rendered": rendered, "written": 0, "removed": 0}
    proc = cli("plan", "render", "ghost", check=False)
    assert proc.returncode == 3 and "Plan 'ghost' does not exist" in proc.stderr
    assert _runs(client, RENDER) == {"overcloud": ("SUCCESS", _done("process_templates")),
                                     "ghost": ("ERROR", ["process_templates ERROR"])}
    assert len(client.executions.list(RENDER)) == 4


def test_a_refused_operation_fails_the_same_way_from_every_interface(
        shared: tuple[Api, Cli], tmp_path: Path) -> None:
    """The error of the task that failed reaches each interface as before (its kind:
    exit code, HTTP status, message), and the failed run is recorded, reverted."""
    api, cli = shared
    client = api.client
    client.plans.create("taken", sample=True)

    proc = cli("plan", "create", "taken", "--sample", check=False)
    assert proc.returncode == 4, proc.stderr  # conflict
    assert "Plan 'taken' already exists" in proc.stderr
    assert "Traceback" not in proc.stderr
    posted = api("POST", "/v1/plans", params={"name": "taken", "sample": "true"})
    assert posted.status_code == 409
    assert "Plan 'taken' already exists" in posted.json()["error"]["message"]

    proc = cli("plan", "delete", "ghost", check=False)
    assert proc.returncode == 3 and "Plan 'ghost' does not exist" in proc.stderr
    assert api("DELETE", "/v1/plans/ghost").status_code == 404

    creates = client.executions.list(CREATE)
    assert [(e.state, e.failed_task) for e in creates] == [
        ("SUCCESS", None), ("ERROR", "create_plan"), ("ERROR", "create_plan")]
    deletes = client.executions.list(DELETE)
    assert [(e.state, e.failed_task) for e in deletes] == [("ERROR", "delete_plan")] * 2
    assert [p["name"] for p in client.plans.list()] == ["taken"]


def test_the_new_workflow_inputs_refuse_what_is_not_plan_data(shared: tuple[Api, Cli],
                                                              tmp_path: Path) -> None:
    """Over the HTTP API, ``data_files`` names only the three data files and
    ``user_environments`` holds only environment files: anything else fails the
    run before a plan exists, and nothing is written outside the plan."""
    api, _ = shared
    upload = api("POST", "/v1/uploads", data=tarball(write_tree(tmp_path / "t", basic_tree())),
                 headers={"Content-Type": "application/gzip"}).json()
    for extra, message in (({"data_files": {"../../escaped.yaml": "a: 1\n"}},
                            "is not a data file a plan takes"),
                           ({"user_environments": [{"name": "x.yaml", "files": "nope"}]},
                            "An environment is")):
        started = api("POST", f"/v1/workflows/{CREATE}/executions",
                      json={"input": {"plan": "hostile", "templates": upload["path"], **extra}})
        assert started.status_code == 202, started.text
        ended = finished(api, started.json()["id"])
        assert ended["state"] == "ERROR", ended
        assert message in ended["error"]
    assert api("GET", "/v1/plans/hostile").status_code == 404
    assert not list(tmp_path.rglob("escaped.yaml"))


def test_secrets_of_user_environments_stay_out_of_the_executions_database(
        shared: tuple[Api, Cli], tmp_path: Path) -> None:
    """An environment file given to plan create (-e) travels as text in the workflow's
    inputs: its secret values are masked in the record, while the plan keeps them."""
    api, cli = shared
    secret = "hunter2-" + secrets.token_hex(8)
    env = tmp_path / "secret-env.yaml"
    env.write_text(f"parameter_defaults:\n  AdminPassword: {secret}\n  NtpServer: ntp.example\n")
    api.client.plans.create("by-client", sample=True, environments=[str(env)])
    cli("plan", "create", "by-cli", "--sample", "-e", str(env))
    for name in ("by-client", "by-cli"):
        [stored] = [e["path"] for e in api.client.environments.list(name) if e.get("user")]
        assert secret in api.client._session.store.get_object(name, stored).decode()
    records = api.client.executions.list(CREATE)
    assert len(records) == 2
    for record in records:
        [given] = record.input["user_environments"]
        assert given["files"]["secret-env.yaml"] != env.read_text()
        assert secret not in json.dumps(record.input)
    database = tmp_path / "xdg" / "tripleo-flow"
    files = list(database.glob("executions.sqlite*"))
    assert files and all(secret.encode() not in f.read_bytes() for f in files)


def test_every_interface_runs_the_same_plan_change_workflows(shared: tuple[Api, Cli],
                                                             tmp_path: Path) -> None:
    """Parameters, user environments and passwords changed from the Python API, the
    CLI and the HTTP API: each change is an execution of the same named workflow with
    the same tasks, and the plans end up alike."""
    api, cli = shared
    client = api.client
    tree = write_tree(tmp_path / "tree", basic_tree())
    env = tmp_path / "env.yaml"
    env.write_text("parameter_defaults:\n  NtpServer: [pool.ntp.org]\n")
    plans = ("by-client", "by-cli", "by-http")
    for plan in plans:
        client.plans.create(plan, tree)

    assert client.parameters.set("by-client", {"Keep": 1, "Drop": "x"}) == ["Drop", "Keep"]
    cli("parameters", "set", "--plan", "by-cli", "Keep=1", "Drop=x")
    put = api("PUT", "/v1/plans/by-http/parameters",
              json={"parameters": {"Keep": 1, "Drop": "x"}})
    assert put.status_code == 200, put.text
    assert client.parameters.reset("by-client", ["Drop"]) == ["Drop"]
    cli("parameters", "reset", "--plan", "by-cli", "Drop")
    reset = api("POST", "/v1/plans/by-http/parameters/reset", json={"names": ["Drop"]})
    assert reset.status_code == 200, reset.text

    added = client.environments.add("by-client", [str(env)])
    assert added == ["user-environments/1/env.yaml"]
    cli("plan", "environment", "add", "by-cli", str(env))
    posted = api("POST", "/v1/plans/by-http/environments", json={"environments": [
        {"name": "env.yaml", "files": {"env.yaml": env.read_text()}}]})
    assert posted.status_code in (200, 201), posted.text
    assert client.environments.remove("by-client", added) == added
    cli("plan", "environment", "remove", "by-cli", added[0])
    removed = api("POST", "/v1/plans/by-http/environments/remove", json={"paths": added})
    assert removed.status_code == 200, removed.text

    before = {p: client.passwords.get(p) for p in plans}
    client.passwords.rotate("by-client")
    cli("passwords", "rotate", "--plan", "by-cli")
    started = api("POST", "/v1/workflows/tripleo.parameters.rotate_passwords/executions",
                  json={"input": {"plan": "by-http"}})
    assert started.status_code == 202, started.text
    assert finished(api, started.json()["id"])["state"] == "SUCCESS"

    for workflow, tasks in (
            ("tripleo.parameters.update_parameters", ["update_parameters SUCCESS"]),
            ("tripleo.parameters.reset_parameters", ["reset_parameters SUCCESS"]),
            ("tripleo.plan.add_environments", ["add_environments SUCCESS"]),
            ("tripleo.plan.remove_environments", ["remove_environments SUCCESS"]),
            ("tripleo.parameters.rotate_passwords", ["rotate_passwords SUCCESS"])):
        assert _runs(client, workflow) == {p: ("SUCCESS", tasks) for p in plans}, workflow
    changed = []
    for plan in plans:
        assert client.parameters.get(plan) == {"Keep": 1}
        assert [e["path"] for e in client.environments.list(plan) if e["user"]] == []
        rotated = client.passwords.get(plan)
        assert set(rotated) == set(before[plan])
        changed.append(sorted(k for k in rotated if rotated[k] != before[plan][k]))
    assert changed[0] and changed == [changed[0]] * 3  # the same passwords rotated
