"""The deploy flow factory: plan -> ephemeral Heat -> stack -> config-download.

Builds the graph only (no I/O).  Linear, so a failing task reverts every
completed one in reverse order: config-download output removed, saved outputs
put back, Heat killed with its database dumped (kept for debugging), and the
deployment status recorded DEPLOY_FAILED with the reason.
"""

from __future__ import annotations

from taskflow.patterns import linear_flow

from tripleo_flow.actions import deploy
from tripleo_flow.actions.ansible import RunAnsible
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.actions.heat import KillHeat
from tripleo_flow.flows import names


def deploy_plan(context: ActionContext, run_ansible: bool = False) -> linear_flow.Flow:
    """status DEPLOYING -> check plan -> heat launch -> stack -> outputs ->
    config-download -> heat kill (dump) [-> ansible-playbook] -> status DEPLOY_SUCCESS.

    Requires ``plan``, ``work_dir``, ``heat_dir`` (the work dir) and ``heat_type``;
    with ``run_ansible`` also ``ansible_connection`` (None: the inventory's own).
    """
    flow = linear_flow.Flow("deploy").add(
        deploy.StartDeployment(context),
        deploy.CheckPlan(context),
        deploy.LaunchDeploymentHeat(context),
        deploy.DeployStack(context),
    )
    return _after_the_stack(flow, context, run_ansible)


def _after_the_stack(flow: linear_flow.Flow, context: ActionContext,
                     run_ansible: bool) -> linear_flow.Flow:
    """outputs -> config-download -> heat kill (dump) [-> ansible-playbook] ->
    status DEPLOY_SUCCESS."""
    flow.add(deploy.SaveStackOutputs(context), deploy.WriteConfigDownload(context),
             KillHeat(context, provides=names.HEAT_KILL))
    if run_ansible:
        flow.add(RunAnsible(context))
    return flow.add(deploy.FinishDeployment(context))


def config_download_only(context: ActionContext,
                         run_ansible: bool = False) -> linear_flow.Flow:
    """kept stack? -> status DEPLOYING -> heat launch (restored) -> stack finished? ->
    outputs -> config-download -> heat kill (dump) [-> ansible-playbook] ->
    status DEPLOY_SUCCESS: the steps after the stack, on the stack an earlier deploy
    kept in the work dir, which is neither created nor updated.

    Requires what :func:`deploy_plan` requires.
    """
    flow = linear_flow.Flow("config-download-only").add(
        deploy.KeptStack(context),  # before the status: nothing to re-run changes nothing
        deploy.StartDeployment(context),
        deploy.LaunchDeploymentHeat(context),
        deploy.CheckKeptStack(context),
    )
    return _after_the_stack(flow, context, run_ansible)
