"""Shared behaviour of the actions on a plan's data files (roles, networks).

A kind of file declares a :class:`DataFileAction` subclass with its
``filename`` and ``validator``; its list, update and validate actions then add
:class:`ListDataFile`, :class:`UpdateDataFile` or :meth:`DataFileAction.check`.
Update and validate actions keep their own ``execute``: its parameters are the
action's inputs (``roles``, ``networks``), which the workbook validator and
``action show`` read from the signature.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun, encode_blobs
from tripleo_flow.actions.undo import restore_objects
from tripleo_flow.common import safe_yaml
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
        items = safe_yaml.load_yaml(data, self.filename)
        if not isinstance(items, list):
            raise exceptions.InvalidTemplate(self.filename, "must be a list")
        return items

    def validate(self, items: list[dict[str, Any]]) -> None:
        """Run the kind's validator on ``items``."""
        type(self).validator(items)

    def check(self, items: list[dict[str, Any]]) -> bool:
        """Validate ``items`` (raising the kind's Invalid* error); True when they are fine."""
        self.validate(items)
        return True

    def write(self, plan: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        self.validate(items)
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.hold_plan(plan):
            record = self.context.undo_record(lambda: self._backup(plan))
            self.context.store.put_object(plan, self.filename, safe_yaml.dump_yaml(items))
        return {"names": [i.get("name") for i in items], **record}

    def _backup(self, plan: str) -> dict[str, Any]:
        """The undo record of a write: the file's content, or that the plan had none."""
        try:
            old = {self.filename: self.context.store.get_object(plan, self.filename)}
        except exceptions.ObjectNotFound:
            old = {}
        return {"backup": encode_blobs(old), "created": [] if old else [self.filename]}

    def undo(self, plan: str, result: Any) -> None:
        restore_objects(self.context, plan, result)


class ListDataFile(DataFileAction):
    """Base of the list actions: the items' names, or every attribute with detail."""

    rerun = Rerun.READS

    def execute(self, plan: str, detail: bool = False) -> list[Any]:
        items = self.read(plan)
        return items if detail else [i.get("name") for i in items]


class UpdateDataFile(DataFileAction):
    """Base of the update actions (their ``execute`` calls :meth:`write`)."""

    rerun = Rerun.CONVERGES

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back the file as it was (or remove it when the plan had none)."""
        self.undo(plan, result)
