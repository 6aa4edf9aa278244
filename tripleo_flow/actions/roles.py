"""Roles actions: list, update and validate a plan's roles_data.yaml."""

from __future__ import annotations

from typing import Any

from tripleo_flow.actions.datafiles import DataFileAction
from tripleo_flow.core import roles
from tripleo_flow.flows import names


class _RolesFile(DataFileAction):
    filename = "roles_data.yaml"
    validator = staticmethod(roles.validate_roles)


class ListRoles(_RolesFile):
    """List a plan's roles (names, or every attribute with detail)."""

    default_provides = names.ROLES_LIST

    def execute(self, plan: str, detail: bool = False) -> list[Any]:
        items = self.read(plan)
        return items if detail else [i.get("name") for i in items]


class UpdateRoles(_RolesFile):
    """Replace a plan's roles with a validated list."""

    default_provides = names.ROLES_UPDATED

    def execute(self, plan: str, roles: list[dict[str, Any]]) -> dict[str, Any]:
        return self.write(plan, roles)

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back roles_data.yaml as it was (or remove it when the plan had none)."""
        self.undo(plan, result)


class ValidateRoles(_RolesFile):
    """Check a list of roles without changing anything."""

    default_provides = names.ROLES_VALID

    def execute(self, roles: list[dict[str, Any]]) -> bool:
        type(self).validator(roles)
        return True
