"""Minor update (``overcloud update prepare|run|converge``) as python-tripleoclient
runs it: pure rules, no I/O.

- prepare: the plan's stack updated with THT's ``environments/lifecycle/update-prepare.yaml``
  placed before the operator's environments (tripleoclient prepends it to the ``-e``
  files; the deploy parameters ``DeployIdentifier``/``StackAction: UPDATE`` are those of
  any deploy), then config-download written; no playbook runs.
- run: config-download's ``update_steps_playbook.yaml`` (or the playbooks named) with a
  required ``--limit``; refused while no update is prepared.
- converge: the prepare environment taken out again (and THT's
  ``update-converge.yaml`` put in its place where the templates have one: THT 18.0.0
  has none), the stack updated, config-download written and the deploy steps run.

The plan remembers a prepared update by holding the prepare environment in its
``environments`` list, so ``run`` can refuse without one and a later deploy stays what
the prepare made until ``converge``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.core import userenvs

#: The environment tripleoclient adds for ``update prepare`` (noop pre/post config tasks).
PREPARE_ENVIRONMENT = "environments/lifecycle/update-prepare.yaml"
#: The one it adds for ``update converge``, where the templates still have it.
CONVERGE_ENVIRONMENT = "environments/lifecycle/update-converge.yaml"
LIFECYCLE = (PREPARE_ENVIRONMENT, CONVERGE_ENVIRONMENT)
#: What ``update run`` runs without ``--playbook`` (or with ``--playbook all``).
DEFAULT_PLAYBOOKS = ("update_steps_playbook.yaml",)
#: A playbook named by ``--playbook``: a file of the config-download project's top.
_PLAYBOOK = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.ya?ml$")
STAGES = ("prepare", "converge")


def _path(entry: Any) -> str | None:
    return entry.get("path") if isinstance(entry, dict) else None


def is_prepared(entries: Sequence[Any]) -> bool:
    """Whether a plan's ``environments`` list holds the update prepare environment."""
    return any(_path(e) == PREPARE_ENVIRONMENT for e in entries)


def with_stage(entries: Sequence[Any], stage: str, plan_files: Iterable[str]) -> list[Any]:
    """``entries`` with the lifecycle environment of ``stage`` as the last of the plan's
    own environments (before the operator's, as tripleoclient prepends it to the
    ``-e`` files) and the other stage's taken out.  For ``converge``, without
    ``update-converge.yaml`` in ``plan_files`` the prepare environment is only taken out.

    :raises InvalidInput: ``stage`` is neither prepare nor converge, or it is prepare
        and the templates lack update-prepare.yaml.
    """
    if stage not in STAGES:
        raise exceptions.InvalidInput(
            f"Unknown update stage {stage!r}: give one of {', '.join(STAGES)}.")
    files = set(plan_files)
    wanted: str | None = PREPARE_ENVIRONMENT if stage == "prepare" else CONVERGE_ENVIRONMENT
    if wanted not in files:
        if stage == "prepare":
            raise exceptions.InvalidInput(
                f"Expected environment file {PREPARE_ENVIRONMENT} is not in the plan's "
                "templates: a minor update needs tripleo-heat-templates that have it; "
                "nothing was changed.")
        wanted = None
    kept = [e for e in entries if _path(e) not in LIFECYCLE]
    own = [e for e in kept if not userenvs.is_user_environment(_path(e) or "")]
    users = [e for e in kept if userenvs.is_user_environment(_path(e) or "")]
    return own + ([{"path": wanted}] if wanted else []) + users


def parse_limit(limit: Any) -> str:
    """tripleoclient's ``--limit`` as ansible-playbook gets it: the hosts or groups
    split at commas, spaces or colons, joined with colons.

    :raises InvalidInput: no limit (``update run`` requires one, as tripleoclient).
    """
    if limit is not None and not isinstance(limit, str):
        raise exceptions.InvalidInput("limit must be a string of host or group names.")
    parts = [p.strip() for p in re.split(r"[, :]", limit or "") if p.strip()]
    if not parts:
        raise exceptions.InvalidInput(
            "update run needs --limit: the nodes or roles to update (for example "
            "--limit Controller, then --limit Compute), as tripleoclient requires it.")
    return ":".join(parts)


def playbooks(requested: Any) -> list[str]:
    """The playbooks ``update run`` runs, in order: the default update steps without
    ``requested`` (or with ``['all']``), else the names given (plain file names of
    the config-download project).

    :raises InvalidInput: a name that is not a playbook file name.
    """
    if requested is None or requested == [] or requested == ["all"]:
        return list(DEFAULT_PLAYBOOKS)
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


__all__ = ["CONVERGE_ENVIRONMENT", "DEFAULT_PLAYBOOKS", "PREPARE_ENVIRONMENT", "STAGES",
           "is_prepared", "parse_limit", "playbooks", "with_stage"]
