"""The private state a :class:`~tripleo_flow.client.Client` shares with its managers.

One :class:`Session` per client holds the configuration, the plan store, the plan
locks and the action context, and opens the workflow engine on first use: the
action registry, the workbook catalog (re-read when a file changes), the runner, the
executions store (or a read-only reader), the jobboard.  Every manager holds the same
session; none of it is on the client's public surface.

The workflow engine (TaskFlow, its SQLAlchemy persistence, the workbook language) is
imported by the methods that use it, on first use: a client that only reads plans
never loads it (tests/functional/cli/test_cli_startup.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oslo_config import cfg

from tripleo_flow import config, exceptions
from tripleo_flow.actions.context import ActionContext
from tripleo_flow.client import workbooks
from tripleo_flow.common import jsonvalues
from tripleo_flow.engine.compile.interrupt import StopRequest
from tripleo_flow.engine.jobs import jobboard
from tripleo_flow.engine.lang.action import INPUT_PATH, OUTPUT_PATH, WORK_DIR
from tripleo_flow.exceptions import operations
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow.plans.store import PlanStore
from tripleo_flow.workspace import start_gate

if TYPE_CHECKING:
    from tripleo_flow.actions.registry import ActionRegistry
    from tripleo_flow.client.paths import ServerPaths
    from tripleo_flow.engine.compile.runner import Listener, Runner
    from tripleo_flow.engine.lang.workbook_loader import Catalog, WorkbookLimits
    from tripleo_flow.engine.lang.workbook_model import WorkflowSpec
    from tripleo_flow.engine.store.executions import Execution, ExecutionStore

#: The kinds of action inputs that name a file or directory.
PATH_KINDS = (INPUT_PATH, OUTPUT_PATH, WORK_DIR)


def make_store(conf: cfg.ConfigOpts, data_dir: Path) -> PlanStore:
    """The plan store the configuration names (the local store by default)."""
    if conf.plan_store.backend == "swift":
        from tripleo_flow.plans.swift import SwiftStore

        return SwiftStore.from_conf(conf)
    from tripleo_flow.plans.local import LocalStore

    return LocalStore(conf.plan_store.local_root or data_dir / "plans",
                      history_max=conf.limits.plan_history_max)


class Session:
    """Configuration, stores and the workflow engine of one client."""

    def __init__(self, conf: cfg.ConfigOpts, store: PlanStore | None = None,
                 locks: PlanLocks | None = None) -> None:
        self.conf = conf
        self.data_dir = config.data_dir(conf)
        self.store = store if store is not None else make_store(conf, self.data_dir)
        board = jobboard.BoardSettings.from_conf(conf)
        lock_url = conf.plan_store.lock_url or (
            jobboard.lock_url(board) if board is not None else f"file://{self.data_dir / 'locks'}")
        self.locks = locks if locks is not None else PlanLocks(lock_url,
                                                               conf.plan_store.lock_timeout)
        self.context = ActionContext(store=self.store, locks=self.locks, conf=conf)
        self._opened: dict[str, Any] = {}

    def close(self) -> None:
        """Wait for background executions, release the database and the locks."""
        self.close_workflows()
        self.locks.close()

    def opened(self) -> dict[str, Any]:
        """What the engine opened so far (runner, executions store or reader, catalog,
        action registry, jobboard, Idempotency-Keys), each on first use."""
        return self._opened

    @property
    def action_registry(self) -> ActionRegistry:
        state = self.opened()
        if "registry" not in state:
            from tripleo_flow.actions.registry import ActionRegistry

            state["registry"] = ActionRegistry.load()
        return state["registry"]  # type: ignore[no-any-return]

    @action_registry.setter
    def action_registry(self, registry: ActionRegistry) -> None:
        """Use ``registry`` instead of the installed actions (tests, embedding)."""
        self.opened()["registry"] = registry

    def wf_conf(self, name: str) -> Any:
        return getattr(self.conf.workflows, name)

    def limit(self, name: str) -> int:
        """``[limits] name``."""
        return int(getattr(self.conf.limits, name))

    def workbook_limits(self) -> WorkbookLimits:
        from tripleo_flow.engine.lang import workbook_loader

        return workbook_loader.WorkbookLimits(self.limit("workbook_max_size"),
                                              self.limit("workbook_max_tasks"))

    @property
    def workbooks_dir(self) -> Path:
        configured = self.wf_conf("workbooks_dir")
        return Path(configured) if configured else Path(self.data_dir) / "workbooks"

    def catalog_files(self) -> tuple[list[tuple[Path, bool]], tuple[Any, ...]]:
        """The workbook directories (``(dir, shipped)``) and the stamp of their files
        (names, times, sizes: a catalog read with another stamp is stale)."""
        from tripleo_flow.engine.lang import workbook_loader

        directories = [(workbook_loader.SHIPPED_DIR, True), (self.workbooks_dir, False)]
        stamp = tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size)
                      for d, _ in directories for f in workbook_loader.workbook_files(d))
        return directories, stamp

    def catalog(self) -> Catalog:
        """The catalog, re-read only when a workbook file changed, and checked only
        when no earlier check of the same files passed
        (:mod:`~tripleo_flow.client.catalog_checks`)."""
        from tripleo_flow.client import catalog_checks
        from tripleo_flow.engine.lang import workbook_loader

        directories, stamp = self.catalog_files()
        state = self.opened()
        cached = state.get("catalog")
        if cached is not None and cached[0] == stamp:
            return cached[1]  # type: ignore[no-any-return]
        registry = self.action_registry
        limits = self.workbook_limits()
        record = catalog_checks.CheckRecord(self.data_dir)

        def key() -> str | None:
            files = [(path, shipped) for directory, shipped in directories
                     for path in workbook_loader.workbook_files(directory)]
            return catalog_checks.catalog_key(files, (limits.max_size, limits.max_tasks),
                                              registry.entry_points().items())

        before = key()
        catalog = None
        if before is not None and record.holds(before):
            catalog = workbook_loader.load_catalog(directories, registry.loaded(),
                                                   limits=limits, passed=True,
                                                   made=workbooks.ACTION_WORKFLOWS)
            if key() != before:  # a file changed meanwhile: check what was read
                catalog = None
        if catalog is None:
            catalog = workbook_loader.load_catalog(directories, registry.classes(),
                                                   registry.broken(), limits=limits,
                                                   made=workbooks.ACTION_WORKFLOWS)
            if before is not None and key() == before and not any(
                    entry.problems for entry in catalog.entries.values()):
                record.write(before)
        state["catalog"] = (stamp, catalog)
        return catalog

    def get_workflow(self, name: str) -> WorkflowSpec:
        """The workflow ``name`` (full or unique short name); raises if its workbook is
        invalid."""
        return self.catalog().get(name)

    def listed_catalog(self) -> Catalog:
        """The workflows' catalog for listing them: the checked one when this process
        has it up to date, else the files read without the checks (no action
        registry, no expression compiled: :func:`~tripleo_flow.engine.lang.workbook_loader.
        read_catalog` lists the same workflows)."""
        from tripleo_flow.engine.lang import workbook_loader

        directories, stamp = self.catalog_files()
        cached = self.opened().get("catalog")
        if cached is not None and cached[0] == stamp:
            return cached[1]  # type: ignore[no-any-return]
        return workbook_loader.read_catalog(directories, limits=self.workbook_limits(),
                                            made=workbooks.ACTION_WORKFLOWS)

    # -- wiring -----------------------------------------------------------------

    def runner(self) -> Runner:
        state = self.opened()
        if "runner" not in state:
            from tripleo_flow.engine.compile.runner import Runner

            state["runner"] = Runner(self.catalog, self.action_registry.get, self.context,
                                     self.execution_store(),
                                     self.wf_conf("executor_threads") or 8,
                                     allow_plan_code=self.allow_plan_code(),
                                     allow_outbound=self.allow_plan_code(
                                         "allow_outbound_actions"))
        return state["runner"]  # type: ignore[no-any-return]

    def execution_store(self) -> ExecutionStore:
        """The executions database (``[workflows] connection``, else a SQLite file in
        the data directory), opened once; the runner uses it too.  Readers use it
        alone: listing or showing executions compiles no workflow, loads no workbook
        nor action (:meth:`_runner` does)."""
        state = self.opened()
        if "store" not in state:
            from tripleo_flow.engine.store.executions import ExecutionBackend, ExecutionStore

            url = self.wf_conf("connection")
            if not url:
                Path(self.data_dir).mkdir(parents=True, exist_ok=True, mode=0o700)
                db = Path(self.data_dir) / "executions.sqlite"
                # Secrets are masked before they are written (engine/store/redaction.py);
                # the database stays the user's alone all the same.
                db.touch(mode=0o600, exist_ok=True)
                db.chmod(0o600)
                url = f"sqlite:///{db}"
            state["store"] = ExecutionStore(ExecutionBackend(url))
        return state["store"]  # type: ignore[no-any-return]

    def execution_reader(self) -> Any:
        """What reads executions: the store once this process opened it (it sees its
        deferred writes), else a read-only reader of a SQLite file, which loads neither
        TaskFlow nor SQLAlchemy (:func:`~tripleo_flow.engine.store.execution_reader.open_url`:
        the store for a file not made yet, an older schema, another database)."""
        state = self.opened()
        if "store" not in state and "reader" not in state:
            from tripleo_flow.engine.store import execution_reader

            state["reader"] = execution_reader.open_url(
                self.wf_conf("connection"), Path(self.data_dir) / "executions.sqlite")
        return state.get("store") or state["reader"] or self.execution_store()

    def allow_plan_code(self, option: str = "allow_plan_code") -> bool:
        """``[api] allow_plan_code`` (or another ``[api]`` switch ``option``; False for a
        conf without that group: embedding)."""
        try:
            return bool(getattr(self.conf.api, option))
        except Exception:
            return False

    @property
    def executions_engine(self) -> Any:
        """The SQLAlchemy engine of the executions database (``[workflows] connection``).

        For records that must live beside the executions and be shared by every
        process using that database, such as the Idempotency-Keys of workflow starts.
        """
        return self.runner().store.backend.engine

    def idempotency_ttl(self) -> int:
        return int(self.conf.api.idempotency_key_ttl)

    def close_workflows(self) -> None:
        """Wait for background executions and release the database."""
        self.close_jobboard()
        state = self.opened()
        runner = state.pop("runner", None)
        if runner is not None:
            runner.close()
        state.pop("reader", None)
        store = state.pop("store", None)
        if store is not None:
            store.backend.close()

    def run_operation(self, name: str, inputs: Mapping[str, Any],
                      listeners: Iterable[Listener] = (),
                      interruptible: str | None = None) -> Execution:
        """Run workflow ``name`` in this process to its end, for a Python API method.

        What every interface's operation runs (the CLI's commands and the HTTP API's
        resources call the :class:`Client` method that calls this): a named execution,
        persisted and listed as any other, run here even with a jobboard (the inputs
        may name local files).

        :param interruptible: what the operation is ("Deployment of plan 'oc'"): called
            from the main thread, SIGINT and SIGTERM then stop it (the next task to start,
            or a stack being followed, fails with :class:`Interrupted`) and it reverts
        :raises TripleoFlowError: the error of the task that failed (its kind decides
            the CLI's exit code and the HTTP status), raised after the completed tasks
            were reverted; :class:`WorkflowFailed` when several tasks failed
        """
        from taskflow import exceptions as tf_exceptions

        jsonvalues.check_value(dict(inputs), self.limit("yaml_max_depth"),
                               self.limit("yaml_max_nodes"), "The workflow input")
        inputs = self.absolute_paths(name, inputs)
        stop = StopRequest(interruptible) if interruptible else None
        try:
            with start_gate.starting(self.data_dir):  # no restore swaps the database
                if stop is None:
                    return self.runner().run(name, inputs, listeners=listeners, wait=True)
                with stop.installed():
                    return self.runner().run(name, inputs, listeners=listeners, wait=True,
                                             stop=stop)
        except exceptions.WorkflowFailed as failed:
            cause = failed.__cause__
            if isinstance(cause, Exception) and not isinstance(
                    cause, tf_exceptions.WrappedFailure):
                raise cause from None
            raise

    def absolute_paths(self, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """``inputs`` with each relative local path (an input reaching an action's path
        input) made absolute against this process's directory, so that the execution
        keeps meaning the same file when it is resumed from another directory."""
        from tripleo_flow.engine.lang import paths as flow_paths

        try:
            kinds = flow_paths.path_inputs(self.get_workflow(name), self.catalog(),
                                           self.action_registry.get)
        except exceptions.TripleoFlowError:
            return dict(inputs)  # an unknown or odd workflow: its run says what is wrong
        return {k: os.path.abspath(v) if kinds.get(k) in PATH_KINDS and isinstance(v, str)
                and v and not os.path.isabs(v) else v for k, v in inputs.items()}

    def server_inputs(self, name: str, inputs: Mapping[str, Any],
                      paths: ServerPaths) -> dict[str, Any]:
        """``inputs`` with every server path checked (or placed) by ``paths``."""
        from tripleo_flow.engine.lang import paths as flow_paths
        from tripleo_flow.engine.lang.workbook_model import apply_inputs

        workflow = self.get_workflow(name)
        kinds = flow_paths.path_inputs(workflow, self.catalog(), self.action_registry.get)
        if not kinds:
            return dict(inputs)
        every = apply_inputs(workflow, inputs)
        checked = paths.apply(workflow.full_name, kinds, every)
        return {**inputs, **{k: checked[k] for k in kinds if checked.get(k) is not None}}

    def spawn_worker(self, execution_id: str) -> None:
        args = [sys.executable, "-m", "tripleo_flow.client.worker", execution_id,
                "--data-dir", str(self.data_dir)]
        for path in getattr(self.conf, "config_file", None) or []:
            args += ["--config-file", str(path)]
        # the worker words the errors it records as this process does (an interface's)
        env = {**os.environ, **operations.exported()}
        subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, env=env)

    def jobboard_settings(self) -> jobboard.BoardSettings | None:
        """``[jobboard]`` checked, or None when workflows run in-process."""
        return jobboard.BoardSettings.from_conf(self.conf)

    def board(self) -> Any:
        state = self.opened()
        if "board" not in state:
            settings = self.jobboard_settings()
            if settings is None:
                raise exceptions.InvalidInput(
                    "No jobboard is configured: set [jobboard] backend_url (redis://... or "
                    "zookeeper://...) to run workflows on conductors.")
            state["board"] = jobboard.make_board(settings, self.runner().store.backend)
        return state["board"]

    def close_jobboard(self) -> None:
        board = self.opened().pop("board", None)
        if board is not None:
            board.close()

    def post_execution(self, fd: Any) -> None:
        """Post the job that runs the recorded execution ``fd``."""
        runner = self.runner()
        shown = runner.store.backend.redactor.value(dict((fd.meta or {}).get("input") or {}))
        jobboard.post(self.board(), runner.store.book().uuid, fd, shown)

    def execution_job(self, execution_id: str) -> Any:
        """The job of the execution on the board (claimed or not), or None."""
        for job in self.board().iterjobs(ensure_fresh=True):
            if (job.details or {}).get(jobboard.EXECUTION_KEY) == execution_id:
                return job
        return None

    @property
    def backups_dir(self) -> Path:
        """``<data_dir>/backups``."""
        from tripleo_flow.workspace import backup_archive

        return self.data_dir.absolute() / backup_archive.BACKUPS

