"""Flow factories for the plan changes that do not yet run a workbook.  They
build graphs and do no I/O.

Creating, updating, deleting and exporting a plan run the workflows of
``workbooks/plan.yaml`` whichever interface starts them (:mod:`tripleo_flow.api.plans`).
Every flow here is linear: when a task fails, the completed ones revert in
reverse order, so a failed change leaves the plan as it was.
"""

from __future__ import annotations

from taskflow.patterns import linear_flow

from tripleo_flow.actions import (
    capabilities,
    deployed_servers,
    networks,
    parameters,
    passwords,
    roles,
    userenvs,
)
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.actions.templates import ProcessTemplates


def add_environments(context: ActionContext) -> linear_flow.Flow:
    """environments.add: requires ``plan``, ``user_environments``, ``position`` and
    ``replace``."""
    return linear_flow.Flow("add-environments").add(userenvs.AddEnvironments(context))


def update_deployed_servers(context: ActionContext) -> linear_flow.Flow:
    """deployed_servers.update: requires ``plan`` and ``baremetal_deployment``."""
    return linear_flow.Flow("update-deployed-servers").add(
        deployed_servers.UpdateDeployedServers(context))


def remove_environments(context: ActionContext) -> linear_flow.Flow:
    """environments.remove: requires ``plan`` and ``paths``."""
    return linear_flow.Flow("remove-environments").add(userenvs.RemoveEnvironments(context))


def update_roles(context: ActionContext) -> linear_flow.Flow:
    """roles.update -> templates.process (the role templates follow the roles)."""
    return linear_flow.Flow("update-roles").add(
        roles.UpdateRoles(context), ProcessTemplates(context))


def update_networks(context: ActionContext) -> linear_flow.Flow:
    """networks.update -> templates.process."""
    return linear_flow.Flow("update-networks").add(
        networks.UpdateNetworks(context), ProcessTemplates(context))


def update_parameters(context: ActionContext) -> linear_flow.Flow:
    return linear_flow.Flow("update-parameters").add(parameters.UpdateParameters(context))


def reset_parameters(context: ActionContext) -> linear_flow.Flow:
    return linear_flow.Flow("reset-parameters").add(parameters.ResetParameters(context))


def update_capabilities(context: ActionContext) -> linear_flow.Flow:
    return linear_flow.Flow("update-capabilities").add(
        capabilities.UpdateCapabilities(context))


def rotate_passwords(context: ActionContext) -> linear_flow.Flow:
    return linear_flow.Flow("rotate-passwords").add(passwords.RotatePasswords(context))
