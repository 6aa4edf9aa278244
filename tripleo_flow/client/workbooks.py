"""The names of the shipped workflows the Python API runs (``workbooks/``): one
place, so the plan changes, the deployment and their interfaces name the same; and
the shipped workflows that run one action, made by the engine as action executions
(:data:`ACTION_WORKFLOWS`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tripleo_flow.engine.lang.action_workflows import ActionWorkflow

#: The workflows a deployment runs (``workbooks/deploy.yaml``), whichever interface
#: starts it.
DEPLOY = "tripleo.deploy.deploy"
CONFIG_DOWNLOAD_ONLY = "tripleo.deploy.config_download_only"
#: Scaling down chosen servers (``workbooks/scale.yaml``).
DELETE_NODES = "tripleo.scale.delete_nodes"
#: The minor update (``workbooks/update.yaml``).
UPDATE_PREPARE = "tripleo.update.prepare"
UPDATE_RUN = "tripleo.update.run"
UPDATE_CONVERGE = "tripleo.update.converge"
EXTERNAL_UPDATE_RUN = "tripleo.update.external_run"
#: The major upgrade (``workbooks/upgrade.yaml``).
UPGRADE_PREPARE = "tripleo.upgrade.prepare"
UPGRADE_RUN = "tripleo.upgrade.run"
UPGRADE_CONVERGE = "tripleo.upgrade.converge"
EXTERNAL_UPGRADE_RUN = "tripleo.upgrade.external_run"
#: The workbooks of the plan workflows (``workbooks/plan.yaml`` and one-action
#: workflows).
PLAN = "tripleo.plan"
PARAMETERS = "tripleo.parameters"


def plan_workflow(name: str) -> str:
    """The full name of plan workflow ``name`` (``tripleo.plan.<name>``)."""
    return f"{PLAN}.{name}"

#: The changes of an ephemeral Heat (one-action workflows): launch, kill, dump,
#: restore; its status is read without a workflow.
HEAT = "tripleo.heat"


def heat_workflow(name: str) -> str:
    """The full name of Heat workflow ``name`` (``tripleo.heat.<name>``)."""
    return f"{HEAT}.{name}"


def _alias(name: str, action: str, inputs: tuple[str | tuple[str, Any], ...], task: str,
           publish: Mapping[str, str], description: str, **more: Any) -> ActionWorkflow:
    return ActionWorkflow(name, action, inputs, publish, task, description, **more)


def _result(key: str) -> dict[str, str]:
    return {key: "<% task().result %>"}


_PLAN_INPUT = ("plan",)
_HEAT_INPUTS = ("heat_dir", ("heat_type", None))
_RESULT = _result("result")

#: The shipped workflows that run one action: each an action execution under the name
#: (and with the inputs, task name and output keys) of the workflow it was before
#: (the workbooks heat.yaml and parameters.yaml, and eight of plan.yaml), made by
#: the engine (:mod:`tripleo_flow.engine.lang.action_workflows`).
ACTION_WORKFLOWS = (
    _alias(heat_workflow("launch"), "heat.launch", (*_HEAT_INPUTS, ("restore_db", False)),
           "launch_heat", _result("endpoint"),
           "Launch an ephemeral Heat for heat_dir (on a fresh database loaded from its "
           "heat-db-dump.sql when restore_db is true) and wait until it answers. The Heat "
           "runs on after the execution ends (until tripleo.heat.kill); refused, with the "
           "running Heat left as it is, when one runs there already."),
    _alias(heat_workflow("kill"), "heat.kill", _HEAT_INPUTS, "kill_heat", _result("killed"),
           "Dump the database of heat_dir's Heat to heat-db-dump.sql, wipe it and stop "
           "Heat; nothing running there is not an error (nothing is dumped or stopped)."),
    _alias(heat_workflow("dump_db"), "heat.dump_db", _HEAT_INPUTS, "dump_db", _result("dump"),
           "Dump the database of heat_dir's running Heat to heat-db-dump.sql (checked "
           "restorable); refused, the earlier dump kept, when no Heat runs there."),
    _alias(heat_workflow("restore_db"), "heat.restore_db", _HEAT_INPUTS, "restore_db",
           _result("endpoint"),
           "Restart heat_dir's Heat on a fresh database loaded from its heat-db-dump.sql; "
           "refused when there is no dump."),
    _alias(f"{PARAMETERS}.update_parameters", "parameters.update",
           (*_PLAN_INPUT, "parameters", ("key", "parameter_defaults"), ("validate", False)),
           "update_parameters", _RESULT,
           "Set parameters of a plan (in parameter_defaults unless key says otherwise); with "
           "validate, their names and types are checked against the plan's parameter schema."),
    _alias(f"{PARAMETERS}.reset_parameters", "parameters.reset",
           (*_PLAN_INPUT, ("names", None)), "reset_parameters", _RESULT,
           "Remove user-set parameters of a plan (all of them unless names are given)."),
    # Run again, a rotation draws new values and its undo record would name the first
    # run's: a resumed execution stops there instead (Rerun.ONCE).
    _alias(f"{PARAMETERS}.rotate_passwords", "passwords.rotate",
           (*_PLAN_INPUT, ("rotate", None), ("do_not_rotate", None)), "rotate_passwords",
           _RESULT, "Generate new values for a plan's passwords (all, or those in rotate).",
           safe_rerun=False),
    _alias(plan_workflow("delete_deployment_plan"), "plan.delete",
           (*_PLAN_INPUT, ("force", False)), "delete_plan", _result("deleted"),
           "Delete a plan (refused while it has a deployment unless force is true)."),
    _alias(plan_workflow("restore_deployment_plan"), "plan.restore",
           (*_PLAN_INPUT, "version", ("keep_passwords", True)), "restore_plan",
           {"restored": "<% task().result.version %>",
            "passwords_kept": "<% task().result.passwords_kept %>"},
           "Make an earlier version of a plan's plan-environment.yaml current (its current "
           "passwords kept unless keep_passwords is false)."),
    _alias(plan_workflow("render_deployment_plan"), "templates.process", _PLAN_INPUT,
           "process_templates", {"rendered": "<% len(task().result.files) %>",
                                 "written": "<% len(task().result.written) %>",
                                 "removed": "<% len(task().result.removed) %>"},
           "Render a plan's j2 templates again (after its roles, networks or files were "
           "edited); this also completes a template update that stopped before rendering. "
           "What the plan render operation and Client.plans.render run."),
    # output: over the HTTP API a plain file name, written to the server's download
    # area; secrets: over the HTTP API it must stay false (plan.export's SecretsOut).
    _alias(plan_workflow("export_deployment_plan"), "plan.export",
           (*_PLAN_INPUT, "output", ("secrets", False)), "export_plan", _result("export"),
           "Export a plan's files to a tarball."),
    _alias(plan_workflow("update_capabilities"), "capabilities.update",
           (*_PLAN_INPUT, "environments", ("purge", False)), "update_capabilities", _RESULT,
           "Enable or disable environments of a plan's capabilities map (name -> "
           "true/false, with what they require and exclude); with purge, drop every other "
           "enabled one."),
    _alias(plan_workflow("add_environments"), "environments.add",
           (*_PLAN_INPUT, "user_environments", ("position", None), ("replace", False)),
           "add_environments", _RESULT,
           "Store user environments ({name, files: {path: text}}) in a plan, at position "
           "among them (1-based, default last); with replace, they become its only user "
           "environments (nothing changes when they are those stored)."),
    _alias(plan_workflow("remove_environments"), "environments.remove",
           (*_PLAN_INPUT, "paths"), "remove_environments", _RESULT,
           "Remove user environments of a plan (by plan path) and their files."),
    _alias(plan_workflow("update_deployed_servers"), "deployed_servers.update",
           (*_PLAN_INPUT, "baremetal_deployment"), "update_deployed_servers", _RESULT,
           "Generate a plan's deployed-servers environment from baremetal_deployment (the "
           "YAML text of TripleO's baremetal deployment file of pre-provisioned servers) "
           "and enable it."),
)
#: The action each of them runs, by workflow name.
ALIAS_ACTIONS = {workflow.name: workflow.action for workflow in ACTION_WORKFLOWS}
