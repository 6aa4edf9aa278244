"""Shared behaviour of the actions on a plan's data files (roles, networks)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, encode_blobs
from tripleo_flow.actions.undo import restore_objects
from tripleo_flow.core import planenv
from tripleo_flow.plans.plan import PlanRepository


class DataFileAction(Action):
    """Base of actions reading or writing one YAML list file of a plan."""

    filename: ClassVar[str]
    #: Raises the kind's Invalid* error for a bad list.
    validator: ClassVar[Callable[..., None]]

    def read(self, plan: str) -> list[dict[str, Any]]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        try:
            data = self.context.store.get_object(plan, self.filename)
        except exceptions.ObjectNotFound:
            return []
        items = planenv.load_yaml(data, self.filename)
        if not isinstance(items, list):
            raise exceptions.InvalidTemplate(self.filename, "must be a list")
        return items

    def write(self, plan: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        type(self).validator(items)
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.locks.hold(plan):
            try:
                old = {self.filename: self.context.store.get_object(plan, self.filename)}
            except exceptions.ObjectNotFound:
                old = {}
            self.context.store.put_object(plan, self.filename, planenv.dump_yaml(items))
        return {"names": [i.get("name") for i in items], "backup": encode_blobs(old),
                "created": [] if old else [self.filename]}

    def undo(self, plan: str, result: Any) -> None:
        restore_objects(self.context, plan, result)
