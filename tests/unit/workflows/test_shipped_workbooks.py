"""The shipped workbooks validate against the plan actions' input signatures."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.actions.base import Action
from tripleo_flow.flows import workbook_loader


def _action(name: str, signature: str) -> type[Action]:
    namespace: dict[str, Any] = {}
    exec(f"def execute(self, {signature}):\n    return None\n", namespace)  # noqa: S102
    return type(name.replace(".", "_"), (Action,), {"execute": namespace["execute"],
                                                    "__doc__": f"Fake {name}."})


#: The input names the plan actions take (fixed by the lead's design).
SIGNATURES = {
    "plan.create": "plan, templates, description=''",
    "plan.publish": "plan",
    "plan.update": "plan, templates",
    "plan.delete": "plan, force=False",
    "plan.export": "plan, output",
    "templates.process": "plan",
    "passwords.generate": "plan",
    "passwords.rotate": "plan, rotate=None, do_not_rotate=None",
    "parameters.update": "plan, parameters, key='parameter_defaults'",
    "parameters.reset": "plan, names=None",
    "capabilities.update": "plan, environments, purge=False",
    "std.noop": "",
    "ansible.check": "",
    "deployed_servers.update": "plan, baremetal_deployment",
    "deploy.start": "plan, work_dir, heat_type",
    "deploy.check": "plan, work_dir",
    "deploy.launch_heat": "work_dir, heat_type",
    "deploy.stack": "plan, work_dir, stack_request, heat",
    "deploy.kept_stack": "plan, work_dir",
    "deploy.check_kept_stack": "plan, heat",
    "deploy.save_outputs": "plan, work_dir, heat, stack_request",
    "deploy.config_download": "plan, work_dir, stack_outputs",
    "heat.kill": "heat_dir, heat_type=None",
    "deploy.finish": "plan, work_dir, heat_type, config_download",
    "deploy.run_ansible": "plan, work_dir, config_download, ansible_connection=None",
    "nodes.check": "nodes",
    "nodes.register": "node",
    "nodes.select": "nodes=None, state=None",
    "nodes.manage": "node, state=None",
    "nodes.inspect": "node",
    "nodes.provide": "node, state=None",
    "nodes.clean": "node, steps",
    "nodes.delete": "node",
}


def _catalog(actions: dict[str, type[Action]],
             broken: dict[str, str] | None = None) -> workbook_loader.Catalog:
    return workbook_loader.load_catalog([(workbook_loader.SHIPPED_DIR, True)], actions, broken)


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
    from tripleo_flow.actions import ansible, deploy, deployed_servers, heat, std

    real = {"std.noop": std.Noop,
            "deployed_servers.update": deployed_servers.UpdateDeployedServers,
            "ansible.check": ansible.CheckAnsible,
            "deploy.start": deploy.StartDeployment, "deploy.check": deploy.CheckPlan,
            "deploy.launch_heat": deploy.LaunchDeploymentHeat, "deploy.stack": deploy.DeployStack,
            "deploy.save_outputs": deploy.SaveStackOutputs,
            "deploy.config_download": deploy.WriteConfigDownload, "heat.kill": heat.KillHeat,
            "deploy.run_ansible": ansible.RunAnsible, "deploy.finish": deploy.FinishDeployment}
    actions = {name: _action(name, sig) for name, sig in SIGNATURES.items()}
    catalog = _catalog({**actions, **real})
    assert catalog.entries["tripleo.deploy"].problems == []
    workflow = catalog.get("deploy")
    assert [i.name for i in workflow.inputs] == [
        "plan", "heat_type", "work_dir", "run_ansible", "ansible_connection",
        "baremetal_deployment"]
    actions_run = list(real)
    actions_run.insert(2, "std.noop")  # begin, deployed_servers, servers_ready, ...
    assert [t.action for t in workflow.tasks.values()] == actions_run


def test_create_plan_runs_create_process_generate_publish_in_order() -> None:
    actions = {name: _action(name, sig) for name, sig in SIGNATURES.items()}
    workflow = _catalog(actions).get("create_deployment_plan")
    order = [t.action for t in workflow.tasks.values()]
    assert order == ["plan.create", "templates.process", "passwords.generate", "plan.publish"]


def test_real_action_classes_are_used_when_loadable() -> None:
    """With the installed registry, each shipped action is either valid or reported."""
    from tripleo_flow.actions.registry import ActionRegistry

    registry = ActionRegistry.load()
    catalog = _catalog(registry.classes(), registry.broken())
    for entry in catalog.entries.values():
        for problem in entry.problems:
            assert "cannot be loaded" in problem.message, problem


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
