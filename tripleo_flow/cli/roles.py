"""``tripleo-flow roles ...`` commands."""

from __future__ import annotations

from typing import Any

from tripleo_flow.cli.datafiles import ListPlanFile, SetPlanFile


class ListRoles(ListPlanFile):
    """List a plan's roles from roles_data.yaml, with each one's effective count."""

    columns = ("name", "count", "primary", "services")

    def fetch(self, plan: str) -> list[Any]:
        counts = self.client.roles.counts(plan)
        return [{**item, "count": counts.get(item.get("name"), 0)}
                for item in self.client.roles.list(plan, detail=True)]

    def row(self, item: dict[str, Any]) -> tuple[Any, ...]:
        return (item.get("name"), item["count"],
                "primary" in (item.get("tags") or []), len(item.get("ServicesDefault") or []))


class SetRoles(SetPlanFile):
    """Replace a plan's roles with those in a YAML file, then render the templates again."""

    noun = "roles"

    def store(self, plan: str, items: list[Any]) -> list[str]:
        return self.client.roles.set(plan, items)
