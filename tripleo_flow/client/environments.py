"""User environments of the Python API: list, add and remove a plan's own
environment files (``-e FILE``), and read local files for plan create/update/deploy.

Local paths are read here, into :class:`~tripleo_flow.core.plan.userenvs.EnvironmentFile`
values (as JSON); the HTTP API builds the same values from a request body, so every
interface stores and deploys the same thing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client import workbooks
from tripleo_flow.client.base import Manager
from tripleo_flow.core.plan import roles
from tripleo_flow.plans import sources

if TYPE_CHECKING:
    import builtins

    pass

#: What may be given for an environment: a local path, or an environment as JSON
#: (``{"name", "files": {path: text}}``, :class:`~tripleo_flow.core.plan.userenvs.EnvironmentFile`).
EnvironmentSource = str | os.PathLike[str] | Mapping[str, Any]


class EnvironmentManager(Manager):
    """A plan's own environment files (``client.environments``)."""

    def read(self, environments: Iterable[EnvironmentSource]) -> list[dict[str, Any]]:
        """Local environment files (with the files they reference) as JSON values;
        JSON values are passed through (they are checked when stored)."""
        conf = self._session.context.conf
        limits = {"max_nodes": conf.limits.yaml_max_nodes,
                  "max_depth": conf.limits.yaml_max_depth,
                  "max_items": conf.limits.input_max_items}
        result = []
        for env in environments:
            if isinstance(env, Mapping):
                result.append(dict(env))
            else:
                result.append(sources.read_environment_file(env, **limits).to_json())
        return result

    def list(self, name: str) -> list[dict[str, Any]]:
        """The plan's environments in the order they apply: ``order``, ``path`` and
        ``user`` (true for the user's own, added with ``-e`` or :meth:`add`)."""
        from tripleo_flow.actions import userenvs

        return userenvs.ListEnvironments(self._session.context).execute(plan=name)

    def add(self, name: str, environments: Sequence[EnvironmentSource],
            position: int | None = None) -> builtins.list[str]:
        """Store environment files (and the local files they reference) in the plan as
        user environments, at ``position`` among them (1-based; default last).

        :returns: the plan paths of the added environments.
        """
        return self._environments_changed("add_environments", {
            "plan": name, "user_environments": self.read(environments),
            "position": position, "replace": False})

    def set(self, name: str, environments: Sequence[EnvironmentSource]) -> builtins.list[str]:
        """Make ``environments`` the plan's only user environments, in this order (as
        ``deploy -e``); nothing changes when they are the ones already stored."""
        return self._environments_changed("add_environments", {
            "plan": name, "user_environments": self.read(environments),
            "position": None, "replace": True})

    def remove(self, name: str, paths: Sequence[str]) -> builtins.list[str]:
        """Remove user environments (by plan path, as listed) and their files."""
        return self._environments_changed("remove_environments",
                                          {"plan": name, "paths": list(paths)})

    def _environments_changed(self, workflow: str, inputs: dict[str, Any]) -> builtins.list[str]:
        """Run ``workflow`` (``tripleo.plan.*``, one action as an execution); the plan
        paths it changed."""
        execution = self._session.run_operation(workbooks.plan_workflow(workflow), inputs)
        return list((execution.output or {})["result"]["paths"])


def read_data_files(roles_file: str | os.PathLike[str] | None = None,
                    networks_file: str | os.PathLike[str] | None = None,
                    vip_file: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The text of the local roles, networks and VIP data files given, by plan name."""
    given = {roles.ROLES_DATA: roles_file, roles.NETWORK_DATA: networks_file,
             roles.VIP_DATA: vip_file}
    texts = {}
    for target, path in given.items():
        if path is None:
            continue
        try:
            texts[target] = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
            raise exceptions.InvalidInput(
                f"Cannot read {os.fspath(path)!r}, given for the plan's {target}: {why}. "
                "Give a readable YAML file.") from exc
    return texts
