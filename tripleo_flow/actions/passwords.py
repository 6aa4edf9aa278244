"""Password actions on a plan's ``passwords`` section."""

from __future__ import annotations

from typing import Any

from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.actions.envedit import edit_section, undo_section
from tripleo_flow.core.plan import passwords
from tripleo_flow.plans.plan import PlanRepository


class GeneratePasswords(Action):
    """Generate every missing password of a plan, keeping existing values."""

    rerun = Rerun.CONVERGES

    def execute(self, plan: str) -> dict[str, Any]:
        undo = edit_section(self.context, plan, "passwords", passwords.generate_passwords)
        # Only names are kept in the result: generated secrets never reach the execution log.
        return undo

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Remove the passwords this action added."""
        if isinstance(result, dict) and "section" in result:
            undo_section(self.context, plan, result)


class RotatePasswords(Action):
    """Regenerate a plan's passwords (all rotatable ones, or the named ones).

    Run again, it would rotate again: its workflow task is ``safe-rerun: false``.
    """

    rerun = Rerun.ONCE

    def execute(self, plan: str, rotate: list[str] | None = None,
                do_not_rotate: list[str] | None = None) -> dict[str, Any]:
        def change(current: dict[str, Any]) -> dict[str, Any]:
            return passwords.rotate_passwords(current, rotate=rotate, do_not_rotate=do_not_rotate)

        return edit_section(self.context, plan, "passwords", change)

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back the passwords as they were before the rotation (read from the
        plan-environment version before it: the result holds no secret)."""
        if isinstance(result, dict) and "section" in result:
            undo_section(self.context, plan, result)


class GetPasswords(Action):
    """Return a plan's passwords."""

    rerun = Rerun.READS
    secret_result = True  # persisted masked; the running workflow sees the values

    def execute(self, plan: str) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        return dict(repo.environment(plan).get("passwords") or {})
