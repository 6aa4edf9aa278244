"""Actions of the ``tripleo.validations`` workbook: select, run one, check the results.

The validation playbooks come from the validations virtualenv (never from a plan),
so no action here runs plan code; the plan only gives the inventory (its last
deployment's config-download inventory).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.core.deploy import config_download as layout
from tripleo_flow.core.deploy import validations as core
from tripleo_flow.core.deploy.progress import ValidationProgress
from tripleo_flow.engine.lang.action import InputPath
from tripleo_flow.plans.plan import PlanRepository, check_plan_name
from tripleo_flow.validations import results_dir, runner, runs_dir, venv_path
from tripleo_flow.validations.catalog import Catalog
from tripleo_flow.validations.results import ResultStore


def catalog_of(context: Any) -> Catalog:
    conf = context.conf
    return Catalog(venv_path(conf), conf.validations.validations_dirs)


def result_store(context: Any) -> ResultStore:
    return ResultStore(context.store, results_dir(context.conf))


def plan_inventory(store: Any, plan: str) -> Path:
    """The config-download inventory of ``plan``'s last deployment.

    :raises NoInventory: the plan was never deployed, or its inventory is gone.
    """
    repo = PlanRepository(store)
    repo.require(plan)
    status = repo.deployment_status(plan) or {}
    location = status.get("config_download")
    path = Path(str(location)) / layout.INVENTORY if location else None
    if path is None or not path.is_file():
        raise exceptions.NoInventory(plan)
    return path


class SelectValidations(Action):
    """Choose the validations to run (by name, else group/category) and their inventory.

    No revert: it only writes the localhost inventory of the run directory.
    """

    rerun = Rerun.CONVERGES

    def execute(self, validations: list[str] | None = None, group: str | None = None,
                category: str | None = None, plan: str | None = None,
                inventory: InputPath | None = None, localhost: bool = False,
                run_id: str | None = None) -> dict[str, Any]:
        if isinstance(validations, str):
            validations = [v for v in validations.split(",") if v]
        if not (validations or group or category):
            raise exceptions.InvalidInput(
                "Name the validations to run (--validation A,B) or a group (--group G).")
        if plan:
            check_plan_name(plan)
        try:
            run_id = runner.check_run_id(run_id) if run_id else runner.new_run_id()
        except ValueError as exc:
            raise exceptions.InvalidInput(str(exc)) from exc
        catalog = catalog_of(self.context)
        chosen = catalog.select(validations, group, category)
        if not chosen:
            raise exceptions.InvalidInput(
                f"No validation in group {group!r} / category {category!r}; see: "
                "validation list")
        run_dir = runs_dir(self.context.conf) / run_id
        if localhost or (not inventory and not plan):
            path, label = runner.localhost_inventory(catalog.venv, run_dir), core.LOCALHOST
        elif inventory:
            path = Path(inventory).expanduser().absolute()
            if not path.is_file():
                raise exceptions.InvalidInput(
                    f"The inventory {str(path)!r} is not a file: give an Ansible inventory "
                    "file, or localhost.")
            label = f"file {path.name}"  # the record is shown over HTTP: no server path
        else:
            path = plan_inventory(self.context.store, str(plan))
            label = f"plan {plan}"
        return {"run_id": run_id, "plan": plan, "inventory": str(path),
                "inventory_label": label, "validations": [f.validation.id for f in chosen]}


class RunValidation(Action):
    """Run one validation with ansible-playbook and store its result record.

    A failed validation is a result (status FAILED with its reasons), not an action
    failure; ``validations.check`` decides what the workflow makes of it.  No revert:
    a validation only inspects its hosts, and its stored record reports what it found
    (kept, so a stopped or failed run still shows it).
    """

    rerun = Rerun.CALLER

    def execute(self, validation: str, selection: dict[str, Any],
                extra_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        catalog = catalog_of(self.context)
        found = catalog.get(validation)
        run_id = runner.check_run_id(str(selection.get("run_id")))
        inventory = Path(str(selection["inventory"]))
        run_dir = runs_dir(self.context.conf) / run_id
        self.context.report(ValidationProgress(validation, "running"))
        try:
            record = runner.run(catalog.venv, found, inventory,
                                str(selection.get("inventory_label") or inventory),
                                extra_vars or {}, run_dir, run_id)
        except ValueError as exc:
            raise exceptions.InvalidInput(f"Bad extra vars: {exc}.") from exc
        record["plan"] = selection.get("plan")
        result_store(self.context).save(record)
        hosts = ", ".join(f"{h} {s}" for h, s in sorted(record["hosts"].items()))
        self.context.report(ValidationProgress(
            validation, record["status"] + (f" ({hosts})" if hosts else "")))
        return core.summary(record)


class CheckValidations(Action):
    """Sum the results up; fail on a stop, and on a failure when they must pass."""

    rerun = Rerun.READS

    def execute(self, results: list[dict[str, Any]],
                require_passed: bool = False) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for record in results:
            counts[record["status"]] = counts.get(record["status"], 0) + 1
        bad = [r for r in results if r["status"] == core.STOPPED
               or (require_passed and r["status"] == core.FAILED)]
        if bad:
            raise exceptions.ValidationsFailed(bad)
        return {"counts": counts, "results": results}
