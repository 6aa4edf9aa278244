"""The names of the shipped workflows the Python API runs (``workbooks/``): one
place, so the plan changes, the deployment and their interfaces name the same."""

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
#: The workbooks of the plan workflows (``workbooks/plan.yaml``, ``parameters.yaml``).
PLAN = "tripleo.plan"
PARAMETERS = "tripleo.parameters"


def plan_workflow(name: str) -> str:
    """The full name of plan workflow ``name`` (``tripleo.plan.<name>``)."""
    return f"{PLAN}.{name}"

#: The changes of an ephemeral Heat (``workbooks/heat.yaml``): launch, kill, dump,
#: restore; its status is read without a workflow.
HEAT = "tripleo.heat"


def heat_workflow(name: str) -> str:
    """The full name of Heat workflow ``name`` (``tripleo.heat.<name>``)."""
    return f"{HEAT}.{name}"
