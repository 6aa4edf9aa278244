"""Networks actions: list, update and validate a plan's network_data.yaml."""

from __future__ import annotations

from typing import Any

from tripleo_flow.actions.datafiles import DataFileAction
from tripleo_flow.core import roles
from tripleo_flow.flows import names


class _NetworksFile(DataFileAction):
    filename = "network_data.yaml"
    validator = staticmethod(roles.validate_networks)


class ListNetworks(_NetworksFile):
    """List a plan's networks (names, or every attribute with detail)."""

    default_provides = names.NETWORKS_LIST

    def execute(self, plan: str, detail: bool = False) -> list[Any]:
        items = self.read(plan)
        return items if detail else [i.get("name") for i in items]


class UpdateNetworks(_NetworksFile):
    """Replace a plan's networks with a validated list."""

    default_provides = names.NETWORKS_UPDATED

    def execute(self, plan: str, networks: list[dict[str, Any]]) -> dict[str, Any]:
        return self.write(plan, networks)

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back network_data.yaml as it was (or remove it when the plan had none)."""
        self.undo(plan, result)


class ValidateNetworks(_NetworksFile):
    """Check a list of networks without changing anything."""

    default_provides = names.NETWORKS_VALID

    def execute(self, networks: list[dict[str, Any]]) -> bool:
        type(self).validator(networks)
        return True
