"""Plan update: replace a plan's templates, keeping the user's files, with its
journal (the update's intent, written first and removed last) and its rollback."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun, decode_blobs, encode_blobs
from tripleo_flow.actions.plan import load_checked_tree
from tripleo_flow.common import crashpoints, safe_yaml
from tripleo_flow.core.deploy.progress import plan_stage
from tripleo_flow.core.plan import planenv, planmerge, rendering
from tripleo_flow.engine.lang.action import InputPath
from tripleo_flow.plans import sources
from tripleo_flow.plans.plan import (
    MANIFEST,
    PLAN_ENV,
    RESERVED_PREFIX,
    Journal,
    Manifest,
    PlanRepository,
    digest,
)

LOG = logging.getLogger(__name__)


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
                                  max_size=self.context.limit("render_max_size"),
            timeout=self.context.seconds("render_timeout"))
            # A re-run (a resumed job) finds the plan updated already and gets the first
            # run's undo record: reverting it then still puts back the plan it replaced.
            undo = self.context.undo_record(lambda: {
                "backup": encode_blobs(change.backup), "created": change.created,
                "journal": change.had_journal, "unrendered": change.unrendered})
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
                # The tree is whole, its rendered files still the old templates': the
                # update stays unfinished until its process_templates task renders them.
                execution = self.context.execution
                repo.mark_unrendered(plan, execution.execution_id if execution else "")
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
        plan-environment version it names; remove the objects it added and its
        mark of templates not rendered yet (unless an earlier update left one)."""
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
            _restore_unrendered(repo, plan, result.get("unrendered"))
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
    #: the mark an earlier update left of templates it did not render (its execution)
    unrendered: str | None
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
        old_env = safe_yaml.dump_yaml(repo.environment(plan))  # raises the usual error
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
        new_env=safe_yaml.dump_yaml(new_env), old_env=old_env,
        manifest=Manifest(templates={p: digest(d) for p, d in ours.items()},
                          rendered=manifest.rendered),
        backup={p: store.get_object(plan, p) for p in sorted(backup_names)},
        journal=(pending or Journal()).merged(Journal(set(to_write), set(created),
                                                      set(to_delete))),
        had_journal=pending is not None, unrendered=repo.unrendered(plan), dropped=dropped,
        files_after={**{n: store.get_object(plan, n) for n in sorted(user_files)}, **ours,
                     PLAN_ENV: safe_yaml.dump_yaml(new_env)})


def _restore_unrendered(repo: PlanRepository, plan: str, earlier: str | None) -> None:
    """Put back the mark of unrendered templates as the update found it."""
    if earlier is None:
        repo.clear_unrendered(plan)
    else:
        repo.mark_unrendered(plan, earlier)


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
            _restore_unrendered(repo, plan, change.unrendered)
            repo.clear_journal(plan)
        except Exception as exc:
            LOG.error("Rolling back the update of plan %s: could not remove its journal "
                      "(%s); the next update rewrites the objects it names.", plan, exc)

