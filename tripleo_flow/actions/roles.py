"""Roles actions: list, update and validate a plan's roles_data.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Rerun
from tripleo_flow.actions.datafiles import DataFileAction, ListDataFile, UpdateDataFile
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import roles
from tripleo_flow.plans.plan import PlanRepository


class _RolesFile(DataFileAction):
    filename = "roles_data.yaml"
    validator = staticmethod(roles.validate_roles)

    def validate(self, items: list[dict[str, Any]]) -> None:
        roles.validate_roles(items, max_count=self.context.limit("nodes_max"))


class ListRoles(_RolesFile, ListDataFile):
    """List a plan's roles (names, or every attribute with detail)."""



class RoleCounts(_RolesFile):
    """Each role's effective server count: its ``<Role>Count`` as the stack would get it
    (the role's CountDefault, then the plan's environments in order, then the plan's
    own parameter values; the last one wins)."""

    rerun = Rerun.READS

    def execute(self, plan: str) -> dict[str, int]:
        repo = PlanRepository(self.context.store)
        counts = {r.get("name"): r.get("CountDefault", 0) for r in self.read(plan)}
        env = repo.environment(plan)
        sources: list[Mapping[str, Any]] = []
        for entry in env.get("environments") or []:
            path = entry.get("path") if isinstance(entry, Mapping) else None
            if path is None:
                sources.append(entry if isinstance(entry, Mapping) else {})
                continue
            try:
                data = repo.store.get_object(plan, path)
            except exceptions.ObjectNotFound:
                continue
            loaded = safe_yaml.load_yaml(data, path,
                                       max_nodes=self.context.limit("yaml_max_nodes"),
                                       max_depth=self.context.limit("yaml_max_depth"))
            sources.append(loaded if isinstance(loaded, Mapping) else {})
        sources.append(env)
        for source in sources:
            for key in ("parameters", "parameter_defaults"):
                values = source.get(key)
                if not isinstance(values, Mapping):
                    continue
                for role in counts:
                    value = values.get(f"{role}Count")
                    if isinstance(value, int) and not isinstance(value, bool):
                        counts[role] = value
        return {str(k): int(v) for k, v in counts.items()}


class UpdateRoles(_RolesFile, UpdateDataFile):
    """Replace a plan's roles with a validated list."""


    def execute(self, plan: str, roles: list[dict[str, Any]]) -> dict[str, Any]:
        return self.write(plan, roles)


class ValidateRoles(_RolesFile):
    """Check a list of roles without changing anything."""

    rerun = Rerun.READS

    def execute(self, roles: list[dict[str, Any]]) -> bool:
        return self.check(roles)
