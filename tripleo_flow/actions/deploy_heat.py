"""The deployment's ephemeral Heat: its launch in the work dir (restored from the last
dump for an update) and :func:`live_heat`, the client of that Heat, launched again on
the database a killed run left when a resumed deployment finds it gone."""

from __future__ import annotations

import logging
import os
import shutil
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, ActionContext, Rerun
from tripleo_flow.engine.lang.action import WorkDir
from tripleo_flow.heat import make_launcher
from tripleo_flow.heat.client import HeatClient
from tripleo_flow.heat.database import HeatDatabase
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.plans.plan import PlanRepository
from tripleo_flow.workspace import owner

LOG = logging.getLogger(__name__)
PRE_DEPLOY_DUMP = "heat-db-dump.pre-deploy.sql"
FAILED_DUMP = "heat-db-dump.failed.sql"


def live_heat(context: ActionContext, plan: str, work_dir: str,
              heat: dict[str, Any], need_stack: bool = False) -> HeatClient:
    """A client of the Heat this deployment launched.

    When that Heat is gone because the process that launched it is (a resumed
    execution after a ``kill -9``: the ephemeral Heat dies with its owner), it is
    launched again here on the database the killed run left (the stack as far as
    it got; Heat marks what was in progress FAILED), owned by this process, which
    also takes the plan's DEPLOYING record over.  With ``need_stack`` (the stack had
    finished), a Heat whose database did not outlive it (a pod's) is an error.
    """
    conf = context.conf
    launcher = make_launcher(conf, heat.get("heat_type") or None, work_dir)
    status = launcher.status()
    if status.running:
        # Its own endpoint, the port its run record names: ``heat`` may be a
        # sub-workflow's input, and a Heat launched again after a kill -9 (by an earlier
        # task of this resumed run) took another port than the launch result.
        return HeatClient(status.endpoint or heat["endpoint"])
    LOG.warning("The Heat of %s is gone with the process that launched it; launching it "
                "again on the database it left to continue the deployment.", work_dir)
    endpoint = launcher.launch(owned_by="deploy", adopt=True)
    repo = PlanRepository(context.store)
    record = repo.deployment_status(plan) or {}
    if record.get("deployment_status") == "DEPLOYING":
        repo.set_deployment_status(plan, {**record, "owner": owner.current()})
    if not endpoint.adopted and need_stack:
        raise exceptions.HeatError(
            f"The Heat of {work_dir} died with the process that launched it and its "
            "database did not outlive it, so the stack this deployment finished is lost "
            "with it;", hints=[exceptions.Hint(
                "deploy again", "deploy", {"plan": plan})])
    return HeatClient(endpoint.endpoint)


def heat_database(context: ActionContext, work_dir: str,
                  heat: dict[str, Any]) -> HeatDatabase | None:
    """The database of the work dir's running Heat when it is one we launched and own
    (native, processes, container, pod: to read), else None (``installed``)."""
    launcher = make_launcher(context.conf, heat.get("heat_type") or None, work_dir)
    reader = getattr(launcher, "running_database", None)
    return reader() if reader is not None else None


class LaunchDeploymentHeat(Action):
    """Launch the work dir's ephemeral Heat (restored from the last dump for an update)."""

    rerun = Rerun.CONVERGES

    def _launcher(self, work_dir: str, heat_type: str | None) -> Any:
        conf = self.context.conf
        return make_launcher(conf, heat_type, work_dir)

    def execute(self, work_dir: WorkDir, heat_type: str | None = None) -> dict[str, Any]:
        work = HeatDir(work_dir)
        restore = work.dump_file.exists()
        dump_type = work.dump_type() if restore else None
        if restore:
            shutil.copy2(work.dump_file, work.root / PRE_DEPLOY_DUMP)
        # Owned by this deploy: Heat dies with it, and the next deploy cleans up after it.
        endpoint = self._launcher(work_dir, heat_type).launch(
            restore_db=restore, owned_by="deploy").as_dict()
        return {**endpoint, "restored": restore, "dump_type": dump_type}

    def revert(self, work_dir: str, heat_type: str | None = None, result: Any = None,
               **kwargs: Any) -> None:
        """Stop Heat, dumping its database. When the stack did not finish, for an update
        that dump goes to heat-db-dump.failed.sql (kept for debugging) and the pre-update
        dump stays the current one; a finished stack (see
        :class:`~tripleo_flow.actions.deploy_stack.DeployStack`) had the pre-update dump
        removed, so its own dump stays the current one."""
        work = HeatDir(work_dir)
        launched = result.get("heat_type") if isinstance(result, dict) else None
        self._launcher(work_dir, launched or heat_type).kill(dump=True)
        before = work.root / PRE_DEPLOY_DUMP
        if before.exists():
            if work.dump_file.exists():
                os.replace(work.dump_file, work.root / FAILED_DUMP)
            os.replace(before, work.dump_file)
            if isinstance(result, dict) and result.get("dump_type"):
                work.note_dump_type(str(result["dump_type"]))
