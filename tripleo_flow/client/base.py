"""What every manager of the :class:`~tripleo_flow.client.Client` has: the client's
:class:`~tripleo_flow.client.session.Session`, and the two ways an operation runs
(an action that reads, a workflow of a shipped workbook that changes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from tripleo_flow.plans.plan import PlanRepository

if TYPE_CHECKING:
    from tripleo_flow.actions.base import Action
    from tripleo_flow.client.session import Session

A = TypeVar("A", bound="Action")


class Manager:
    """One area of the Python API (``client.plans``, ``client.executions`` ...)."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def _action(self, cls: type[A]) -> A:
        return cls(self._session.context)

    @property
    def _repo(self) -> PlanRepository:
        return PlanRepository(self._session.store)

    def _operation(self, workbook: str, workflow: str,
                   inputs: dict[str, Any]) -> dict[str, Any]:
        """Run ``workflow`` of ``workbook`` (a plan change); its ``result`` output."""
        execution = self._session.run_operation(f"{workbook}.{workflow}", inputs)
        return dict((execution.output or {})["result"])
