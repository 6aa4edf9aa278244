"""Plan actions: create, list, export, delete, update."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, encode_blobs
from tripleo_flow.actions.envedit import previous_version
from tripleo_flow.actions.paths import InputPath, OutputPath
from tripleo_flow.actions.undo import restore_objects
from tripleo_flow.core import capabilities, planenv, planmerge, roles, validation
from tripleo_flow.core.progress import PlanProgressListener, plan_stage
from tripleo_flow.flows import names
from tripleo_flow.plans import sources
from tripleo_flow.plans.plan import (
    MANIFEST,
    PLAN_ENV,
    PLAN_TAG,
    Manifest,
    PlanRepository,
    check_plan_name,
    digest,
)

if TYPE_CHECKING:
    from oslo_config import cfg

#: ``ActionContext.extras`` key of a :data:`~tripleo_flow.core.progress.PlanProgressListener`
#: that plan create and update tell how far checking and uploading are.
PLAN_PROGRESS = "plan_progress"


def load_checked_tree(plan: str, templates: str, listener: PlanProgressListener | None = None,
                      conf: cfg.ConfigOpts | None = None) -> dict[str, bytes]:
    """Read a template tree and check everything that can be checked offline.

    :param conf: its ``[limits]`` bound a tarball (defaults without it).
    """
    limits = {"max_size": conf.limits.archive_max_size,
              "max_members": conf.limits.archive_max_members} if conf is not None else {}
    files = sources.read_templates(templates, **limits)
    if not files:
        raise exceptions.InvalidInput(f"Templates {templates!r} hold no files.")
    validation.check_yaml_files(files, plan_stage(listener, plan, "check"))
    if PLAN_ENV in files:
        planenv.parse_plan_environment(files[PLAN_ENV], PLAN_ENV)
    if "roles_data.yaml" in files:
        roles.validate_roles(planenv.load_yaml(files["roles_data.yaml"], "roles_data.yaml"))
    if "network_data.yaml" in files:
        roles.validate_networks(planenv.load_yaml(files["network_data.yaml"], "network_data.yaml"))
    if capabilities.CAPABILITIES_MAP in files:
        capabilities.check_capabilities_map(planenv.load_yaml(
            files[capabilities.CAPABILITIES_MAP], capabilities.CAPABILITIES_MAP))
    return files


class CreatePlan(Action):
    """Create a plan from a template directory or .tar.gz archive."""

    default_provides = names.PLAN_CREATED

    def execute(self, plan: str, templates: InputPath, description: str = "") -> dict[str, Any]:
        check_plan_name(plan)
        repo = PlanRepository(self.context.store)
        if repo.exists(plan):
            raise exceptions.PlanExists(plan)
        listener = self.context.extras.get(PLAN_PROGRESS)
        files = load_checked_tree(plan, templates, listener, self.context.conf)
        if PLAN_ENV in files:
            env = planenv.parse_plan_environment(files[PLAN_ENV], PLAN_ENV)
            env["name"] = plan
            if description:
                env["description"] = description
        else:
            env = planenv.default_plan_environment(plan, description, plan_files=list(files))
        files[PLAN_ENV] = planenv.dump_yaml(env)
        manifest = Manifest(templates={p: digest(d) for p, d in files.items() if p != PLAN_ENV})
        with self.context.locks.hold(plan):
            if self.context.store.container_exists(plan):
                raise exceptions.PlanExists(plan)
            # Versioning is turned on after the first upload: on Swift it costs
            # 2.5x on a template tree, and only later changes need history.
            self.context.store.create_container(plan, {PLAN_TAG[0]: PLAN_TAG[1]})
            try:
                self.context.store.put_objects(plan, files,
                                               plan_stage(listener, plan, "upload"))
                repo.save_manifest(plan, manifest)
                self.context.store.set_versioning(plan, True)
            except BaseException:
                self.context.store.delete_container(plan)
                raise
        return {"plan": plan, "files": len(files)}

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Delete the plan container this action created (nothing when it created none)."""
        if not isinstance(result, dict) or result.get("plan") != plan:
            return
        with self.context.locks.hold(plan):
            if self.context.store.container_exists(plan):
                self.context.store.delete_container(plan)


class ListPlans(Action):
    """List the names of every plan in the store."""

    default_provides = names.PLANS

    def execute(self) -> list[str]:
        return PlanRepository(self.context.store).list_plans()


class ExportPlan(Action):
    """Export a plan as a .tar.gz archive written to a file."""

    default_provides = names.EXPORT_PATH

    def execute(self, plan: str, output: OutputPath) -> str:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        target = Path(output)
        if target.exists():
            raise exceptions.InvalidInput(
                f"Output file {output!r} already exists; choose another name or remove it.")
        with self.context.locks.hold(plan):
            files = repo.read_all(plan)
        fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=f".{target.name}.")
        try:
            with os.fdopen(fd, "wb") as handle:
                sources.write_tarball(files, handle)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return str(target)

    def revert(self, plan: str, output: str, result: Any, **kwargs: Any) -> None:
        """Remove the archive this action wrote."""
        if isinstance(result, str) and os.path.isfile(result):
            os.unlink(result)


class DeletePlan(Action):
    """Delete a plan and its sibling containers (refused while a deployment is recorded)."""

    default_provides = names.PLAN_DELETED

    def execute(self, plan: str, force: bool = False) -> str:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.locks.hold(plan):
            status = repo.deployment_status(plan)
            if status and not force:
                raise exceptions.PlanBusy(plan, str(status.get("deployment_status", "recorded")))
            for sibling in repo.siblings(plan):
                self.context.store.delete_container(sibling)
            self.context.store.delete_container(plan)
        return plan

    # Deleting is final: there is nothing to revert (the flow puts it last).


class UpdatePlan(Action):
    """Replace a plan's templates, keeping the user's parameters, passwords and files."""

    default_provides = names.PLAN_UPDATED

    def execute(self, plan: str, templates: InputPath) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        listener = self.context.extras.get(PLAN_PROGRESS)
        new = load_checked_tree(plan, templates, listener, self.context.conf)
        store = self.context.store
        with self.context.locks.hold(plan):
            old_names = set(store.list_objects(plan))
            manifest = repo.manifest(plan)
            old_env = repo.environment(plan)
            user_files = {n for n in old_names
                          if n not in manifest.templates and n not in manifest.rendered
                          and n != PLAN_ENV and n != MANIFEST}
            new_env, dropped = planmerge.merge_for_update(
                old_env, new.get(PLAN_ENV), plan, set(new) | user_files)
            to_write = {p: d for p, d in new.items()
                        if p != PLAN_ENV and p not in user_files
                        and manifest.templates.get(p) != digest(d)}
            to_write[PLAN_ENV] = planenv.dump_yaml(new_env)
            to_delete = sorted(p for p in manifest.templates if p not in new and p in old_names
                               and p not in user_files)
            touched = (set(to_write) | set(to_delete) | {MANIFEST}) & old_names
            backup = {p: store.get_object(plan, p) for p in sorted(touched)}
            created = sorted(set(to_write) - old_names)
            new_manifest = Manifest(
                templates={p: digest(d) for p, d in new.items()
                           if p != PLAN_ENV and p not in user_files},
                rendered=manifest.rendered)
            try:
                store.put_objects(plan, to_write, plan_stage(listener, plan, "upload"))
                store.delete_objects(plan, to_delete)
                repo.save_manifest(plan, new_manifest)
            except BaseException:
                _restore(store, plan, backup, created)
                raise
        return {"plan": plan, "backup": encode_blobs(backup), "created": created,
                "changed": len(to_write), "deleted": to_delete,
                "dropped_environments": dropped}

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back every object the update overwrote or deleted; remove the ones it added."""
        restore_objects(self.context, plan, result)


def _restore(store: Any, plan: str, backup: dict[str, bytes], created: list[str]) -> None:
    store.put_objects(plan, backup)
    store.delete_objects(plan, created)


class PlanHistory(Action):
    """List the stored versions of a plan's plan-environment.yaml, newest first."""

    default_provides = names.PLAN_HISTORY

    def execute(self, plan: str) -> list[dict[str, Any]]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        return [{"version": v.version_id, "last_modified": v.last_modified, "size": v.size,
                 "current": v.is_latest} for v in repo.environment_versions(plan)]


class RestorePlan(Action):
    """Make an earlier version of a plan's plan-environment.yaml the current one."""

    default_provides = names.PLAN_RESTORED

    def execute(self, plan: str, version: str) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.locks.hold(plan):
            old = repo.environment_version(plan, version)
            planenv.parse_plan_environment(old, f"{PLAN_ENV} (version {version})")
            current = self.context.store.get_object(plan, PLAN_ENV)
            self.context.store.put_object(plan, PLAN_ENV, old)
            try:  # the undo record names the version holding the replaced content
                previous = previous_version(repo, plan, lambda data: data == current)
            except exceptions.PlanStoreError:
                self.context.store.put_object(plan, PLAN_ENV, current)
                raise
        return {"plan": plan, "version": version, "previous_version": previous}

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back the plan-environment that was current before the restore (read from
        the version the result names: the result holds no secret)."""
        if not isinstance(result, dict):
            return
        if "backup" in result:  # a record written before undo records named versions
            restore_objects(self.context, plan, result)
            return
        repo = PlanRepository(self.context.store)
        if "previous_version" not in result or not repo.exists(plan):
            return
        with self.context.locks.hold(plan):
            data = repo.environment_version(plan, result["previous_version"])
            self.context.store.put_object(plan, PLAN_ENV, data)
