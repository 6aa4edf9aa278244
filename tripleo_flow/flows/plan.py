"""Flow factories for plan changes.  They build graphs and do no I/O.

Every flow is linear: when a task fails, the completed ones revert in reverse
order, so a failed create leaves no plan and a failed update leaves the plan as
it was.
"""

from __future__ import annotations

from taskflow.patterns import linear_flow

from tripleo_flow.actions import (
    capabilities,
    deployed_servers,
    networks,
    parameters,
    passwords,
    plan,
    roles,
    userenvs,
)
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.actions.templates import ProcessTemplates


def create_plan(context: ActionContext, environments: bool = False) -> linear_flow.Flow:
    """plan.create [-> environments.add] -> templates.process -> passwords.generate
    -> plan.publish.

    Requires ``plan``, ``templates`` and ``description`` (``data_files`` optional);
    with ``environments``, ``user_environments`` and ``replace`` too.  The plan
    becomes visible only at the end, complete (rendered files and passwords).
    """
    flow = linear_flow.Flow("create-plan").add(plan.CreatePlan(context))
    if environments:
        flow.add(userenvs.AddEnvironments(context))
    return flow.add(
        ProcessTemplates(context),
        passwords.GeneratePasswords(context),
        plan.PublishPlan(context),
    )


def update_plan(context: ActionContext, environments: bool = False) -> linear_flow.Flow:
    """plan.update [-> environments.add] -> templates.process -> passwords.generate
    (inputs as :func:`create_plan`, without ``description``)."""
    flow = linear_flow.Flow("update-plan").add(plan.UpdatePlan(context))
    if environments:
        flow.add(userenvs.AddEnvironments(context))
    return flow.add(
        ProcessTemplates(context),
        passwords.GeneratePasswords(context),
    )


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
