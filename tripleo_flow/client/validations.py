"""TripleO's validations (``client.validations``).

Listing and showing read the validation playbooks' metadata; a run is the
``tripleo.validations.run`` workflow (``workbooks/validations.yaml``), the same one
the HTTP API and ``workflow run`` start, so it is persisted, listed and resumable
like any execution; its result records are kept with the plan (or in the data
directory without one) and read back by :meth:`ValidationManager.results`.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client.base import Manager
from tripleo_flow.core.deploy import validations as core
from tripleo_flow.validations import runner, runs_dir

if TYPE_CHECKING:
    import builtins

    from tripleo_flow.actions.context import ActionContext
    from tripleo_flow.client.executions import ExecutionManager
    from tripleo_flow.client.session import Session
    from tripleo_flow.client.tasks import TaskManager
    from tripleo_flow.engine.compile.runner import Listener
    from tripleo_flow.engine.store.executions import Execution
    from tripleo_flow.validations.catalog import Catalog
    from tripleo_flow.validations.results import ResultStore

WORKFLOW = "tripleo.validations.run"


def catalog_of(context: ActionContext) -> Catalog:
    """The validations catalog of ``context`` (the validation actions' module is
    imported when a validation command runs)."""
    from tripleo_flow.actions import validations

    return validations.catalog_of(context)


def result_store(context: ActionContext) -> ResultStore:
    """Where ``context``'s validation results are kept (as :func:`catalog_of`)."""
    from tripleo_flow.actions import validations

    return validations.result_store(context)


class ValidationManager(Manager):
    """List, show, run and stop validations; read their results (``client.validations``)."""

    def __init__(self, session: Session, executions: ExecutionManager, tasks: TaskManager) -> None:
        super().__init__(session)
        self._executions = executions
        self._tasks = tasks

    def list(self, group: str | None = None,
             category: str | None = None) -> list[dict[str, Any]]:
        """The installed validations (of ``group`` / ``category`` when given), by id.

        :raises ValidationsNotInstalled: no validations virtualenv.
        """
        found = catalog_of(self._session.context).select(None, group, category) if (
            group or category) else catalog_of(self._session.context).all()
        return [f.validation.as_dict() for f in found]

    def get(self, name: str) -> dict[str, Any]:
        """One validation's metadata and parameters (its play vars, which
        ``extra_vars`` override), and its playbook's path."""
        found = catalog_of(self._session.context).get(name)
        return {**found.validation.as_dict(), "path": str(found.path)}

    def _validation_inputs(self, validations: Sequence[str] | None, group: str | None,
                           plan: str | None, inventory: str | Path | None,
                           extra_vars: Mapping[str, Any] | None,
                           require_passed: bool = False) -> dict[str, Any]:
        if extra_vars is not None and not isinstance(extra_vars, Mapping):
            raise exceptions.InvalidInput("Give the validations' extra vars as a mapping.")
        try:
            core.check_extra_vars(extra_vars or {})
        except ValueError as exc:
            raise exceptions.InvalidInput(
                f"Bad extra vars: {exc}; give the validation's parameters "
                "(validation show NAME).") from exc
        if not validations and not group:
            raise exceptions.InvalidInput(
                "Name the validations to run (--validation A,B) or a group (--group G).")
        for name in validations or ():
            try:
                core.check_id(name)
            except ValueError as exc:
                raise exceptions.InvalidInput(str(exc)) from exc
        localhost = str(inventory) == core.LOCALHOST
        return {"validations": list(validations) if validations else None, "group": group,
                "plan": plan, "localhost": localhost,
                "inventory": None if localhost or inventory is None else str(inventory),
                "extra_vars": dict(extra_vars or {}), "run_id": runner.new_run_id(),
                "require_passed": require_passed}

    def run(self, validations: Sequence[str] | None = None,
            group: str | None = None, plan: str | None = None,
            inventory: str | Path | None = None,
            extra_vars: Mapping[str, Any] | None = None,
            require_passed: bool = False,
            listeners: Iterable[Listener] | None = None) -> dict[str, Any]:
        """Run ``validations`` (names) or those of ``group``, one after the other.

        :param plan: results are stored with this plan; without ``inventory``, its last
            deployment's config-download inventory is used.
        :param inventory: ``"localhost"`` (this machine, the default without a plan) or an
            Ansible inventory file.
        :param extra_vars: the validations' parameters (their play vars), by name.
        :param require_passed: a FAILED validation fails the run (``ValidationsFailed``).
        :returns: ``execution``, ``run_id``, ``inventory``, ``counts`` and ``results``
            (one summary per validation: status, hosts, reasons, duration).
        :raises WorkflowFailed: the run was stopped (also by SIGINT or SIGTERM, when called
            from the main thread: Ansible runs in a session of its own, which Ctrl-C does
            not reach), or (``require_passed``) a validation failed; each one's reasons
            are in the message.
        """
        inputs = self._validation_inputs(validations, group, plan, inventory, extra_vars,
                                         require_passed)
        with _stopped_by_signals(runs_dir(self._session.conf) / inputs["run_id"]):
            execution = self._executions.create(WORKFLOW, inputs, listeners=listeners)
        return {"execution": execution.id, **dict(execution.output or {})}

    def start(self, validations: Sequence[str] | None = None,
              group: str | None = None, plan: str | None = None,
              localhost: bool = False,
              extra_vars: Mapping[str, Any] | None = None,
              api_user: bool = False) -> Execution:
        """Start a run in the background (what the HTTP API does): ``localhost``, or the
        plan's own inventory; never a path of this server."""
        inputs = self._validation_inputs(validations, group, plan,
                                         core.LOCALHOST if localhost or not plan else None,
                                         extra_vars)
        return self._executions.create(WORKFLOW, inputs, wait=False, api_user=api_user)

    def _run_id(self, execution_id: str) -> str:
        execution = self._executions.get(execution_id)
        if execution.workflow != WORKFLOW:
            raise exceptions.InvalidInput(
                f"Execution {execution_id!r} runs {execution.workflow!r}, not validations.")
        run_id = (execution.input or {}).get("run_id")
        if not run_id:
            for task in self._tasks.list(execution_id):
                if task.name == "select_validations" and isinstance(task.result, dict):
                    run_id = task.result.get("run_id")
        try:
            return runner.check_run_id(str(run_id))
        except ValueError:
            raise exceptions.ValidationsNotRunning(execution_id, execution.state) from None

    def stop(self, execution_id: str) -> dict[str, Any]:
        """Stop a validation run: the running validation's Ansible processes are ended
        (SIGTERM, then SIGKILL) and no further validation of it starts; the workflow then
        fails with the validations STOPPED.

        :raises ValidationsNotRunning: the execution has ended.
        """
        execution = self._executions.get(execution_id)
        run_id = self._run_id(execution_id)
        if execution.state not in ("RUNNING", "PENDING") and not execution.pausing:
            raise exceptions.ValidationsNotRunning(execution_id, execution.state)
        stopped = runner.stop(runs_dir(self._session.conf) / run_id)
        return {"execution": execution_id, "run_id": run_id, "stopped": stopped}

    def results(self, plan: str | None = None,
                validation: str | None = None) -> builtins.list[dict[str, Any]]:
        """Result records of ``plan`` (None: runs without a plan), newest first, without
        their logs."""
        return result_store(self._session.context).list(plan, validation)

    def get_result(self, record_id: str, plan: str | None = None) -> dict[str, Any]:
        """One result record with its log.

        :raises ValidationResultNotFound: none of that id (with that plan).
        """
        return result_store(self._session.context).get(record_id, plan)


@contextlib.contextmanager
def _stopped_by_signals(run_dir: Path) -> Iterator[None]:
    """While the block runs in the main thread, SIGINT and SIGTERM stop the run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        threading.Thread(target=runner.stop, args=(run_dir,), daemon=True).start()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


__all__ = ["WORKFLOW", "ValidationManager"]
