"""User environments actions: list, add (or replace) and remove a plan's own
environment files (:mod:`tripleo_flow.core.plan.userenvs`).

Their undo records hold no file content (an environment may hold passwords): the
objects they add are named, the ones they delete are named with the stored version
that holds them (plan containers keep versions), and the plan-environment's
``environments`` list is put back as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, ActionContext, Rerun
from tripleo_flow.core.plan import userenvs, validation
from tripleo_flow.plans.plan import PlanRepository

LOG = logging.getLogger(__name__)


def _environments(context: ActionContext, raw: Any) -> list[userenvs.EnvironmentFile]:
    if not isinstance(raw, list) or not raw:
        raise exceptions.InvalidInput("Give one or more environment files.")
    limits = context.conf.limits
    for index, item in enumerate(raw, start=1):
        validation.check_size(item, limits.parameters_max_size,
                              f"Environment file {index} (with the files it brings)")
    return [userenvs.EnvironmentFile.from_json(item, max_nodes=limits.yaml_max_nodes,
                                               max_depth=limits.yaml_max_depth) for item in raw]


def _current(repo: PlanRepository, plan: str, paths: list[str],
             objects: list[str]) -> list[tuple[str, dict[str, bytes]]]:
    """The plan's user environments as (name, files relative to their directory)."""
    found = []
    for path in paths:
        base = userenvs.directory(path)
        if base is None:
            return []
        found.append((path[len(base):], {o[len(base):]: repo.store.get_object(plan, o)
                                         for o in objects if o.startswith(base)}))
    return found


class ListEnvironments(Action):
    """List a plan's environments in order, marking the user's own."""

    rerun = Rerun.READS

    def execute(self, plan: str) -> list[dict[str, Any]]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        return userenvs.listing(repo.environment(plan).get("environments") or [])


class _Change(Action):
    """Write and delete user environment objects and save the new list, undoably."""

    def apply(self, plan: str, objects: Mapping[str, bytes], delete: list[str],
              entries: list[Any], previous: list[Any]) -> dict[str, Any]:
        """Under the plan's lock: write ``objects``, delete ``delete``, make ``entries``
        the plan's environments; on a failure put everything back and re-raise.

        The undo record is kept (:meth:`ActionContext.undo_record`) before the first
        write, the version each deletion left as soon as it is known."""
        repo = PlanRepository(self.context.store)
        store = self.context.store
        record: dict[str, Any] = {**self.context.undo_record(lambda: {
            "previous": previous, "created": sorted(objects), "deleting": sorted(delete)}),
            "deleted": {}}
        try:
            store.put_objects(plan, objects)
            for name in delete:
                store.delete_object(plan, name)
                record["deleted"][name] = self.deleted_version(plan, name)
            env = repo.environment(plan)
            env["environments"] = entries
            repo.save_environment(plan, env)
        except BaseException:
            self._undo(plan, record)
            raise
        return record

    def deleted_version(self, plan: str, name: str) -> str | None:
        """The stored version holding ``name`` just deleted (a re-run: the one its first
        run found)."""
        return self.context.undo_record(
            lambda: _deleted_version(self.context.store, plan, name), part=f"deleted:{name}")

    def rerun_record(self, plan: str, fallback: dict[str, Any]) -> dict[str, Any]:
        """The undo record of a change found done already: the first run's, when this
        is its re-run (a resumed job), else ``fallback`` (a change that was not needed)."""
        record = self.context.undo_record(lambda: fallback)
        if "deleting" in record:
            record = {**record, "deleted": {
                name: self.deleted_version(plan, name) for name in record["deleting"]}}
        return record

    def _undo(self, plan: str, record: Mapping[str, Any]) -> None:
        store = self.context.store
        PlanRepository(store).set_environments(plan, record["previous"])
        for name, version in (record.get("deleted") or {}).items():
            if version is None:
                LOG.error("Cannot restore %s of plan %s: no stored version holds it.",
                          name, plan)
                continue
            store.put_object(plan, name, store.get_object(plan, name, version_id=version))
        store.delete_objects(plan, record.get("created") or [])

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back the environments list, remove the objects added and restore
        the ones deleted (from their stored versions).  Safe to run twice."""
        if not isinstance(result, dict) or "previous" not in result:
            return
        repo = PlanRepository(self.context.store)
        if not repo.exists(plan):
            return
        with self.context.locks.hold(plan):
            self._undo(plan, result)


def _deleted_version(store: Any, plan: str, name: str) -> str | None:
    """The stored version holding the content of ``name`` just deleted."""
    versions = [v for v in store.list_versions(plan, name) if not v.is_latest]
    return versions[0].version_id if versions else None


def _already_added(users: list[str], current: list[tuple[str, dict[str, bytes]]],
                   wanted: list[tuple[str, dict[str, bytes]]],
                   position: int | None) -> list[str] | None:
    """The paths of ``wanted`` when the plan already holds exactly them (same names,
    same files) where an add at ``position`` puts them (None: after the others):
    what the same add left, so running it again adds nothing.  None otherwise."""
    if len(current) != len(users):  # a user environment that is not a stored directory
        return None
    if position is None:
        start = len(current) - len(wanted)
    else:
        start = position - 1
    if start < 0 or current[start:start + len(wanted)] != wanted:
        return None
    return users[start:start + len(wanted)]


class AddEnvironments(_Change):
    """Add user environment files (with the files they reference) to a plan, at a
    position among the user environments (default: last); with ``replace`` they
    become the plan's only user environments.

    Environments the plan already holds where this add would put them (the same
    names and files: a resumed job running the add again) are not added twice.
    """

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, user_environments: list[dict[str, Any]],
                position: int | None = None, replace: bool = False) -> dict[str, Any]:
        envs = _environments(self.context, user_environments)
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.hold_plan(plan):
            previous = list(repo.environment(plan).get("environments") or [])
            existing = self.context.store.list_objects(plan, prefix=userenvs.PREFIX)
            users = userenvs.user_paths(previous)
            current = _current(repo, plan, users, existing)
            wanted = [(e.name, dict(e.files)) for e in envs]
            if replace:
                done = users if current == wanted else None
            else:
                done = _already_added(users, current, wanted, position)
            if done is not None:  # a second run (a resumed job): the first one added them
                return {**self.rerun_record(plan, {"previous": previous, "created": [],
                                                   "deleted": {}}), "paths": done}
            number = userenvs.next_number(existing)
            paths: list[str] = []
            objects: dict[str, bytes] = {}
            for offset, env in enumerate(envs):
                path, stored = userenvs.stored(number + offset, env)
                paths.append(path)
                objects.update(stored)
            if replace:
                entries = userenvs.insert(
                    [e for e in previous if e.get("path") not in users], paths, None, plan)
                delete = sorted(existing)
            else:
                entries = userenvs.insert(previous, paths, position, plan)
                delete = []
            record = self.apply(plan, objects, delete, entries, previous)
        return {**record, "paths": paths}


class RemoveEnvironments(_Change):
    """Remove user environments (and the files stored with them) from a plan.

    Run again (a resumed job), it fails naming the environment it already removed.
    """

    rerun = Rerun.REFUSES

    def execute(self, plan: str, paths: list[str]) -> dict[str, Any]:
        if not isinstance(paths, list) or not paths or not all(
                isinstance(p, str) for p in paths):
            raise exceptions.InvalidInput(
                "Give the path of one or more user environments",
                hints=[exceptions.Hint("from", "plan.environments", {"plan": plan},
                                       sep=" (", tail=").")])
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.hold_plan(plan):
            previous = list(repo.environment(plan).get("environments") or [])
            listed = {e.get("path") for e in previous if isinstance(e, dict)}
            for path in paths:
                if path not in listed:
                    raise exceptions.InvalidInput(
                        f"Environment {path!r} is not among the environments of plan "
                        f"{plan!r};", hints=[exceptions.Hint(
                            "list them with", "plan.environments", {"plan": plan})])
                if not userenvs.is_user_environment(path):
                    raise exceptions.InvalidInput(
                        f"Environment {path!r} of plan {plan!r} comes with the plan's "
                        "templates, not from the user:", hints=[exceptions.Hint(
                            "disable it with", "capabilities.disable",
                            {"plan": plan, "path": path})])
            dirs = {userenvs.directory(p) for p in paths}
            existing = self.context.store.list_objects(plan, prefix=userenvs.PREFIX)
            delete = sorted(o for o in existing if userenvs.directory(o) in dirs)
            entries = [e for e in previous if not (isinstance(e, dict) and e.get("path") in paths)]
            record = self.apply(plan, {}, delete, entries, previous)
        return {**record, "paths": list(paths)}
