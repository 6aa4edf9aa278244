"""Networks actions: list, update and validate a plan's network_data.yaml."""

from __future__ import annotations

from typing import Any

from tripleo_flow.actions.base import Rerun
from tripleo_flow.actions.datafiles import DataFileAction, ListDataFile, UpdateDataFile
from tripleo_flow.core.plan import roles


class _NetworksFile(DataFileAction):
    filename = "network_data.yaml"
    validator = staticmethod(roles.validate_networks)


class ListNetworks(_NetworksFile, ListDataFile):
    """List a plan's networks (names, or every attribute with detail)."""



class UpdateNetworks(_NetworksFile, UpdateDataFile):
    """Replace a plan's networks with a validated list."""


    def execute(self, plan: str, networks: list[dict[str, Any]]) -> dict[str, Any]:
        return self.write(plan, networks)


class ValidateNetworks(_NetworksFile):
    """Check a list of networks without changing anything."""

    rerun = Rerun.READS

    def execute(self, networks: list[dict[str, Any]]) -> bool:
        return self.check(networks)
