"""Every operation the CLI offers is reachable from the GUI (issue 30): each command of
``tripleo-flow --help`` is either named here with the GUI module that offers it and the
request (route or workflow) that module sends for it, the same the CLI's operation
makes, or named as not an operation of a deployment with the reason.  A command added
to the CLI fails this test until the GUI offers it (or the reason is written down);
a GUI module that stops sending the request fails it too.  The browser tests named
beside each module drive those requests in chromium against a real server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tripleo_flow.cli.command_table import COMMANDS

STATIC = Path(__file__).resolve().parents[3] / "tripleo_flow" / "http" / "static"
BROWSER_TESTS = Path(__file__).resolve().parents[2] / "functional" / "http"

#: GUI module -> the browser test file that drives it.
TESTED_BY = {
    "plans.js": "test_gui_browser.py", "plan.js": "test_gui_browser.py",
    "userenvs.js": "test_gui_operations.py", "environments.js": "test_gui_browser.py",
    "roles.js": "test_gui_roles.py", "passwords.js": "test_gui_passwords.py",
    "parameters.js": "test_gui_browser.py", "workflows.js": "test_gui_workflows.py",
    "executions.js": "test_gui_subexecutions.py", "complete.js": "test_gui_operations.py",
    "stackheat.js": "test_gui_stackheat.py", "nodes.js": "test_gui_nodes.py",
    "scale.js": "test_gui_scale.py", "lifecycle.js": "test_gui_update.py",
    "validations.js": "test_gui_validations.py", "backups.js": "test_gui_backups.py",
}

#: CLI command -> (GUI module, what that module sends for it).
REACHED: dict[str, tuple[str, str]] = {
    "plan create": ("plans.js", 'call("POST", `/v1/plans?${query}`'),
    "plan list": ("plans.js", 'call("GET", "/v1/plans")'),
    # (the plans list shows each plan's description and deployment status)
    "plan show": ("plans.js", 'call("GET", "/v1/plans")'),
    "plan export": ("plans.js", "/v1/plans/${enc(plan.name)}/export"),
    "plan update": ("plans.js", 'call("PUT", `/v1/plans/${enc(choice.value)}`'),
    "plan delete": ("plans.js", 'call("DELETE", `/v1/plans/${enc(plan.name)}'),
    "plan history": ("plan.js", "/v1/plans/${enc(name)}/history"),
    "plan restore": ("plan.js", "/v1/plans/${enc(name)}/restore"),
    "plan render": ("plan.js", "/v1/workflows/tripleo.plan.render_deployment_plan/executions"),
    "plan environment list": ("userenvs.js", 'call("GET", `/v1/plans/${enc(plan)}/environments`'),
    "plan environment add": ("userenvs.js", "send(`/v1/plans/${enc(plan)}/environments`, body"),
    "plan environment remove": ("userenvs.js", "/v1/plans/${enc(plan)}/environments/remove"),
    "capabilities show": ("environments.js", 'call("GET", `/v1/plans/${enc(name)}/capabilities`'),
    "capabilities set": ("environments.js", 'call("PUT", `/v1/plans/${enc(name)}/capabilities`'),
    "role list": ("roles.js", "/v1/plans/${enc(plan)}/roles?detail=true"),
    "role set": ("roles.js", 'call("PUT", `/v1/plans/${enc(plan)}/${noun}`'),
    "network list": ("roles.js", "/v1/plans/${enc(plan)}/networks?detail=true"),
    "network set": ("roles.js", 'call("PUT", `/v1/plans/${enc(plan)}/${noun}`'),
    "password show": ("passwords.js", "/v1/plans/${enc(plan)}/passwords"),
    "password rotate": ("passwords.js", '"tripleo.parameters.rotate_passwords"'),
    "parameter show": ("parameters.js", "/v1/plans/${enc(name)}/parameters/schema"),
    "parameter set": ("parameters.js", 'call("PUT", `/v1/plans/${enc(plan)}/parameters`'),
    "parameter reset": ("parameters.js", "/v1/plans/${enc(plan)}/parameters/reset"),
    "workbook list": ("workflows.js", 'call("GET", "/v1/workbooks")'),
    "workbook validate": ("workflows.js", 'send("POST", "/v1/workbooks/validate"'),
    "workbook create": ("workflows.js", 'send("POST", "/v1/workbooks"'),
    "workbook update": ("workflows.js", 'send("PUT", "/v1/workbooks"'),
    "workbook delete": ("workflows.js", 'call("DELETE", `/v1/workbooks/${enc(wb.name)}`'),
    "workflow list": ("workflows.js", '"/v1/workflows"'),
    "workflow show": ("executions.js", "/v1/workflows/${enc(execution.workflow)}"),
    "workflow run": ("workflows.js", "/v1/workflows/${enc(wf.name)}/executions"),
    # (the list shows each action's description and input)
    "action list": ("workflows.js", 'call("GET", "/v1/actions")'),
    "action show": ("workflows.js", 'call("GET", "/v1/actions")'),
    # The GUI runs the allowed actions (each one-action workflow: tripleo.heat.launch,
    # tripleo.plan.export_deployment_plan ...) from the Workflows page by those names,
    # which run the same action execution as POST /v1/action_executions.
    "action execution run": ("workflows.js", "/v1/workflows/${enc(wf.name)}/executions"),
    "execution list": ("executions.js", '"/v1/executions?sort_dir=desc"'),
    "execution show": ("executions.js", 'call("GET", `/v1/executions/${enc(id)}`)'),
    "execution tasks": ("executions.js", 'call("GET", `/v1/executions/${enc(id)}/tasks`)'),
    "execution pause": ("executions.js", 'verbButton("pause"'),
    "execution resume": ("executions.js", 'verbButton("resume"'),
    "execution cancel": ("executions.js", 'verbButton("cancel"'),
    "execution update": ("executions.js", 'call("PUT", `/v1/executions/${enc(id)}`'),
    "execution complete": ("complete.js", "/tasks/${enc(task.name)}/complete"),
    "task rerun": ("executions.js",
                   'call("PUT", `/v1/executions/${enc(id)}/tasks/${enc(task.name)}`'),
    "launch heat": ("stackheat.js", '"tripleo.heat.launch"'),
    "heat status": ("stackheat.js", "/v1/plans/${enc(plan)}/deployment/heat"),
    "deploy": ("plan.js", '"/v1/workflows/deploy/executions"'),
    "deployment status": ("plan.js", "/v1/plans/${enc(name)}/deployment`"),
    "deployment failures": ("plan.js", "/v1/plans/${enc(name)}/deployment/failures"),
    "node import": ("nodes.js", 'verb === "register" ? "/v1/nodes"'),
    "node introspect": ("nodes.js", '"introspect"'),
    "node provide": ("nodes.js", '"provide"'),
    "node manage": ("nodes.js", '"manage"'),
    "node clean": ("nodes.js", '"clean"'),
    "node delete": ("nodes.js", '"delete"'),
    "node provision": ("nodes.js", '"provision"'),
    "node unprovision": ("nodes.js", '"unprovision"'),
    "node list": ("nodes.js", 'call("GET", "/v1/nodes")'),
    # (the list shows each node's fields)
    "node show": ("nodes.js", 'call("GET", "/v1/nodes")'),
    "overcloud node delete": ("scale.js", '"tripleo.scale.delete_nodes"'),
    "overcloud update prepare": ("lifecycle.js", '"tripleo.update.prepare"'),
    "overcloud update run": ("lifecycle.js", '"tripleo.update.run"'),
    "overcloud update converge": ("lifecycle.js", '"tripleo.update.converge"'),
    "overcloud external-update run": ("lifecycle.js", '"tripleo.update.external_run"'),
    "overcloud upgrade prepare": ("lifecycle.js", '"tripleo.upgrade.prepare"'),
    "overcloud upgrade run": ("lifecycle.js", '"tripleo.upgrade.run"'),
    "overcloud upgrade converge": ("lifecycle.js", '"tripleo.upgrade.converge"'),
    "overcloud external-upgrade run": ("lifecycle.js", '"tripleo.upgrade.external_run"'),
    "validation list": ("validations.js", 'call("GET", "/v1/validations")'),
    # (the list shows each validation's description, groups and parameters)
    "validation show": ("validations.js", 'call("GET", "/v1/validations")'),
    "validation run": ("validations.js", 'call("POST", "/v1/validations/run"'),
    "validation stop": ("validations.js", 'call("POST", "/v1/validations/stop"'),
    "validation results": ("validations.js", "/v1/validations/results${query}"),
    "validation show-result": ("validations.js", "/v1/validations/results/${enc(record.id)}"),
    "backup create": ("backups.js", 'call("POST", "/v1/backups"'),
    "backup restore": ("backups.js", 'call("POST", "/v1/backups/restore"'),
}

#: The plural spellings kept as aliases of the singular commands.
ALIASES = {"roles list": "role list", "roles set": "role set", "networks list": "network list",
           "networks set": "network set", "passwords show": "password show",
           "passwords rotate": "password rotate", "parameters show": "parameter show",
           "parameters set": "parameter set", "parameters reset": "parameter reset"}

#: Commands that are not operations of a plan or deployment, with the reason.
NOT_OPERATIONS = {
    "api serve": "serves the HTTP API and the GUI itself",
    "conductor": "a worker process of the jobboard, started by the operator beside the API",
    "heat install": "installs Heat's packages on the machine (an administrator's set-up, as root)",
    "heat image build": "builds container images on the machine (an administrator's set-up)",
    "launch ironic": "starts a local Ironic for this machine (its set-up, not a plan's)",
}


def test_every_cli_command_is_reached_from_the_gui_or_named_as_no_operation() -> None:
    named = set(REACHED) | set(ALIASES) | set(NOT_OPERATIONS)
    assert sorted(set(COMMANDS) - named) == [], "CLI commands the GUI does not offer"
    assert sorted(named - set(COMMANDS)) == [], "named here but not CLI commands"
    assert set(ALIASES.values()) <= set(REACHED)
    assert not set(REACHED) & set(NOT_OPERATIONS)


@pytest.mark.parametrize("command", sorted(REACHED))
def test_the_gui_module_sends_the_operations_request(command: str) -> None:
    module, sends = REACHED[command]
    assert sends in (STATIC / module).read_text(encoding="utf-8"), (
        f"{module} no longer sends {sends!r} for {command!r}")


@pytest.mark.parametrize("module", sorted({m for m, _ in REACHED.values()}))
def test_each_module_is_driven_by_a_browser_test(module: str) -> None:
    test = BROWSER_TESTS / TESTED_BY[module]
    assert test.is_file()
    text = test.read_text(encoding="utf-8")
    assert "playwright" in text  # it drives chromium
