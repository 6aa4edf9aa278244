"""How the CLI spells each operation an error's hint names: a ``tripleo-flow``
command (without the program's name), over the operation's arguments.

:func:`install` registers them (the CLI and the openstackclient plugin at start, the
HTTP API for the steps only the server can do, a Python caller that wants the CLI's
words); :mod:`tripleo_flow.exceptions.operations` is the table they spell.
"""

from __future__ import annotations

from tripleo_flow.exceptions import operations

COMMANDS: dict[str, str] = {
    "plan.create": "plan create {plan} --templates DIR",
    "plan.update": "plan update {plan} --templates DIR",
    "plan.update_files": "plan update {plan} --templates DIR [-r FILE] [-n FILE]",
    "plan.delete": "plan delete {plan}",
    "plan.history": "plan history {plan}",
    "plan.environments": "plan environment list {plan}",
    "parameter.show": "parameter show --plan {plan}",
    "parameter.schema": "parameter show --plan {plan} --schema",
    "parameter.set": "parameter set --plan {plan} {name}={value}",
    "capabilities.show": "capabilities show --plan {plan}",
    "capabilities.disable": "capabilities set --plan {plan} --disable {path}",
    "role.set": "role set --plan {plan} FILE",
    "network.set": "network set --plan {plan} FILE",
    "password.show": "password show --plan {plan}",
    "backup.restore_force": "backup restore {archive} --force",
    "plan.export_with_secrets": "plan export",
    "deploy": "deploy --plan {plan}",
    "deploy.config_download_only": "deploy --plan {plan} --config-download-only",
    "deployment.status": "deployment status --plan {plan}",
    "deployment.failures": "deployment failures --plan {plan}",
    "validation.run_pre_deployment": "validation run --group pre-deployment --plan {plan}",
    "lifecycle.prepare": "overcloud {kind} prepare --stack {plan}",
    "node.list": "node list",
    "node.manage": "node manage NODE...",
    "node.import": "node import FILE",
    "node.provision": "node provision --plan {plan} --baremetal-deployment FILE",
    "action.list": "action list",
    "workflow.list": "workflow list",
    "workflow.run": "workflow run {workflow}",
    "workflow.run_with_input": "workflow run {workflow} --input {input}=VALUE",
    "execution.list": "execution list",
    "execution.show": "execution show {execution}",
    "execution.tasks": "execution tasks {execution}",
    "execution.resume": "execution resume {execution}",
    "execution.change_where_started": "execution {verb} {execution}",
    "task.rerun_where_started": "task rerun {execution} {task}",
    "workbook.list": "workbook list",
    "workbook.create": "workbook create {path}",
    "workbook.update": "workbook update {path}",
    "heat.launch": "launch heat --heat-dir {heat_dir}",
    "heat.kill": "launch heat --heat-dir {heat_dir} --kill",
    "heat.kill_any": "launch heat --kill ...",
    "heat.status": "heat status",
    "heat.install": "heat install",
    "heat.install_force": "heat install --force",
    "heat.image_build": "heat image build",
    "ironic.launch": "launch ironic",
    "ironic.launch_in": "launch ironic --ironic-dir {ironic_dir}",
    "ironic.kill": "launch ironic --ironic-dir {ironic_dir} --kill",
}


def install() -> None:
    """Word every error's next steps as ``tripleo-flow`` commands from now on."""
    operations.register(operations.CLI, COMMANDS)


__all__ = ["COMMANDS", "install"]
