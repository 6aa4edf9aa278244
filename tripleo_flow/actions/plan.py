"""Plan actions: create, list, export, delete, update."""

from __future__ import annotations

import logging
import os
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun, decode_blobs, encode_blobs
from tripleo_flow.actions.envedit import previous_version
from tripleo_flow.actions.paths import InputPath, OutputPath, SecretsOut
from tripleo_flow.actions.undo import restore_objects
from tripleo_flow.core import (
    capabilities,
    crashpoints,
    names,
    plan_export,
    planenv,
    planmerge,
    rendering,
    roles,
    validation,
)
from tripleo_flow.core.progress import PlanProgressListener, plan_stage
from tripleo_flow.plans import sources
from tripleo_flow.plans.plan import (
    MANIFEST,
    OWN_CREATES,
    PLAN_ENV,
    RESERVED_PREFIX,
    Journal,
    Manifest,
    PlanRepository,
    check_plan_name,
    digest,
)

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)


def load_checked_tree(plan: str, templates: str, listener: PlanProgressListener | None = None,
                      conf: cfg.ConfigOpts | None = None,
                      data_files: dict[str, str] | None = None) -> dict[str, bytes]:
    """Read a template tree and check everything that can be checked offline.

    :param conf: its ``[limits]`` bound a tarball (defaults without it).
    :param data_files: YAML text replacing the tree's ``roles_data.yaml``,
        ``network_data.yaml`` or ``vip_data.yaml`` (:func:`roles.with_data_files`).
    """
    limits = {"max_size": conf.limits.archive_max_size,
              "max_members": conf.limits.archive_max_members} if conf is not None else {}
    files = sources.read_templates(templates, **limits)
    if not files:
        raise exceptions.InvalidInput(f"Templates {templates!r} hold no files.")
    files = roles.with_data_files(
        files, {k: str(v).encode("utf-8") for k, v in (data_files or {}).items()})
    validation.check_yaml_files(files, plan_stage(listener, plan, "check"))
    if PLAN_ENV in files:
        planenv.parse_plan_environment(files[PLAN_ENV], PLAN_ENV)
    if "roles_data.yaml" in files:
        roles.validate_roles(planenv.load_yaml(files["roles_data.yaml"], "roles_data.yaml"))
    if "network_data.yaml" in files:
        roles.validate_networks(planenv.load_yaml(files["network_data.yaml"], "network_data.yaml"))
    if roles.VIP_DATA in files:
        roles.validate_vips(planenv.load_yaml(files[roles.VIP_DATA], roles.VIP_DATA))
    if capabilities.CAPABILITIES_MAP in files:
        capabilities.check_capabilities_map(planenv.load_yaml(
            files[capabilities.CAPABILITIES_MAP], capabilities.CAPABILITIES_MAP))
    return files


class CreatePlan(Action):
    """Create a plan from a template directory or .tar.gz archive.

    The plan stays invisible to other processes (not listed, not found) until
    :class:`PublishPlan`, the last task of a create, publishes it; while it runs
    the create holds a lease, so a create killed half-way is told apart from
    one still running, and the next create of the same name removes its remains.
    """

    rerun = Rerun.CONVERGES
    default_provides = names.PLAN_CREATED

    def execute(self, plan: str, templates: InputPath, description: str = "",
                data_files: dict[str, str] | None = None) -> dict[str, Any]:
        check_plan_name(plan)
        repo = PlanRepository(self.context.store)
        if repo.exists(plan):
            raise exceptions.PlanExists(plan)
        listener = self.context.reporter
        files = load_checked_tree(plan, templates, listener, self.context.conf, data_files)
        if PLAN_ENV in files:
            env = planenv.parse_plan_environment(files[PLAN_ENV], PLAN_ENV)
            env["name"] = plan
            if description:
                env["description"] = description
        else:
            env = planenv.default_plan_environment(plan, description, plan_files=list(files))
        files[PLAN_ENV] = planenv.dump_yaml(env)
        manifest = Manifest(templates={p: digest(d) for p, d in files.items() if p != PLAN_ENV})
        create_id = uuid.uuid4().hex
        with self.context.locks.hold(plan):
            self._claim(repo, plan)
            try:
                repo.begin_create(plan, create_id)
                # Versioning is turned on after the first upload: on Swift it costs
                # 2.5x on a template tree, and only later changes need history.
                self.context.store.put_objects(plan, files,
                                               plan_stage(listener, plan, "upload"))
                crashpoints.reached("plan.create:uploaded")
                repo.save_manifest(plan, manifest)
                self.context.store.set_versioning(plan, True)
            except BaseException:
                if repo.plan_id(plan) == create_id:
                    self.context.store.delete_container(plan)
                self._end(plan, create_id)
                raise
        crashpoints.reached("plan.create:done")
        return {"plan": plan, "files": len(files), "create_id": create_id}

    def _claim(self, repo: PlanRepository, plan: str) -> None:
        """Take the plan's create lease, removing what a killed create left."""
        store = self.context.store
        if store.container_exists(plan):
            creating = repo.creating(plan)
            if not creating:
                raise exceptions.PlanExists(plan)
            if creating in OWN_CREATES or not self.context.locks.take_lease(_lease(plan)):
                raise exceptions.PlanBeingCreated(plan)
            LOG.warning("Removing the incomplete plan %s left by a create that did not "
                        "finish (create %s).", plan, creating)
            try:
                _remove_abandoned(store, plan)
            except BaseException:
                self.context.locks.end_lease(_lease(plan))
                raise
        elif not self.context.locks.take_lease(_lease(plan)):
            raise exceptions.PlanBeingCreated(plan)

    def _end(self, plan: str, create_id: str) -> None:
        OWN_CREATES.discard(create_id)
        self.context.locks.end_lease(_lease(plan))

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Delete the plan container this action created (nothing when it created
        none, or when the container is now another create's)."""
        if not isinstance(result, dict) or result.get("plan") != plan:
            return
        create_id = result.get("create_id")
        repo = PlanRepository(self.context.store)
        with self.context.locks.hold(plan):
            if self.context.store.container_exists(plan) and (
                    create_id is None or repo.plan_id(plan) == create_id):
                self.context.store.delete_container(plan)
        if create_id is not None:
            self._end(plan, create_id)


class PublishPlan(Action):
    """Make a newly created plan visible: the last task of a plan create."""

    rerun = Rerun.CONVERGES
    default_provides = None

    def execute(self, plan: str) -> str:
        repo = PlanRepository(self.context.store)
        with self.context.locks.hold(plan):
            creating = repo.creating(plan)
            if creating is not None:
                if creating not in OWN_CREATES or not repo.publish(plan, creating):
                    raise exceptions.PlanNotFound(plan)
                self.context.locks.end_lease(_lease(plan))
        repo.require(plan)
        return plan

    # Publishing has nothing to undo: reverting the create removes the plan.


def _lease(plan: str) -> str:
    return f"create-{plan}"


def _remove_abandoned(store: Any, plan: str, attempts: int = 6) -> None:
    """Delete the container a killed create left.  Swift may still be storing
    objects of that create's last upload (a delete then meets 409 Conflict):
    try again for a few seconds."""
    for attempt in range(attempts):
        try:
            store.delete_container(plan)
            return
        except exceptions.ContainerNotFound:
            return
        except exceptions.PlanStoreError:
            if attempt + 1 == attempts:
                raise
            time.sleep(0.5 * 2 ** attempt)


class ListPlans(Action):
    """List the names of every plan in the store."""

    rerun = Rerun.READS
    default_provides = names.PLANS

    def execute(self) -> list[str]:
        return PlanRepository(self.context.store).list_plans()


class ExportPlan(Action):
    """Export a plan as a .tar.gz archive written to a file.

    Run again (a resumed job), it refuses to overwrite the archive it wrote.
    """

    rerun = Rerun.REFUSES
    default_provides = names.EXPORT_PATH

    def execute(self, plan: str, output: OutputPath, secrets: SecretsOut = False) -> str:
        """With ``secrets`` the archive is the whole plan, passwords included (a
        backup); without, each environment's secrets are left out (what the HTTP
        API hands out: :mod:`tripleo_flow.core.plan_export`)."""
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        target = Path(output)
        if target.exists():
            raise exceptions.InvalidInput(
                f"Output file {output!r} already exists; choose another name or remove it.")
        with self.context.locks.hold(plan):
            files = repo.read_all(plan)
        if not secrets:
            files = plan_export.without_secrets(files)
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
    """Delete a plan and its sibling containers (refused while a deployment is recorded).

    Run again (a resumed job), it fails with PlanNotFound: the plan is deleted.
    """

    rerun = Rerun.REFUSES
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
    """Replace a plan's templates, keeping the user's parameters, passwords and files.

    The update writes its intent (the plan's update journal) before it changes
    any object and removes it last, so the next update after a crash knows which
    objects to rewrite and which added ones to remove.  Its result (the undo
    record, persisted in the executions database) holds the template files it
    replaced but no secret: it names the stored plan-environment version to put
    back.
    """

    rerun = Rerun.CONVERGES
    default_provides = names.PLAN_UPDATED

    def execute(self, plan: str, templates: InputPath,
                data_files: dict[str, str] | None = None) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        listener = self.context.reporter
        new = load_checked_tree(plan, templates, listener, self.context.conf, data_files)
        store = self.context.store
        with self.context.locks.hold(plan):
            change = _plan_update(repo, plan, new, templates)
            # Templates that cannot render (Jinja errors, what the sandbox refuses,
            # size limits) fail here, before anything is written: a refused update
            # leaves no trace, not even in the plan-environment's history.
            rendering.render_plan(change.files_after,
                                  max_size=self.context.limit("render_max_size"))
            # A re-run (a resumed job) finds the plan updated already and gets the first
            # run's undo record: reverting it then still puts back the plan it replaced.
            undo = self.context.undo_record(lambda: {
                "backup": encode_blobs(change.backup), "created": change.created,
                "journal": change.had_journal})
            # Every write below is covered by the journal: first in, last out.
            repo.save_journal(plan, change.journal)
            try:
                store.put_objects(plan, change.to_write, plan_stage(listener, plan, "upload"))
                crashpoints.reached("plan.update:uploaded")
                store.delete_objects(plan, change.to_delete)
                store.set_versioning(plan, True)
                if change.new_env != change.old_env:  # else (a second run) no new version
                    store.put_object(plan, PLAN_ENV, change.new_env)
                repo.save_manifest(plan, change.manifest)
                repo.clear_journal(plan)
            except BaseException:
                _rollback(repo, plan, change)
                raise

            def find_version() -> str | None:
                if change.new_env == change.old_env:
                    return None
                found = repo.find_environment_version(plan, change.old_env)
                if found is None:  # never in the record: keep a copy in the plan
                    found = f"{_UNDO_PREFIX}{uuid.uuid4().hex}"
                    store.put_object(plan, found, change.old_env)
                return found

            env_version = self.context.undo_record(find_version, part="environment_version")
        crashpoints.reached("plan.update:done")
        return {"plan": plan, **undo, "environment_version": env_version,
                "changed": len(change.to_write) + 1, "deleted": change.to_delete,
                "dropped_environments": change.dropped}

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back every object the update overwrote or deleted and the
        plan-environment version it names; remove the objects it added."""
        if not isinstance(result, dict) or "backup" not in result:
            return
        repo = PlanRepository(self.context.store)
        if not repo.exists(plan):
            return
        store = self.context.store
        with self.context.locks.hold(plan):
            backup = decode_blobs(result["backup"])
            version = result.get("environment_version")
            if version and version.startswith(_UNDO_PREFIX):
                backup[PLAN_ENV] = store.get_object(plan, version)
            elif version:
                backup[PLAN_ENV] = repo.environment_version(plan, version)
            created = list(result.get("created", []))
            journal = (repo.journal(plan) or Journal()).merged(
                Journal(written=set(backup), deleted=set(created)))
            repo.save_journal(plan, journal)
            store.put_objects(plan, backup)
            store.delete_objects(plan, created)
            if not result.get("journal"):
                repo.clear_journal(plan)
            if version and version.startswith(_UNDO_PREFIX):
                store.delete_object(plan, version)


#: Where an update keeps the old plan-environment when the store lists no version of it.
_UNDO_PREFIX = f"{RESERVED_PREFIX}undo/"


@dataclass(frozen=True)
class _Change:
    """What one plan update writes, deletes and would put back."""

    to_write: dict[str, bytes]
    to_delete: list[str]
    created: list[str]
    new_env: bytes
    old_env: bytes
    manifest: Manifest
    backup: dict[str, bytes]
    journal: Journal
    had_journal: bool
    dropped: list[str]
    #: every file of the plan as the update leaves it (before rendering)
    files_after: dict[str, bytes]


def _plan_update(repo: PlanRepository, plan: str, new: dict[str, bytes],
                 templates: str) -> _Change:
    """Read the plan and work out the update (under the plan's lock; writes nothing).

    A journal left by an update that did not finish makes the objects it names
    untrusted: they are rewritten whatever the manifest's digests say, and the
    objects it added are the templates' (removed when the new ones lack them),
    never the user's.
    """
    store = repo.store
    old_names = set(store.list_objects(plan))
    manifest = repo.manifest(plan)
    pending = repo.journal(plan)
    untrusted = pending.untrusted() if pending else set()
    leftovers = pending.added if pending else set()
    user_files = {n for n in old_names
                  if n not in manifest.templates and n not in manifest.rendered
                  and n not in leftovers and n != PLAN_ENV and not n.startswith(RESERVED_PREFIX)}
    clash = sources.file_directory_clash(set(new) | user_files)
    if clash is not None:
        raise exceptions.InvalidInput(
            f"Cannot update plan {plan!r} with {templates!r}: {clash[0]!r} would be both a "
            f"file and a directory (of {clash[1]!r}, the templates' or the plan's own). "
            "Rename or remove one of them.")
    try:
        old_env = store.get_object(plan, PLAN_ENV)
    except exceptions.ObjectNotFound:
        old_env = planenv.dump_yaml(repo.environment(plan))  # raises the usual error
    new_env, dropped = planmerge.merge_for_update(
        planenv.parse_plan_environment(old_env, PLAN_ENV), new.get(PLAN_ENV), plan,
        planenv.available_files(set(new) | user_files))
    ours = {p: d for p, d in new.items() if p != PLAN_ENV and p not in user_files}
    to_write = {p: d for p, d in ours.items()
                if p in untrusted or p not in old_names or manifest.templates.get(p) != digest(d)}
    to_delete = sorted(p for p in old_names if p not in ours and p not in user_files
                       and (p in manifest.templates or p in leftovers))
    backup_names = (set(to_write) | set(to_delete) | {MANIFEST}) & old_names
    created = sorted(set(to_write) - old_names)
    return _Change(
        to_write=to_write, to_delete=to_delete, created=created,
        new_env=planenv.dump_yaml(new_env), old_env=old_env,
        manifest=Manifest(templates={p: digest(d) for p, d in ours.items()},
                          rendered=manifest.rendered),
        backup={p: store.get_object(plan, p) for p in sorted(backup_names)},
        journal=(pending or Journal()).merged(Journal(set(to_write), set(created),
                                                      set(to_delete))),
        had_journal=pending is not None, dropped=dropped,
        files_after={**{n: store.get_object(plan, n) for n in sorted(user_files)}, **ours,
                     PLAN_ENV: planenv.dump_yaml(new_env)})


def _rollback(repo: PlanRepository, plan: str, change: _Change) -> None:
    """Put the plan back as it was before a failed update; never raises (the
    update's own error is the one to report).  When a step fails, the journal
    stays, so the next update repairs what is left."""
    store = repo.store
    steps: list[tuple[str, Callable[[], None]]] = [
        ("restore the replaced objects", lambda: store.put_objects(plan, change.backup)),
        ("restore plan-environment.yaml",
         lambda: store.put_object(plan, PLAN_ENV, change.old_env)),
        ("remove the added objects", lambda: store.delete_objects(plan, change.created)),
    ]
    failed = False
    for what, step in steps:
        try:
            step()
        except Exception as exc:  # keep going: restore as much as possible
            failed = True
            LOG.error("Rolling back the update of plan %s: could not %s (%s); run the "
                      "update again to repair the plan.", plan, what, exc)
    if not failed and not change.had_journal:
        try:
            repo.clear_journal(plan)
        except Exception as exc:
            LOG.error("Rolling back the update of plan %s: could not remove its journal "
                      "(%s); the next update rewrites the objects it names.", plan, exc)


class PlanHistory(Action):
    """List the stored versions of a plan's plan-environment.yaml, newest first."""

    rerun = Rerun.READS
    default_provides = names.PLAN_HISTORY

    def execute(self, plan: str) -> list[dict[str, Any]]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        return [{"version": v.version_id, "last_modified": v.last_modified, "size": v.size,
                 "current": v.is_latest} for v in repo.environment_versions(plan)]


class RestorePlan(Action):
    """Make an earlier version of a plan's plan-environment.yaml the current one."""

    rerun = Rerun.CONVERGES
    default_provides = names.PLAN_RESTORED

    def execute(self, plan: str, version: str) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.locks.hold(plan):
            old = repo.environment_version(plan, version)
            planenv.parse_plan_environment(old, f"{PLAN_ENV} (version {version})")
            current = self.context.store.get_object(plan, PLAN_ENV)
            if current == old:  # already current: nothing to write; a re-run (a resumed
                # job) gets the version its first run named, if it got that far
                previous = self.context.undo_record(lambda: None, part="version")
                return {"plan": plan, "version": version, "previous_version": previous}
            self.context.store.put_object(plan, PLAN_ENV, old)

            def find() -> str:  # the undo record names the version holding the replaced content
                try:
                    return previous_version(repo, plan, lambda data: data == current)
                except exceptions.PlanStoreError:
                    self.context.store.put_object(plan, PLAN_ENV, current)
                    raise

            previous = self.context.undo_record(find, part="version")
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
        if not result.get("previous_version") or not repo.exists(plan):
            return
        with self.context.locks.hold(plan):
            data = repo.environment_version(plan, result["previous_version"])
            self.context.store.put_object(plan, PLAN_ENV, data)
