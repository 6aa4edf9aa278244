"""``tripleo-flow networks ...`` commands."""

from __future__ import annotations

from typing import Any

from tripleo_flow.cli.datafiles import ListPlanFile, SetPlanFile


class ListNetworks(ListPlanFile):
    """List a plan's networks from network_data.yaml."""

    columns = ("name", "name_lower", "enabled", "ip_subnet", "vip")

    def fetch(self, plan: str) -> list[Any]:
        return self.client.networks.list(plan, detail=True)

    def row(self, item: dict[str, Any]) -> tuple[Any, ...]:
        return (item.get("name"), item.get("name_lower", str(item.get("name", "")).lower()),
                item.get("enabled", True), item.get("ip_subnet", ""), item.get("vip", False))


class SetNetworks(SetPlanFile):
    """Replace a plan's networks with those in a YAML file, then render the templates again."""

    noun = "networks"

    def store(self, plan: str, items: list[Any]) -> list[str]:
        return self.client.networks.set(plan, items)
