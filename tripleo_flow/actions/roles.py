"""Roles actions: list, update and validate a plan's roles_data.yaml."""

from __future__ import annotations

from typing import Any

from tripleo_flow.actions.datafiles import DataFileAction, ListDataFile, UpdateDataFile
from tripleo_flow.core import roles
from tripleo_flow.flows import names


class _RolesFile(DataFileAction):
    filename = "roles_data.yaml"
    validator = staticmethod(roles.validate_roles)


class ListRoles(_RolesFile, ListDataFile):
    """List a plan's roles (names, or every attribute with detail)."""

    default_provides = names.ROLES_LIST


class UpdateRoles(_RolesFile, UpdateDataFile):
    """Replace a plan's roles with a validated list."""

    default_provides = names.ROLES_UPDATED

    def execute(self, plan: str, roles: list[dict[str, Any]]) -> dict[str, Any]:
        return self.write(plan, roles)


class ValidateRoles(_RolesFile):
    """Check a list of roles without changing anything."""

    default_provides = names.ROLES_VALID

    def execute(self, roles: list[dict[str, Any]]) -> bool:
        return self.check(roles)
