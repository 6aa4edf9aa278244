"""Minor update (``overcloud update prepare|run|converge``, ``external-update run``) and
major upgrade (``overcloud upgrade prepare|run|converge``, ``external-upgrade run``) as
python-tripleoclient runs them: pure rules, no I/O.

Both are one lifecycle (:class:`Lifecycle`, one value per kind, :data:`KINDS`):

- prepare: the plan's stack updated with THT's ``environments/lifecycle/<kind>-prepare.yaml``
  placed before the operator's environments (tripleoclient's ``prepend_environment``
  puts it first of the ``-e`` files; the deploy parameters ``DeployIdentifier``/
  ``StackAction: UPDATE`` are those of any deploy), then config-download written; no
  playbook runs.
- run: config-download's playbooks of the kind (the update steps; for an upgrade the
  upgrade steps, the deploy steps and the post upgrade steps, tripleoclient's
  ``MAJOR_UPGRADE_PLAYBOOKS``), or those named, with a required ``--limit``; refused
  while no prepare of that kind is in place.
- external run: the kind's external steps playbook (``external_update_steps_playbook.yaml``,
  ``external_upgrade_steps_playbook.yaml``), run from the undercloud; ``--limit`` optional.
- converge: the prepare environment taken out again (and THT's ``<kind>-converge.yaml``
  put in its place where the templates have one: THT 18.0.0 has neither), the stack
  updated, config-download written and the deploy steps run.

The plan remembers a prepared update or upgrade by holding its prepare environment in
its ``environments`` list, so ``run`` can refuse without one; a prepare of one kind takes
the other kind's lifecycle environment out (one lifecycle at a time).  Only the prepare
and converge deploys of that kind send it to Heat (:func:`sent_environments`): any other
deploy of the plan meanwhile sends none, as tripleoclient's ``overcloud deploy`` sends
only the ``-e`` files it is given.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.core.plan import userenvs

_LIFECYCLE_DIR = "environments/lifecycle/"


@dataclasses.dataclass(frozen=True)
class Lifecycle:
    """What tripleoclient's commands of one kind (update or upgrade) add and run."""

    kind: str                    #: "update" or "upgrade"
    title: str                   #: how a message names it ("minor update" ...)
    playbooks: tuple[str, ...]   #: what ``run`` runs without ``--playbook``
    external: tuple[str, ...]    #: what ``external-<kind> run`` runs

    @property
    def prepare_environment(self) -> str:
        return f"{_LIFECYCLE_DIR}{self.kind}-prepare.yaml"

    @property
    def converge_environment(self) -> str:
        return f"{_LIFECYCLE_DIR}{self.kind}-converge.yaml"


#: tripleoclient's constants: MINOR_UPDATE_PLAYBOOKS, EXTERNAL_UPDATE_PLAYBOOKS.
UPDATE = Lifecycle("update", "minor update", ("update_steps_playbook.yaml",),
                   ("external_update_steps_playbook.yaml",))
#: MAJOR_UPGRADE_PLAYBOOKS (in this order), EXTERNAL_UPGRADE_PLAYBOOKS.
UPGRADE = Lifecycle("upgrade", "major upgrade",
                    ("upgrade_steps_playbook.yaml", "deploy_steps_playbook.yaml",
                     "post_upgrade_steps_playbook.yaml"),
                    ("external_upgrade_steps_playbook.yaml",))
KINDS = {k.kind: k for k in (UPDATE, UPGRADE)}

#: The environment tripleoclient adds for ``update prepare`` (noop pre/post config tasks).
PREPARE_ENVIRONMENT = UPDATE.prepare_environment
#: The one it adds for ``update converge``, where the templates still have it.
CONVERGE_ENVIRONMENT = UPDATE.converge_environment
LIFECYCLE = tuple(path for k in KINDS.values()
                  for path in (k.prepare_environment, k.converge_environment))
#: What ``update run`` runs without ``--playbook`` (or with ``--playbook all``).
DEFAULT_PLAYBOOKS = UPDATE.playbooks
#: A playbook named by ``--playbook``: a file of the config-download project's top.
_PLAYBOOK = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.ya?ml$")
STAGES = ("prepare", "converge")


def lifecycle(kind: Any) -> Lifecycle:
    """The :class:`Lifecycle` of ``kind``.

    :raises InvalidInput: neither update nor upgrade.
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise exceptions.InvalidInput(
            f"Unknown lifecycle kind {kind!r}: give one of {', '.join(KINDS)}.")
    return KINDS[kind]


def _path(entry: Any) -> str | None:
    return entry.get("path") if isinstance(entry, dict) else None


def is_prepared(entries: Sequence[Any], kind: str = "update") -> bool:
    """Whether a plan's ``environments`` list holds the prepare environment of ``kind``."""
    wanted = lifecycle(kind).prepare_environment
    return any(_path(e) == wanted for e in entries)


def with_stage(entries: Sequence[Any], stage: str, plan_files: Iterable[str],
               kind: str = "update") -> list[Any]:
    """``entries`` with the lifecycle environment of ``stage`` as the last of the plan's
    own environments (before the operator's, as tripleoclient prepends it to the
    ``-e`` files) and every other lifecycle environment taken out.  For ``converge``,
    without ``<kind>-converge.yaml`` in ``plan_files`` the prepare environment is only
    taken out.

    :raises InvalidInput: ``stage`` is neither prepare nor converge, ``kind`` neither
        update nor upgrade, or it is a prepare and the templates lack its environment.
    """
    if stage not in STAGES:
        raise exceptions.InvalidInput(
            f"Unknown update stage {stage!r}: give one of {', '.join(STAGES)}.")
    of = lifecycle(kind)
    files = set(plan_files)
    wanted: str | None = (of.prepare_environment if stage == "prepare"
                          else of.converge_environment)
    if wanted not in files:
        if stage == "prepare":
            raise exceptions.InvalidInput(
                f"Expected environment file {wanted} is not in the plan's templates: a "
                f"{of.title} needs tripleo-heat-templates that have it; nothing was "
                "changed.")
        wanted = None
    kept = [e for e in entries if _path(e) not in LIFECYCLE]
    own = [e for e in kept if not userenvs.is_user_environment(_path(e) or "")]
    users = [e for e in kept if userenvs.is_user_environment(_path(e) or "")]
    return own + ([{"path": wanted}] if wanted else []) + users


def sent_environments(entries: Sequence[Any], kind: str | None) -> list[Any]:
    """The entries of a plan's ``environments`` list a deploy sends to Heat: every one
    but the lifecycle environments of another kind than ``kind`` (the prepare or
    converge deploy of that kind); with ``kind`` None (a plain deploy) none of them.

    :raises InvalidInput: ``kind`` is neither None, update nor upgrade.
    """
    keep: tuple[str, ...] = ()
    if kind is not None:
        of = lifecycle(kind)
        keep = (of.prepare_environment, of.converge_environment)
    return [e for e in entries if _path(e) not in LIFECYCLE or _path(e) in keep]


#: What tripleoclient's ``upgrade converge`` refuses in the environments' parameter_defaults
#: (``UPGRADE_CONVERGE_FORBIDDEN_PARAMS``: the previous release's image settings).
CONVERGE_FORBIDDEN = ("ceph3_namespace", "ceph3_tag", "ceph3_image", "name_prefix_stein",
                      "name_suffix_stein", "namespace_stein", "tag_stein")


def _keys(value: Any) -> Iterable[str]:
    """Every mapping key under ``value``, at any depth (lists walked too)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner)


def forbidden_parameters(documents: Iterable[tuple[str, Any]],
                         forbidden: Sequence[str] = CONVERGE_FORBIDDEN) -> list[str]:
    """Where ``forbidden`` names appear as keys under the ``parameter_defaults`` of the
    ``(name, loaded environment)`` ``documents``, as tripleoclient's
    ``check_forbidden_params`` looks (any depth): ``"name: key"`` lines, sorted."""
    found: set[str] = set()
    for name, document in documents:
        defaults = document.get("parameter_defaults") if isinstance(document, dict) else None
        found.update(f"{name}: {key}" for key in _keys(defaults) if key in forbidden)
    return sorted(found)


def check_converge(documents: Iterable[tuple[str, Any]], kind: str) -> None:
    """Refuse the converge of ``kind`` as tripleoclient does: an upgrade's while an
    environment still sets a :data:`CONVERGE_FORBIDDEN` parameter (an update's converge
    has no such check).

    :raises InvalidInput: naming each file and parameter.
    """
    if lifecycle(kind).kind != "upgrade":
        return
    found = forbidden_parameters(documents)
    if found:
        raise exceptions.InvalidInput(
            "Upgrade converge refused: these parameters of the previous release are "
            f"still set ({'; '.join(found)}); remove them from those environments (or "
            "parameters) and converge again. Nothing was changed.")


def parse_limit(limit: Any, required: bool = True) -> str | None:
    """tripleoclient's ``--limit`` as ansible-playbook gets it (``playbook_limit_parse``):
    the hosts or groups split at commas, spaces or colons, joined with colons.  Without
    one, None where it is not ``required`` (``external-<kind> run``).

    :raises InvalidInput: no limit where one is required (``update run``, ``upgrade
        run``, as tripleoclient), or one that is not a string.
    """
    if limit is not None and not isinstance(limit, str):
        raise exceptions.InvalidInput("limit must be a string of host or group names.")
    parts = [p.strip() for p in re.split(r"[, :]", limit or "") if p.strip()]
    if not parts:
        if not required:
            return None
        raise exceptions.InvalidInput(
            "update or upgrade run needs --limit: the nodes or roles to update (for "
            "example --limit Controller, then --limit Compute), as tripleoclient "
            "requires it.")
    return ":".join(parts)


def playbooks(requested: Any, kind: str = "update") -> list[str]:
    """The playbooks ``<kind> run`` runs, in order: the kind's default ones without
    ``requested`` (or with ``['all']``), else the names given (plain file names of
    the config-download project).

    :raises InvalidInput: a name that is not a playbook file name.
    """
    if requested is None or requested == [] or requested == ["all"]:
        return list(lifecycle(kind).playbooks)
    if isinstance(requested, str):
        requested = [requested]
    if not isinstance(requested, list):
        raise exceptions.InvalidInput("playbooks must be a list of playbook file names.")
    for name in requested:
        if not isinstance(name, str) or not _PLAYBOOK.match(name):
            raise exceptions.InvalidInput(
                f"{name!r} is not a playbook of the config-download project: give a file "
                "name such as update_steps_playbook.yaml.")
    return list(requested)


__all__ = ["CONVERGE_ENVIRONMENT", "CONVERGE_FORBIDDEN", "check_converge",
           "forbidden_parameters", "DEFAULT_PLAYBOOKS", "KINDS", "PREPARE_ENVIRONMENT",
           "STAGES", "UPDATE", "UPGRADE", "Lifecycle", "is_prepared", "lifecycle",
           "parse_limit", "playbooks", "sent_environments", "with_stage"]
