"""Plan versions: the history of a plan's plan-environment.yaml and the restore of
an earlier version."""

from __future__ import annotations

from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.actions.envedit import previous_version
from tripleo_flow.actions.undo import restore_objects
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import planenv
from tripleo_flow.plans.plan import PLAN_ENV, PlanRepository


class PlanHistory(Action):
    """List the stored versions of a plan's plan-environment.yaml, newest first."""

    rerun = Rerun.READS

    def execute(self, plan: str) -> list[dict[str, Any]]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        return [{"version": v.version_id, "last_modified": v.last_modified, "size": v.size,
                 "current": v.is_latest} for v in repo.environment_versions(plan)]


class RestorePlan(Action):
    """Make an earlier version of a plan's plan-environment.yaml the current one.

    The plan's current passwords are kept (``keep_passwords``), as TripleO keeps the
    passwords section across plan updates: an earlier version may hold other
    passwords or none (the first version, before they were generated), and the next
    update would generate new ones for a cloud that runs with the current ones.
    """

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, version: str, keep_passwords: bool = True) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.hold_plan(plan):
            old = repo.environment_version(plan, version)
            old_env = planenv.parse_plan_environment(old, f"{PLAN_ENV} (version {version})")
            current = self.context.store.get_object(plan, PLAN_ENV)
            kept = keep_passwords and _passwords_differ(old_env, current)
            if kept:
                old = safe_yaml.dump_yaml(_with_passwords(old_env, current))
            outcome = {"plan": plan, "version": version, "passwords_kept": kept}
            if current == old:  # already current: nothing to write; a re-run (a resumed
                # job) gets the version its first run named, if it got that far
                previous = self.context.undo_record(lambda: None, part="version")
                return {**outcome, "previous_version": previous}
            self.context.store.put_object(plan, PLAN_ENV, old)

            def find() -> str:  # the undo record names the version holding the replaced content
                try:
                    return previous_version(repo, plan, lambda data: data == current)
                except exceptions.PlanStoreError:
                    self.context.store.put_object(plan, PLAN_ENV, current)
                    raise

            previous = self.context.undo_record(find, part="version")
        return {**outcome, "previous_version": previous}

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back the plan-environment that was current before the restore (read from
        the version the result names: the result holds no secret)."""
        if not isinstance(result, dict):
            return
        if "backup" in result:  # a record written before undo records named versions
            restore_objects(self.context, plan, result)
            return
        repo = PlanRepository(self.context.store)
        if not result.get("previous_version") or not repo.exists(plan):
            return
        with self.context.locks.hold(plan):
            data = repo.environment_version(plan, result["previous_version"])
            self.context.store.put_object(plan, PLAN_ENV, data)


def _passwords_differ(old_env: dict[str, Any], current: bytes) -> bool:
    """Whether the plan's current passwords are not those of ``old_env``."""
    now = planenv.parse_plan_environment(current, PLAN_ENV).get("passwords") or {}
    return bool(now) and now != (old_env.get("passwords") or {})


def _with_passwords(old_env: dict[str, Any], current: bytes) -> dict[str, Any]:
    """``old_env`` with the passwords section of the current plan-environment."""
    now = planenv.parse_plan_environment(current, PLAN_ENV)
    return {**old_env, "passwords": now["passwords"]}
