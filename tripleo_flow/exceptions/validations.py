"""Errors of TripleO's validations (``validation list/show/run/stop/results``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tripleo_flow.exceptions.kinds import Conflict, NotFound, TripleoFlowError, WorkflowFailed


class ValidationsNotInstalled(NotFound):
    def __init__(self, venv: str) -> None:
        super().__init__(
            f"No validation framework in {venv!r} ([validations] venv): it needs "
            "ansible-playbook and validations-common's share/ansible/validation-playbooks. "
            "Build it with tools/setup-validations.sh, or set [validations] venv "
            "(TRIPLEO_FLOW_VALIDATIONS_VENV) to the virtualenv it made.")
        self.venv = venv


class ValidationNotFound(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(f"No validation {name!r}. List them with: validation list")
        self.name = name


class ValidationResultNotFound(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(f"No validation result {name!r}. List them with: validation results")
        self.name = name


class NoInventory(NotFound):
    def __init__(self, plan: str) -> None:
        super().__init__(
            f"Plan {plan!r} has no deployment with a config-download inventory to validate; "
            "deploy it first, or give an inventory (localhost, or an inventory file).")
        self.plan = plan


class ValidationsNotRunning(Conflict):
    def __init__(self, execution_id: str, status: str) -> None:
        super().__init__(
            f"Execution {execution_id!r} is not running validations now ({status}); "
            "nothing to stop.")
        self.execution_id, self.status = execution_id, status


class ValidationsFailed(WorkflowFailed):
    """Validations failed where they must pass (``deploy --run-validations``)."""

    def __init__(self, failures: Sequence[Mapping[str, Any]]) -> None:
        parts = []
        for failure in failures:
            reasons = "; ".join(f"{r['host']}: {r.get('reason', '')}" if r.get("host")
                                else str(r.get("reason", ""))
                                for r in failure.get("reasons") or [])
            parts.append(f"{failure.get('validation')}: {reasons or failure.get('status')}")
        cause = ("Validations failed: " + " | ".join(parts) + ". Fix what they report, "
                 "or deploy without --run-validations.")
        TripleoFlowError.__init__(self, cause)
        self.workflow, self.task, self.cause, self.reverted = "validations", None, cause, False
        self.failures = list(failures)


__all__ = ["NoInventory", "ValidationNotFound", "ValidationResultNotFound",
           "ValidationsFailed", "ValidationsNotInstalled", "ValidationsNotRunning"]
