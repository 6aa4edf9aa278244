"""The shipped workbooks validate against the plan actions' input signatures."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.actions.base import Action
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import workbooks
from tripleo_flow.engine.lang import workbook_loader


def _action(name: str, signature: str) -> type[Action]:
    namespace: dict[str, Any] = {}
    exec(f"def execute(self, {signature}):\n    return None\n", namespace)  # noqa: S102
    return type(name.replace(".", "_"), (Action,), {"execute": namespace["execute"],
                                                    "__doc__": f"Fake {name}."})


#: The installed actions (the entry points of setup.cfg), loaded once.
REGISTRY = ActionRegistry.load()


def _signature(action: type[Action]) -> str:
    """``execute``'s inputs as source text: ``plan, work_dir, force=False``."""
    return ", ".join(name if required else f"{name}={default!r}"
                     for name, _type, required, default in action.inputs())


#: The input names of every installed action, derived from the action classes, so
#: the fakes below take what the real actions take.
SIGNATURES = {name: _signature(action) for name, action in REGISTRY.classes().items()}


def _catalog(actions: dict[str, type[Action]],
             broken: dict[str, str] | None = None) -> workbook_loader.Catalog:
    return workbook_loader.load_catalog([(workbook_loader.SHIPPED_DIR, True)], actions, broken,
                                        made=workbooks.ACTION_WORKFLOWS)


def test_shipped_workbooks_are_valid() -> None:
    actions = {name: _action(name, sig) for name, sig in SIGNATURES.items()}
    catalog = _catalog(actions)
    assert {"tripleo.plan", "tripleo.parameters", "tripleo.deploy"} <= set(catalog.entries)
    for entry in catalog.entries.values():
        assert entry.problems == [], entry.problems
    names = {wf.full_name for wf in catalog.workflows()}
    assert {"tripleo.plan.create_deployment_plan", "tripleo.plan.update_deployment_plan",
            "tripleo.plan.delete_deployment_plan", "tripleo.plan.export_deployment_plan",
            "tripleo.parameters.update_parameters",
            "tripleo.parameters.rotate_passwords", "tripleo.deploy.deploy"} <= names


def test_deploy_workflow_takes_plan_heat_type_work_dir_and_runs_the_deploy_actions() -> None:
    catalog = _catalog(REGISTRY.classes())
    assert catalog.entries["tripleo.deploy"].problems == []
    workflow = catalog.get("deploy")
    assert [i.name for i in workflow.inputs] == [
        "plan", "heat_type", "work_dir", "run_ansible", "ansible_connection", "ansible_tags",
        "ansible_skip_tags", "ansible_limit", "ansible_forks", "ansible_verbosity",
        "overcloud_ssh_user", "overcloud_ssh_key", "baremetal_deployment", "run_validations",
        "user_environments", "lifecycle"]
    assert [t.action for t in workflow.tasks.values()] == [
        "deploy.check_inputs", "validations.select", "validations.run", "validations.check",
        "std.noop", "deployed_servers.update", "std.noop", "environments.add", "std.noop",
        "ansible.check", "deploy.start",
        "deploy.check", "deploy.launch_heat", "deploy.stack", None]
    only = catalog.get("config_download_only")
    assert [i.name for i in only.inputs][-3:] == [
        "run_validations", "user_environments", "baremetal_deployment"]
    assert [t.action for t in only.tasks.values()] == [
        "deploy.check_inputs", "validations.select", "validations.run", "validations.check",
        "std.noop", "deploy.kept_stack", "ansible.check", "deploy.start", "deploy.launch_heat",
        "deploy.check_kept_stack", None]
    # The steps after the stack are one sub-workflow both run as their last task, as
    # tripleo-common's deployment workbook ran config_download_deploy.
    steps = catalog.get("config_download_deploy")
    assert [t.action for t in steps.tasks.values()] == [
        "deploy.check_inputs", "ansible.check", "deploy.save_outputs",
        "deploy.config_download", "heat.kill", "std.noop", "deploy.run_ansible",
        "deploy.finish"]
    # config-download is written from the saved outputs while Heat is dumped and stopped;
    # the playbook and the status wait for both.
    after = {name: [s.target for s in t.on_success] for name, t in steps.tasks.items()}
    assert after["save_outputs"] == ["config_download", "kill_heat"]
    assert after["config_download"] == after["kill_heat"] == ["written_and_stopped"]
    assert steps.tasks["written_and_stopped"].join == "all"
    assert after["written_and_stopped"] == ["run_ansible", "finish"]
    for calling in (workflow, only):
        finish = calling.tasks["finish"]
        assert finish.workflow == "config_download_deploy"
        assert set(finish.input) == {i.name for i in steps.inputs}
        assert finish.publish == {"deployment": "<% task().result.deployment %>"}


def test_create_plan_runs_create_environments_process_generate_publish_in_order() -> None:
    actions = {name: _action(name, sig) for name, sig in SIGNATURES.items()}
    workflow = _catalog(actions).get("create_deployment_plan")
    order = [t.action for t in workflow.tasks.values()]
    assert order == ["plan.create", "environments.add", "templates.process",
                     "passwords.generate", "plan.publish"]
    # The user environments are stored only when there are some: both ways lead on
    # to processing the templates.
    targets = [[s.target for s in t.on_success] for t in workflow.tasks.values()][:2]
    assert targets == [["add_environments", "process_templates"], ["process_templates"]]


def test_every_action_loads_and_the_shipped_workbooks_are_valid_with_them() -> None:
    """The real classes: none broken, every task's action known and its inputs right."""
    assert REGISTRY.broken() == {}
    catalog = _catalog(REGISTRY.classes(), REGISTRY.broken())
    for entry in catalog.entries.values():
        assert entry.problems == [], entry.problems
    used = {t.action for wf in catalog.workflows() for t in wf.tasks.values()
            if t.workflow is None}
    assert used and used <= set(REGISTRY.classes())
    assert {"plan.create", "deploy.stack", "nodes.register", "validations.run"} <= used


def test_validations_workflow_selects_runs_each_and_checks() -> None:
    catalog = _catalog(REGISTRY.classes())
    assert catalog.entries["tripleo.validations"].problems == []
    workflow = catalog.get("tripleo.validations.run")
    assert [i.name for i in workflow.inputs] == [
        "validations", "group", "category", "plan", "inventory", "localhost", "extra_vars",
        "run_id", "require_passed"]
    assert [t.action for t in workflow.tasks.values()] == [
        "validations.select", "validations.run", "validations.check"]
    assert workflow.tasks["run_validations"].with_items


def test_the_signature_table_is_the_actions_own() -> None:
    assert SIGNATURES["plan.delete"] == "plan, force=False"
    assert SIGNATURES["deploy.stack"] == "plan, work_dir, stack_request, heat"
    assert len(SIGNATURES) >= 30


@pytest.mark.parametrize("changed", ["plan.create", "passwords.rotate"])
def test_signature_mismatch_is_reported(changed: str) -> None:
    actions = {name: _action(name, sig) for name, sig in SIGNATURES.items()}
    actions[changed] = _action(changed, "plan, extra")
    catalog = _catalog(actions)
    text = "\n".join(str(p) for e in catalog.entries.values() for p in e.problems)
    assert f"missing required input 'extra' of action {changed!r}" in text


def test_broken_action_is_reported_per_task() -> None:
    actions = {name: _action(name, sig) for name, sig in SIGNATURES.items()}
    del actions["templates.process"]
    catalog = _catalog(actions, {"templates.process": "ModuleNotFoundError: no module"})
    problems = catalog.entries["tripleo.plan"].problems
    assert {p.task for p in problems} == {"process_templates"}, problems
    assert catalog.entries["tripleo.parameters"].problems == []


def test_every_workflow_that_takes_a_heat_type_leaves_it_to_the_deployment() -> None:
    """No shipped workflow names a heat type of its own: none given, the deploy's start
    task uses the type the deployment was made with (else [heat] heat_type) and
    publishes it for the tasks after it."""
    catalog = _catalog(REGISTRY.classes())
    taking = {wf.full_name: {i.name: i for i in wf.inputs}["heat_type"]
              for wf in catalog.workflows() if "heat_type" in {i.name for i in wf.inputs}}
    assert {"tripleo.deploy.deploy", "tripleo.deploy.config_download_only",
            "tripleo.scale.delete_nodes", "tripleo.update.prepare", "tripleo.update.converge",
            "tripleo.upgrade.prepare", "tripleo.upgrade.converge"} <= set(taking)
    assert {name: (i.required, i.default) for name, i in taking.items()} == {
        name: (False, None) for name in taking}
    for name in ("deploy", "config_download_only"):
        start = catalog.get(name).tasks["start"]
        assert start.publish == {"heat_type": "<% task().result.heat_type %>"}
