"""Plans on top of a :class:`~tripleo_flow.plans.store.PlanStore`.

A plan is a container tagged ``usage-tripleo: plan`` holding the template tree,
``plan-environment.yaml`` and a manifest (``.tripleo-flow/manifest.json``) that
records which objects came from the templates (with their SHA-256) and which
were rendered, so an update can tell the user's own files from the templates', and
what the last render read and wrote (:mod:`~tripleo_flow.plans.render_record`).
The deployment status lives in the sibling container ``<plan>-messages``.

Crash safety:

* A plan being created carries the container metadata ``tripleo-flow-creating``
  (the create's id) until the last task of the create publishes it.  Until then
  it is listed nowhere and is no plan to any other process; a create killed
  half-way leaves such a container, which the next create of that name removes.
* An update writes its intent (:data:`JOURNAL`: the objects it is about to write,
  add and delete) before it touches anything and removes it when done.  A
  journal left by a killed update tells the next update which objects and
  manifest digests not to trust.  Its last write before removing the journal is
  :data:`UNRENDERED` (the update's execution id): the new templates' j2 files are
  not rendered yet.  Rendering them removes it; until then the plan's update is
  unfinished as much as with the journal.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml, secret_masking
from tripleo_flow.core.plan import planenv, secrets
from tripleo_flow.plans.store import ObjectVersion, PlanStore, check_object_name

PLAN_ENV = "plan-environment.yaml"
MANIFEST = ".tripleo-flow/manifest.json"  # under RESERVED_PREFIX
JOURNAL = ".tripleo-flow/update.json"  # under RESERVED_PREFIX
#: Present from an update's last template write until its templates are rendered.
UNRENDERED = ".tripleo-flow/unrendered.json"  # under RESERVED_PREFIX
PLAN_TAG = ("usage-tripleo", "plan")
#: Container metadata: the id of the create that made the plan (kept).
PLAN_ID = "tripleo-flow-plan-id"
#: Container metadata: present (the create's id) until the create is complete.
CREATING = "tripleo-flow-creating"
MESSAGES_SUFFIX = "-messages"
DEPLOYMENT_STATUS = "deployment_status.yaml"
#: Data files a plan may carry beside its templates.
DATA_FILES = ("roles_data.yaml", "network_data.yaml", "capabilities-map.yaml", "j2_excludes.yaml")

#: Plan names: letters, digits and '-', not first (a name must not read as an option).
PLAN_NAME_PATTERN = "^[a-zA-Z0-9][a-zA-Z0-9-]*$"
#: Longest plan name (its containers, Heat stack and file names derive from it).
MAX_PLAN_NAME = 128
_NAME = re.compile(PLAN_NAME_PATTERN)
#: Objects of a plan that hold tripleo-flow's own bookkeeping: never a user's file.
RESERVED_PREFIX = ".tripleo-flow/"


def check_plan_name(name: str) -> str:
    """Return ``name`` when it is a valid plan name, else raise InvalidPlanName.

    Every entry point (CLI, HTTP, Python API, workflows) reaches this check
    before a plan's containers are named.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > MAX_PLAN_NAME:
        raise exceptions.InvalidPlanName(str(name))
    return name


def check_file_names(source: str, names: Iterable[str]) -> None:
    """Check that every file of a template tree can be an object of a plan.

    :raises InvalidArchive: naming the first file whose name a plan store refuses
        or that would overwrite tripleo-flow's bookkeeping (``.tripleo-flow/``).
    """
    for name in names:
        if name.startswith(RESERVED_PREFIX):
            raise exceptions.InvalidArchive(
                source, f"{name!r} is under {RESERVED_PREFIX}, which tripleo-flow keeps for "
                "its own files; remove or rename it")
        try:
            check_object_name(name)
        except exceptions.InvalidInput as exc:
            raise exceptions.InvalidArchive(source, str(exc)) from None


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _OwnCreates:
    """The ids of the plan creates running in this process: their plans are
    visible to this process's tasks before they are published."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._guard = threading.Lock()

    def add(self, create_id: str) -> None:
        with self._guard:
            self._ids.add(create_id)

    def discard(self, create_id: str) -> None:
        with self._guard:
            self._ids.discard(create_id)

    def __contains__(self, create_id: object) -> bool:
        with self._guard:
            return create_id in self._ids


OWN_CREATES = _OwnCreates()


def is_plan(metadata: Mapping[str, str]) -> bool:
    """Whether container ``metadata`` is a plan's, complete or being created."""
    return metadata.get(PLAN_TAG[0]) == PLAN_TAG[1]


def is_published(metadata: Mapping[str, str]) -> bool:
    """Whether container ``metadata`` is that of a complete plan."""
    return is_plan(metadata) and not metadata.get(CREATING)


@dataclass
class Manifest:
    """Which objects of a plan came from its templates, and which were rendered."""

    templates: dict[str, str] = field(default_factory=dict)
    rendered: list[str] = field(default_factory=list)
    #: What the last render read and wrote, when its outputs are the render of the
    #: files the plan holds (:mod:`~tripleo_flow.plans.render_record`).
    render: dict[str, Any] | None = None

    def to_bytes(self) -> bytes:
        raw: dict[str, Any] = {"templates": self.templates, "rendered": sorted(self.rendered)}
        if self.render is not None:
            raw["render"] = self.render
        return json.dumps(raw, sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Manifest:
        raw = json.loads(data)
        render = raw.get("render")
        return cls(dict(raw.get("templates", {})), list(raw.get("rendered", [])),
                   render if isinstance(render, dict) else None)


@dataclass
class Journal:
    """What an update is about to change: every object it writes (``written``),
    the ones among them it adds (``added``) and the ones it deletes."""

    written: set[str] = field(default_factory=set)
    added: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)

    def to_bytes(self) -> bytes:
        return json.dumps({"written": sorted(self.written), "added": sorted(self.added),
                           "deleted": sorted(self.deleted)}, sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Journal:
        try:
            raw = json.loads(data)
            return cls(set(raw.get("written", [])), set(raw.get("added", [])),
                       set(raw.get("deleted", [])))
        except (ValueError, AttributeError, TypeError) as exc:
            raise exceptions.PlanStoreError(
                f"The update journal {JOURNAL} is unreadable ({exc}); run the plan update "
                "again after deleting that object.") from exc

    def untrusted(self) -> set[str]:
        """Objects whose stored content and manifest digest may not match."""
        return self.written | self.deleted

    def merged(self, other: Journal) -> Journal:
        return Journal(self.written | other.written, self.added | other.added,
                       self.deleted | other.deleted)


class PlanFiles(Mapping[str, bytes]):
    """A plan's objects as a read-only mapping that fetches on first access."""

    def __init__(self, store: PlanStore, plan: str, names: list[str]) -> None:
        self._store = store
        self._plan = plan
        self._names = set(names)
        self._cache: dict[str, bytes] = {}

    def __getitem__(self, name: str) -> bytes:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._cache:
            self._cache[name] = self._store.get_object(self._plan, name)
        return self._cache[name]

    def prefetch(self, names: Iterable[str]) -> None:
        """Read those of ``names`` the plan has and were not read yet, at once (the
        store reads them in parallel where it can); one that cannot be read now is
        left for its first access to report."""
        wanted = sorted({n for n in names if n in self._names and n not in self._cache})
        if wanted:
            self._cache.update(self._store.get_objects(self._plan, wanted))

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names))

    def __len__(self) -> int:
        return len(self._names)


class PlanRepository:
    """Plan-level reads and writes; every method is one store operation or a few."""

    def __init__(self, store: PlanStore) -> None:
        self.store = store

    # -- plans -------------------------------------------------------------

    def exists(self, plan: str) -> bool:
        """Whether ``plan`` is a complete plan (or one this process is creating)."""
        try:  # one request: reading the metadata of a missing container fails
            meta = self.store.get_container_metadata(plan)
        except exceptions.ContainerNotFound:
            return False
        return is_published(meta) or (is_plan(meta) and meta.get(CREATING) in OWN_CREATES)

    def require(self, plan: str) -> None:
        check_plan_name(plan)
        if not self.exists(plan):
            raise exceptions.PlanNotFound(plan)

    def list_plans(self) -> list[str]:
        return [c.name for c in self.store.list_containers() if is_published(c.metadata)]

    def creating(self, plan: str) -> str | None:
        """The id of the create of ``plan`` that has not finished (None when the
        container does not exist or holds a complete plan)."""
        try:
            meta = self.store.get_container_metadata(plan)
        except exceptions.ContainerNotFound:
            return None
        return meta.get(CREATING) or None

    def plan_id(self, plan: str) -> str | None:
        """The id of the create that made ``plan`` (None for a missing container)."""
        try:
            return self.store.get_container_metadata(plan).get(PLAN_ID) or None
        except exceptions.ContainerNotFound:
            return None

    def begin_create(self, plan: str, create_id: str) -> None:
        """Create ``plan``'s container, visible only to this process until published."""
        OWN_CREATES.add(create_id)
        try:
            self.store.create_container(plan, {PLAN_TAG[0]: PLAN_TAG[1], PLAN_ID: create_id,
                                               CREATING: create_id})
        except BaseException:
            OWN_CREATES.discard(create_id)
            raise

    def start_history(self, plan: str) -> None:
        """Turn versioning on for ``plan`` while it is being created (nothing for a
        complete plan, already versioned): what the create wrote before (templates,
        their rendered files: new objects) needs no history and costs less
        unversioned (on Swift every versioned write stores the object twice)."""
        if self.creating(plan) is not None:
            self.store.set_versioning(plan, True)

    def publish(self, plan: str, create_id: str) -> bool:
        """Make the plan created by ``create_id`` a complete plan; False when
        ``plan`` is not that create's (anymore)."""
        if self.creating(plan) != create_id:
            return False
        self.store.set_container_metadata(plan, {CREATING: None})
        OWN_CREATES.discard(create_id)
        return True

    def siblings(self, plan: str) -> list[str]:
        """Containers that belong to ``plan`` (``<plan>-messages`` and the like)."""
        names = {c.name for c in self.store.list_containers()}
        return sorted(n for n in names if n == plan + MESSAGES_SUFFIX)

    # -- objects -----------------------------------------------------------

    def names(self, plan: str) -> list[str]:
        """The plan's objects, without tripleo-flow's own bookkeeping."""
        return [n for n in self.store.list_objects(plan) if not n.startswith(RESERVED_PREFIX)]

    def files(self, plan: str) -> PlanFiles:
        return PlanFiles(self.store, plan, self.names(plan))

    def read_all(self, plan: str) -> dict[str, bytes]:
        return {name: self.store.get_object(plan, name) for name in self.names(plan)}

    # -- plan-environment --------------------------------------------------

    def environment(self, plan: str) -> dict[str, Any]:
        try:
            data = self.store.get_object(plan, PLAN_ENV)
        except exceptions.ObjectNotFound:
            raise exceptions.InvalidTemplate(
                PLAN_ENV, f"plan {plan!r} has no {PLAN_ENV}; recreate or update the plan")
        return planenv.parse_plan_environment(data, PLAN_ENV)

    def secrets(self, plan: str) -> set[str]:
        """The plan's secret values: its passwords and the secret parameters of its
        plan-environment and of the environment files it lists (none for a plan with
        no readable plan-environment)."""
        try:
            env = self.environment(plan)
        except exceptions.TripleoFlowError:
            return set()
        found = secrets.environment_secrets(env)
        for entry in env.get("environments") or []:
            if not isinstance(entry, Mapping):
                continue
            if "data" in entry:
                found |= secrets.environment_secrets(entry["data"])
                continue
            try:
                data = self.store.get_object(plan, str(entry.get("path")))
                found |= secrets.environment_secrets(safe_yaml.load_yaml(data, "environment"))
            except exceptions.TripleoFlowError:
                continue  # missing or unparsable: refused where it is used
        return found

    def save_environment(self, plan: str, env: Mapping[str, Any]) -> None:
        self.store.put_object(plan, PLAN_ENV, safe_yaml.dump_yaml(dict(env)))

    def set_environments(self, plan: str, environments: list[Any]) -> bool:
        """Make ``environments`` the plan's environment list (what an undo puts back);
        writes a new version only when it differs.  Whether it wrote."""
        env = self.environment(plan)
        if env.get("environments") == environments:
            return False
        env["environments"] = environments
        self.save_environment(plan, env)
        return True

    def environment_versions(self, plan: str) -> list[ObjectVersion]:
        return self.store.list_versions(plan, PLAN_ENV)

    def find_environment_version(self, plan: str, data: bytes, attempts: int = 3) -> str | None:
        """The id of an earlier (not current) stored version of the plan-environment
        whose content is ``data``; None when none is listed (an unversioned
        container, or a listing that lags behind the write ``attempts`` times)."""
        return self.find_version(plan, PLAN_ENV, data, attempts)

    def find_version(self, plan: str, name: str, data: bytes, attempts: int = 3) -> str | None:
        """The id of an earlier (not current) stored version of object ``name`` whose
        content is ``data`` (see :meth:`find_environment_version`)."""
        wanted = digest(data)
        for attempt in range(attempts):
            for version in self.store.list_versions(plan, name)[:4]:
                if version.is_latest or version.size != len(data):
                    continue
                try:
                    held = self.store.get_object(plan, name, version_id=version.version_id)
                except exceptions.ObjectNotFound:
                    continue
                if digest(held) == wanted:
                    return version.version_id
            if attempt + 1 < attempts:
                time.sleep(0.2 * (attempt + 1))
        return None

    def environment_version(self, plan: str, version_id: str) -> bytes:
        try:
            return self.store.get_object(plan, PLAN_ENV, version_id=version_id)
        except exceptions.ObjectNotFound:
            raise exceptions.VersionNotFound(plan, version_id)

    # -- manifest ----------------------------------------------------------

    def manifest(self, plan: str) -> Manifest:
        try:
            return Manifest.from_bytes(self.store.get_object(plan, MANIFEST))
        except exceptions.ObjectNotFound:
            return Manifest()

    def save_manifest(self, plan: str, manifest: Manifest) -> None:
        self.store.put_object(plan, MANIFEST, manifest.to_bytes())

    # -- update journal ----------------------------------------------------

    def journal(self, plan: str) -> Journal | None:
        """The intent of an update that did not finish, if any."""
        try:
            return Journal.from_bytes(self.store.get_object(plan, JOURNAL))
        except exceptions.ObjectNotFound:
            return None

    def save_journal(self, plan: str, journal: Journal) -> None:
        self.store.put_object(plan, JOURNAL, journal.to_bytes())

    def clear_journal(self, plan: str) -> None:
        self.store.delete_object(plan, JOURNAL)

    def unrendered(self, plan: str) -> str | None:
        """The execution id ("" outside a workflow) of the update whose new templates
        are not rendered yet; None when the plan's rendered files are its templates'."""
        try:
            data = self.store.get_object(plan, UNRENDERED)
        except exceptions.ObjectNotFound:
            return None
        try:
            return str(json.loads(data).get("execution") or "")
        except (ValueError, AttributeError):
            return ""  # unreadable: still unrendered, owned by no execution

    def mark_unrendered(self, plan: str, execution: str) -> None:
        self.store.put_object(plan, UNRENDERED, json.dumps({"execution": execution}).encode())

    def clear_unrendered(self, plan: str) -> None:
        self.store.delete_object(plan, UNRENDERED)

    def update_unfinished(self, plan: str) -> bool:
        """Whether an update of the plan has not finished: its journal is there (the
        tree may be part old, part new) or its templates are not rendered yet."""
        return self.journal(plan) is not None or self.unrendered(plan) is not None

    # -- deployment status -------------------------------------------------

    def deployment_status(self, plan: str) -> dict[str, Any] | None:
        container = plan + MESSAGES_SUFFIX
        try:
            data = self.store.get_object(container, DEPLOYMENT_STATUS)
        except (exceptions.ContainerNotFound, exceptions.ObjectNotFound):
            return None
        status = safe_yaml.load_yaml(data, f"{container}/{DEPLOYMENT_STATUS}")
        return status if isinstance(status, dict) else None

    def set_deployment_status(self, plan: str, status: Mapping[str, Any]) -> None:
        """Record the plan's deployment status, its secrets masked: its message and
        failed resources quote Heat, which a template can make quote a password."""
        status = secret_masking.redact(dict(status), self.secrets(plan))[0]
        container = plan + MESSAGES_SUFFIX
        if not self.store.container_exists(container):
            self.store.create_container(container)
        self.store.put_object(container, DEPLOYMENT_STATUS, safe_yaml.dump_yaml(dict(status)))
