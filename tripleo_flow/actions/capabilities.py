"""Capabilities: which environment files a plan offers and which are enabled."""

from __future__ import annotations

from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import capabilities
from tripleo_flow.plans.plan import PlanRepository

CAPABILITIES_MAP = "capabilities-map.yaml"


def _capabilities_map(repo: PlanRepository, plan: str, plan_files: list[str]) -> Any:
    if CAPABILITIES_MAP not in plan_files:
        return None
    return safe_yaml.load_yaml(repo.store.get_object(plan, CAPABILITIES_MAP), CAPABILITIES_MAP)


class GetCapabilities(Action):
    """List a plan's topics, environment groups and environments, each marked enabled."""

    rerun = Rerun.READS

    def execute(self, plan: str) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        plan_files = repo.names(plan)
        cmap = _capabilities_map(repo, plan, plan_files)
        return capabilities.get_capabilities(cmap, repo.environment(plan), plan_files)


class UpdateCapabilities(Action):
    """Select or deselect environment files of a plan (optionally purging the rest)."""

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, environments: dict[str, bool],
                purge: bool = False) -> dict[str, Any]:
        if not isinstance(environments, dict) or not all(
                isinstance(v, bool) for v in environments.values()):
            raise exceptions.InvalidInput(
                "environments must map each environment path to true or false.")
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.hold_plan(plan):
            plan_files = repo.names(plan)
            cmap = _capabilities_map(repo, plan, plan_files)
            env = repo.environment(plan)
            new_env = capabilities.update_environments(
                env, cmap, plan_files, environments, purge=purge)
            # A re-run (a resumed job) gets the first run's selection back, and writes
            # no new version.
            previous = self.context.undo_record(lambda: env.get("environments") or [])
            if new_env != env:
                repo.save_environment(plan, new_env)
        return {"previous": previous, "environments": new_env.get("environments") or []}

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back the environment selection as it was."""
        if not isinstance(result, dict) or "previous" not in result:
            return
        repo = PlanRepository(self.context.store)
        if not repo.exists(plan):
            return
        with self.context.locks.hold(plan):
            repo.set_environments(plan, result["previous"])
