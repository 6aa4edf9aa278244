"""Plan lifecycle actions: create (and publish), list, export, delete.

The update of a plan's templates is :mod:`tripleo_flow.actions.plan_update`; the
history and restore of its plan-environment, :mod:`tripleo_flow.actions.plan_versions`.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.common import crashpoints, safe_yaml
from tripleo_flow.core.deploy.progress import PlanProgressListener, plan_stage
from tripleo_flow.core.plan import capabilities, plan_export, planenv, roles, validation
from tripleo_flow.engine.lang.action import InputPath, OutputPath, SecretsOut
from tripleo_flow.plans import sources
from tripleo_flow.plans.plan import (
    OWN_CREATES,
    PLAN_ENV,
    Manifest,
    PlanRepository,
    check_plan_name,
    digest,
)

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)


def load_checked_tree(plan: str, templates: str, listener: PlanProgressListener | None,
                      conf: cfg.ConfigOpts,
                      data_files: dict[str, str] | None = None) -> dict[str, bytes]:
    """Read a template tree and check everything that can be checked offline.

    :param conf: its ``[limits]`` bound a tarball and the roles.
    :param data_files: YAML text replacing the tree's ``roles_data.yaml``,
        ``network_data.yaml`` or ``vip_data.yaml`` (:func:`roles.with_data_files`).
    """
    files = _read_tree(templates, conf, data_files)
    validation.check_yaml_files(files, plan_stage(listener, plan, "check"))
    _check_data(files, conf)
    return files


def load_tree(templates: str, conf: cfg.ConfigOpts,
              data_files: dict[str, str] | None = None) -> dict[str, bytes]:
    """Read a template tree and check it as :func:`load_checked_tree` does, all but the
    YAML syntax of the files its data files do not name (a
    :class:`~tripleo_flow.core.plan.validation.YamlCheck` of the tree, left to the caller).

    A tree that fails here gets the error :func:`load_checked_tree` raises: a bad YAML
    file anywhere in it comes before a bad data file.
    """
    files = _read_tree(templates, conf, data_files)
    try:
        _check_data(files, conf)
    except exceptions.TripleoFlowError:
        validation.check_yaml_files(files)
        raise
    return files


def _read_tree(templates: str, conf: cfg.ConfigOpts,
               data_files: dict[str, str] | None) -> dict[str, bytes]:
    files = sources.read_templates(templates, max_size=conf.limits.archive_max_size,
                                   max_members=conf.limits.archive_max_members)
    if not files:
        raise exceptions.InvalidInput(f"Templates {templates!r} hold no files.")
    return roles.with_data_files(
        files, {k: str(v).encode("utf-8") for k, v in (data_files or {}).items()})


def _check_data(files: dict[str, bytes], conf: cfg.ConfigOpts) -> None:
    """Check the plan-environment, roles, networks, VIPs and capabilities map."""
    if PLAN_ENV in files:
        planenv.parse_plan_environment(files[PLAN_ENV], PLAN_ENV)
    if "roles_data.yaml" in files:
        roles.validate_roles(safe_yaml.load_yaml(files["roles_data.yaml"], "roles_data.yaml"),
                             max_count=conf.limits.nodes_max)
    if "network_data.yaml" in files:
        roles.validate_networks(safe_yaml.load_yaml(files["network_data.yaml"],
                                                    "network_data.yaml"))
    if roles.VIP_DATA in files:
        roles.validate_vips(safe_yaml.load_yaml(files[roles.VIP_DATA], roles.VIP_DATA))
    if capabilities.CAPABILITIES_MAP in files:
        capabilities.check_capabilities_map(safe_yaml.load_yaml(
            files[capabilities.CAPABILITIES_MAP], capabilities.CAPABILITIES_MAP))


class CreatePlan(Action):
    """Create a plan from a template directory or .tar.gz archive.

    The plan stays invisible to other processes (not listed, not found) until
    :class:`PublishPlan`, the last task of a create, publishes it; while it runs
    the create holds a lease, so a create killed half-way is told apart from
    one still running, and the next create of the same name removes its remains.

    The archive limits and the data files (plan-environment, roles, networks,
    VIPs, capabilities map) are checked before anything is written; the YAML
    syntax of the rest of the tree is checked part by part as the parts upload
    (each part once it passed), so the check and the upload overlap.  A bad
    file still fails the create with the error of a check before the upload
    (the first bad file in sorted order), after about the time of the check,
    not of the upload; what was written by then (the parts uploaded during the
    check) goes with the container, which is removed as for any failed create.
    A create killed half-way leaves a leased, incomplete container, as before:
    the next create of the same name removes it.
    """

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, templates: InputPath, description: str = "",
                data_files: dict[str, str] | None = None) -> dict[str, Any]:
        check_plan_name(plan)
        repo = PlanRepository(self.context.store)
        if repo.exists(plan):
            raise exceptions.PlanExists(plan)
        listener = self.context.reporter
        files = load_tree(templates, self.context.conf, data_files)
        check = validation.YamlCheck(files, plan_stage(listener, plan, "check"))
        if PLAN_ENV in files:
            env = planenv.parse_plan_environment(files[PLAN_ENV], PLAN_ENV)
            env["name"] = plan
            if description:
                env["description"] = description
        else:
            env = planenv.default_plan_environment(plan, description, plan_files=list(files))
        files[PLAN_ENV] = safe_yaml.dump_yaml(env)
        manifest = Manifest(templates={p: digest(d) for p, d in files.items() if p != PLAN_ENV})
        create_id = uuid.uuid4().hex
        with self.context.locks.hold(plan):
            self._claim(repo, plan)
            try:
                repo.begin_create(plan, create_id)
                # Versioning is turned on once the templates are rendered (the create's
                # process_templates: PlanRepository.start_history): on Swift it costs
                # 2.5x per write, and only later changes need history.  The YAML check
                # of each part of the tree runs while the parts before it upload: a bad
                # file stops the upload and the container is removed below.
                self.context.store.put_objects(plan, files,
                                               plan_stage(listener, plan, "upload"), check)
                crashpoints.reached("plan.create:uploaded")
                repo.save_manifest(plan, manifest)
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

    def execute(self, plan: str) -> str:
        repo = PlanRepository(self.context.store)
        with self.context.locks.hold(plan):
            creating = repo.creating(plan)
            if creating is not None:
                if creating not in OWN_CREATES:
                    raise exceptions.PlanNotFound(plan)
                repo.start_history(plan)  # a create that rendered nothing
                if not repo.publish(plan, creating):
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

    def execute(self) -> list[str]:
        return PlanRepository(self.context.store).list_plans()


class ExportPlan(Action):
    """Export a plan as a .tar.gz archive written to a file.

    Run again (a resumed job), it refuses to overwrite the archive it wrote.
    """

    rerun = Rerun.REFUSES

    def execute(self, plan: str, output: OutputPath, secrets: SecretsOut = False) -> str:
        """With ``secrets`` the archive is the whole plan, passwords included (a
        backup); without, each environment's secrets are left out (what the HTTP
        API hands out: :mod:`tripleo_flow.core.plan.plan_export`)."""
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        target = Path(output)
        if target.exists():
            raise exceptions.InvalidInput(
                f"Output file {output!r} already exists; choose another name or remove it.")
        with self.context.hold_plan(plan):  # never a tree part old, part new
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
