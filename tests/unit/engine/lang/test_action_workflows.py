"""An action run as an execution (engine/lang/action_workflows.py): the one-task
workflow the engine makes for it, the shipped one-action workflows made the same way
(client/workbooks.py ACTION_WORKFLOWS), and what an HTTP API user may start
(client/action_executions.py, ``[api] action_executions_allowed``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host, until
from tests.fixtures_plans import make_client
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import exceptions
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import Client, workbooks
from tripleo_flow.client.paths import ServerPaths
from tripleo_flow.config_api import ACTION_EXECUTIONS_ALLOWED
from tripleo_flow.engine.lang import action_workflows, workbook_loader
from tripleo_flow.engine.lang.workbook_model import WorkflowInput
from tripleo_flow.plans.local import LocalStore

REGISTRY = ActionRegistry.load()

#: What the 15 one-action workflows of workbooks/ took and gave before they were made:
#: name -> (action, task, inputs with their defaults, output keys).
BEFORE: dict[str, tuple[str, str, list[tuple[str, bool, Any]], list[str]]] = {
    "tripleo.heat.launch": ("heat.launch", "launch_heat", [
        ("heat_dir", True, None), ("heat_type", False, None), ("restore_db", False, False)],
        ["endpoint"]),
    "tripleo.heat.kill": ("heat.kill", "kill_heat", [
        ("heat_dir", True, None), ("heat_type", False, None)], ["killed"]),
    "tripleo.heat.dump_db": ("heat.dump_db", "dump_db", [
        ("heat_dir", True, None), ("heat_type", False, None)], ["dump"]),
    "tripleo.heat.restore_db": ("heat.restore_db", "restore_db", [
        ("heat_dir", True, None), ("heat_type", False, None)], ["endpoint"]),
    "tripleo.parameters.update_parameters": ("parameters.update", "update_parameters", [
        ("plan", True, None), ("parameters", True, None), ("key", False, "parameter_defaults"),
        ("validate", False, False)], ["result"]),
    "tripleo.parameters.reset_parameters": ("parameters.reset", "reset_parameters", [
        ("plan", True, None), ("names", False, None)], ["result"]),
    "tripleo.parameters.rotate_passwords": ("passwords.rotate", "rotate_passwords", [
        ("plan", True, None), ("rotate", False, None), ("do_not_rotate", False, None)],
        ["result"]),
    "tripleo.plan.delete_deployment_plan": ("plan.delete", "delete_plan", [
        ("plan", True, None), ("force", False, False)], ["deleted"]),
    "tripleo.plan.restore_deployment_plan": ("plan.restore", "restore_plan", [
        ("plan", True, None), ("version", True, None), ("keep_passwords", False, True)],
        ["restored", "passwords_kept"]),
    "tripleo.plan.render_deployment_plan": ("templates.process", "process_templates", [
        ("plan", True, None)], ["rendered", "written", "removed"]),
    "tripleo.plan.export_deployment_plan": ("plan.export", "export_plan", [
        ("plan", True, None), ("output", True, None), ("secrets", False, False)], ["export"]),
    "tripleo.plan.update_capabilities": ("capabilities.update", "update_capabilities", [
        ("plan", True, None), ("environments", True, None), ("purge", False, False)],
        ["result"]),
    "tripleo.plan.add_environments": ("environments.add", "add_environments", [
        ("plan", True, None), ("user_environments", True, None), ("position", False, None),
        ("replace", False, False)], ["result"]),
    "tripleo.plan.remove_environments": ("environments.remove", "remove_environments", [
        ("plan", True, None), ("paths", True, None)], ["result"]),
    "tripleo.plan.update_deployed_servers": ("deployed_servers.update",
                                             "update_deployed_servers", [
        ("plan", True, None), ("baremetal_deployment", True, None)], ["result"]),
}


def _shipped(**kwargs: Any) -> workbook_loader.Catalog:
    return workbook_loader.load_catalog([(workbook_loader.SHIPPED_DIR, True)],
                                        REGISTRY.classes(), REGISTRY.broken(),
                                        made=workbooks.ACTION_WORKFLOWS, **kwargs)


def test_an_action_s_execution_is_a_workflow_of_one_task_with_the_action_s_inputs() -> None:
    made = action_workflows.for_action("parameters.update", REGISTRY.get("parameters.update"))
    assert made.full_name == "action:parameters.update"
    assert made.runs_action == "parameters.update"
    assert made.inputs == (WorkflowInput("plan"), WorkflowInput("parameters"),
                           WorkflowInput("key", False, "parameter_defaults"),
                           WorkflowInput("validate", False, False))
    [(name, task)] = made.tasks.items()
    assert name == task.action == "parameters.update" and task.safe_rerun is not False
    assert task.input == {n: f"<% $.{n} %>" for n in ("plan", "parameters", "key", "validate")}
    assert made.output == {"result": "<% $.result %>"}  # Mistral's action output


def test_the_catalog_makes_an_action_s_workflow_when_it_is_looked_up() -> None:
    catalog = _shipped()
    made = catalog.get("action:heat.kill")
    assert catalog.get("action:heat.kill") is made  # made once
    assert [i.name for i in made.inputs] == ["heat_dir", "heat_type", "adopt"]
    assert catalog.entry_of(made).shipped and not catalog.entry_of(made).problems
    # A Mistral-era action name (an alias ad-hoc action) runs as well.
    assert catalog.get("action:tripleo.plan.delete").runs_action == "tripleo.plan.delete"
    assert not any(w.full_name.startswith("action:") for w in catalog.workflows())
    with pytest.raises(exceptions.ActionNotFound, match="'no.such'"):
        catalog.get("action:no.such")
    assert catalog.lookup("action:") is None


def test_the_one_action_workflows_take_and_give_what_their_workbooks_did() -> None:
    catalog = _shipped()
    made = {w.full_name: w for w in catalog.workflows() if w.runs_action}
    assert set(made) == set(BEFORE)
    for name, (action, task, inputs, outputs) in BEFORE.items():
        workflow = made[name]
        assert workflow.runs_action == action and list(workflow.tasks) == [task], name
        assert [(i.name, i.required, i.default) for i in workflow.inputs] == inputs, name
        assert list(workflow.output) == outputs, name
        own = {n: (required, default) for n, _t, required, default
               in REGISTRY.get(action).inputs()}
        for i in workflow.inputs:  # each one the action's own, with its default
            assert own[i.name] == (i.required, i.default), (name, i.name)
    assert {e.name for e in catalog.entries.values() if e.problems} == set()
    # tripleo.heat and tripleo.parameters have no file: shipped workbooks of their own.
    for workbook in ("tripleo.heat", "tripleo.parameters"):
        entry = catalog.entries[workbook]
        assert entry.shipped and str(entry.path) == action_workflows.MADE_PATH
        assert "launch_heat" in entry.definition() or "rotate_passwords" in entry.definition()
    assert {"create_deployment_plan", "delete_deployment_plan"} <= set(
        catalog.entries["tripleo.plan"].workbook.workflows)  # type: ignore[union-attr]


def test_the_one_action_workflows_are_listed_without_the_actions() -> None:
    """A listing reads no action: the made workflows are listed the same."""
    listed = workbook_loader.read_catalog([(workbook_loader.SHIPPED_DIR, True)],
                                          made=workbooks.ACTION_WORKFLOWS)
    assert {w.full_name for w in listed.workflows()} == {
        w.full_name for w in _shipped().workflows()}


def test_a_user_workbook_cannot_replace_a_one_action_workflow(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(
        "version: '2.0'\nname: tripleo\nworkflows:\n  heat.launch:\n"
        "    tasks:\n      t: {action: std.noop}\n")
    catalog = workbook_loader.load_catalog(
        [(workbook_loader.SHIPPED_DIR, True), (tmp_path, False)], REGISTRY.classes(),
        REGISTRY.broken(), made=workbooks.ACTION_WORKFLOWS)
    assert "tripleo.heat.launch ship with tripleo-flow" in str(
        catalog.entries["tripleo@" + str(tmp_path / "mine.yaml")].problems)
    assert catalog.get("tripleo.heat.launch").runs_action == "heat.launch"


def test_the_default_allow_list_is_the_actions_of_the_one_action_workflows() -> None:
    assert set(ACTION_EXECUTIONS_ALLOWED) == set(workbooks.ALIAS_ACTIONS.values())
    assert len(ACTION_EXECUTIONS_ALLOWED) == len(BEFORE)
    assert not [a for a in ACTION_EXECUTIONS_ALLOWED if a.startswith("std.")]


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    client = Host(tmp_path / "data")
    yield client
    client.close()


def test_an_action_execution_is_recorded_listed_and_shown(host: Host) -> None:
    done = host.action_executions.create("std.echo", {"output": {"a": [1, 2]}})
    assert (done.workflow, done.state, done.output) == (
        "action:std.echo", "SUCCESS", {"result": {"a": [1, 2]}})
    assert [e.id for e in host.executions.list("action:std.echo")] == [done.id]
    assert host.executions.get(done.id).output == {"result": {"a": [1, 2]}}
    [task] = host.tasks.list(done.id)
    assert (task.name, task.state) == ("std.echo", "SUCCESS")


def test_an_action_execution_is_cancelled_as_any_other(host: Host) -> None:
    """One that waits (an asynchronous action) is cancelled; it never runs again."""
    started = host.action_executions.create("std.async_noop", {}, wait=False)
    waiting = host.executions.get(started.id)
    assert waiting.workflow == "action:std.async_noop"
    cancelled = host.executions.cancel(started.id, "not needed")
    assert cancelled.state == "CANCELLED"
    host._session.runner().wait_background(30)
    assert host.executions.get(started.id).state == "CANCELLED"


def test_a_failed_action_execution_is_recorded_with_its_error(host: Host) -> None:
    with pytest.raises(exceptions.TripleoFlowError):
        host.action_executions.create("std.fail", {"error_data": "broken"})
    [failed] = host.executions.list("action:std.fail")
    assert failed.state == "ERROR" and failed.failed_task == "std.fail"


# -- what an HTTP API user may start ----------------------------------------------


@pytest.fixture
def api_client(tmp_path: Path) -> Iterator[Client]:
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    client.plans.create("oc", write_tree(tmp_path / "tree", basic_tree()))
    yield client
    client.close()


def _api_start(client: Client, action: str, inputs: dict[str, Any]) -> Any:
    data_dir = client._session.data_dir
    return client.action_executions.create(action, inputs, wait=False, api_user=True,
                                           paths=ServerPaths.for_data_dir(data_dir))


@pytest.mark.parametrize(("action", "inputs", "refusal", "words"), [
    # not on [api] action_executions_allowed (an unknown one too: never looked up)
    ("plan.create", {"plan": "x", "templates": "/etc"}, exceptions.InvalidInput,
     "'plan.create' may not be run as an action execution over the HTTP API"),
    ("std.echo", {"output": 1}, exceptions.InvalidInput, "never std.* actions"),
    ("no.such", {}, exceptions.InvalidInput, "'no.such' may not be run"),
    # allowed, but its inputs are not
    ("plan.delete", {"plan": "oc", "purge": True}, exceptions.InvalidInput,
     "Action 'plan.delete' has no input 'purge'; its inputs are: force, plan"),
    ("plan.restore", {"plan": "oc"}, exceptions.InvalidInput,
     "Action 'plan.restore' needs input 'version'"),
    ("plan.export", {"plan": "oc", "output": "/tmp/x.tar.gz"}, exceptions.PathNotAllowed,
     "input 'output' ('/tmp/x.tar.gz') must be a plain file name"),
    ("plan.export", {"plan": "oc", "output": "x.tar.gz", "secrets": True},
     exceptions.PathNotAllowed, "input 'secrets' must be false"),
    ("heat.launch", {"heat_dir": "/etc"}, exceptions.PathNotAllowed,
     "input 'heat_dir' ('/etc') must be a plain name"),
])
def test_an_api_user_s_action_execution_is_refused_before_anything_starts(
        api_client: Client, action: str, inputs: dict[str, Any],
        refusal: type[Exception], words: str) -> None:
    before = [e.id for e in api_client.executions.list()]
    with pytest.raises(refusal) as info:
        _api_start(api_client, action, inputs)
    assert words in str(info.value)
    assert isinstance(info.value, exceptions.TripleoFlowError)
    assert [e.id for e in api_client.executions.list()] == before
    data_dir = api_client._session.data_dir
    assert not (data_dir / "downloads").exists() and not (data_dir / "work").exists()


def test_an_allowed_action_runs_for_an_api_user_and_the_cli_runs_any(
        api_client: Client) -> None:
    started = _api_start(api_client, "templates.process", {"plan": "oc"})
    api_client._session.runner().wait_background(60)
    done = api_client.executions.get(started.id)
    assert (done.workflow, done.state) == ("action:templates.process", "SUCCESS")
    # The CLI and the Python API are not concerned by the allow-list.
    assert api_client.action_executions.create("plan.list", {}).state == "SUCCESS"


def test_the_allow_list_holds_for_the_one_action_workflows_too(api_client: Client) -> None:
    conf = api_client._session.conf
    conf.set_override("action_executions_allowed", ["plan.delete"], group="api")
    with pytest.raises(exceptions.InvalidInput, match="'templates.process' may not be run"):
        api_client.executions.create("tripleo.plan.render_deployment_plan", {"plan": "oc"},
                                     wait=False, api_user=True)
    conf.set_override("action_executions_allowed", ["std.echo"], group="api")
    with pytest.raises(exceptions.InvalidInput, match="never std"):
        _api_start(api_client, "std.echo", {"output": 1})
    conf.clear_override("action_executions_allowed", group="api")
    started = api_client.executions.create("tripleo.plan.render_deployment_plan",
                                           {"plan": "oc"}, wait=False, api_user=True)
    api_client._session.runner().wait_background(60)
    done = api_client.executions.get(started.id)
    assert done.state == "SUCCESS" and set(done.output) == {"rendered", "written", "removed"}


def test_the_tests_actions_run_as_executions_by_their_names() -> None:
    """Every registered test action has its own execution (the engine makes it)."""
    catalog = workbook_loader.load_catalog([], ACTIONS, {})
    for name in ("std.echo", "std.noop", "std.fail"):
        assert catalog.get(action_workflows.execution_name(name)).runs_action == name


def test_an_action_execution_recorded_but_never_run_is_resumed(host: Host) -> None:
    """As one whose process died before its task: resumed, it runs to its end."""
    recorded = host._session.runner().start(action_workflows.execution_name("std.echo"),
                                            {"output": "late"})
    done = host.executions.resume(recorded.uuid)
    assert (done.workflow, done.state, done.output) == (
        "action:std.echo", "SUCCESS", {"result": "late"})


def test_an_asynchronous_action_s_execution_ends_when_a_client_completes_it(
        host: Host) -> None:
    started = host.action_executions.create("std.async_noop", {}, wait=False)
    [task] = until("its task waits for a client", lambda: [
        t for t in host.tasks.list(started.id) if t.waiting])
    host.tasks.complete(started.id, task.name, "SUCCESS", {"made": 1})
    done = until("it ends", lambda: (lambda e: e if e.finished_at else None)(
        host.executions.get(started.id)))
    assert (done.state, done.output) == ("SUCCESS", {"result": {"made": 1}})


def test_an_action_execution_keeps_no_secret(api_client: Client) -> None:
    """Masked as a workflow's: what it returns and what its record holds on disk."""
    before = api_client.passwords.get("oc")
    shown = api_client.action_executions.create("passwords.get", {"plan": "oc"})
    api_client.action_executions.create("passwords.rotate", {"plan": "oc"})
    after = api_client.passwords.get("oc")
    database = (api_client._session.data_dir / "executions.sqlite").read_bytes()
    secrets = {v for v in [*before.values(), *after.values()] if isinstance(v, str)
               and len(v) >= 8}
    assert secrets and set(shown.output["result"]) == set(before)
    assert not [v for v in secrets if v in json.dumps(shown.output)]
    assert not [v for v in secrets if v.encode() in database]
