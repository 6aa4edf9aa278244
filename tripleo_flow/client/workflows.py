"""The Python API of the workflow engine: what the CLI and the HTTP backend call.

:class:`WorkflowsMixin` needs three attributes on its host: ``context`` (an
:class:`~tripleo_flow.actions.base.ActionContext`), ``conf`` (oslo ConfigOpts)
and ``data_dir`` (a :class:`pathlib.Path`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client.catalog import CatalogMixin
from tripleo_flow.client.jobs import JobsMixin
from tripleo_flow.common import jsonvalues
from tripleo_flow.core.deploy import lifecycle_options
from tripleo_flow.engine.compile.interrupt import StopRequest
from tripleo_flow.engine.lang.action import INPUT_PATH, OUTPUT_PATH, WORK_DIR
from tripleo_flow.engine.store.execution_pages import UUID_PATTERN, check_page
from tripleo_flow.exceptions import operations
from tripleo_flow.workspace import start_gate

if TYPE_CHECKING:
    from tripleo_flow.client.paths import ServerPaths
    from tripleo_flow.engine.compile.runner import Listener, Runner
    from tripleo_flow.engine.lang.workbook_model import WorkflowSpec
    from tripleo_flow.engine.store.executions import Execution, ExecutionStore, TaskRecord

# The workflow engine (TaskFlow, its SQLAlchemy persistence, the workbook language) is
# imported by the methods that use it, on first use: a Client that only reads plans
# never loads it (tests/unit/test_cli_startup.py).

#: The kinds of action inputs that name a file or directory.
PATH_KINDS = (INPUT_PATH, OUTPUT_PATH, WORK_DIR)
#: What an execution id looks like (the HTTP API's schema of a page marker).
EXECUTION_ID_PATTERN = UUID_PATTERN


class WorkflowsMixin(CatalogMixin, JobsMixin):
    """Workflows and their executions (the workbooks and actions they are read from:
    :class:`~tripleo_flow.client.catalog.CatalogMixin`)."""

    context: Any
    conf: Any
    data_dir: Path

    # -- wiring -----------------------------------------------------------------

    def _runner(self) -> Runner:
        state = self._wf_state()
        if "runner" not in state:
            from tripleo_flow.engine.compile.runner import Runner

            state["runner"] = Runner(self._catalog, self.action_registry.get, self.context,
                                     self._execution_store(),
                                     self._wf_conf("executor_threads") or 8,
                                     allow_plan_code=self._allow_plan_code(),
                                     allow_outbound=self._allow_plan_code(
                                         "allow_outbound_actions"))
        return state["runner"]  # type: ignore[no-any-return]

    def _execution_store(self) -> ExecutionStore:
        """The executions database (``[workflows] connection``, else a SQLite file in
        the data directory), opened once; the runner uses it too.  Readers use it
        alone: listing or showing executions compiles no workflow, loads no workbook
        nor action (:meth:`_runner` does)."""
        state = self._wf_state()
        if "store" not in state:
            from tripleo_flow.engine.store.executions import ExecutionBackend, ExecutionStore

            url = self._wf_conf("connection")
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

    def _execution_reader(self) -> Any:
        """What reads executions: the store once this process opened it (it sees its
        deferred writes), else a read-only reader of a SQLite file, which loads neither
        TaskFlow nor SQLAlchemy (:func:`~tripleo_flow.engine.store.execution_reader.open_url`:
        the store for a file not made yet, an older schema, another database)."""
        state = self._wf_state()
        if "store" not in state and "reader" not in state:
            from tripleo_flow.engine.store import execution_reader

            state["reader"] = execution_reader.open_url(
                self._wf_conf("connection"), Path(self.data_dir) / "executions.sqlite")
        return state.get("store") or state["reader"] or self._execution_store()

    def _allow_plan_code(self, option: str = "allow_plan_code") -> bool:
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
        return self._runner().store.backend.engine

    def start_workflow_once(self, key: str, name: str, inputs: Mapping[str, Any] | None = None,
                            target: str | None = None, env: Mapping[str, Any] | None = None,
                            paths: ServerPaths | None = None, api_user: bool = False,
                            owner: str = "", evaluate_env: bool = True) -> Execution:
        """Start workflow ``name`` in the background once per ``key`` (an
        Idempotency-Key): a retried start with the same key and the same request
        gets the execution the first one made, also from another process sharing
        the executions database (:mod:`tripleo_flow.client.idempotency`).

        :param owner: whose key it is (a Keystone user id): another owner's same key
            is another key
        :raises Conflict: the key was used for another request (workflow, inputs,
            target, env)
        """
        from tripleo_flow.client import idempotency

        idempotency.check_key(key)
        fingerprint = json.dumps([name, dict(inputs or {}), target]
                                 + ([dict(env)] if env else [])
                                 + ([] if evaluate_env else ["raw env"]),
                                 sort_keys=True, default=str)
        state = self._wf_state()
        if "idempotency" not in state:
            state["idempotency"] = idempotency.IdempotencyKeys(
                lambda: self.executions_engine, self._idempotency_ttl())
        keys: idempotency.IdempotencyKeys = state["idempotency"]
        execution_id = keys.start(key, fingerprint, lambda: self.run_workflow(
            name, inputs, wait=False, target=target, paths=paths, api_user=api_user,
            env=env, evaluate_env=evaluate_env).id, owner=owner)
        return self.get_execution(execution_id)

    def _idempotency_ttl(self) -> int:
        return int(self.conf.api.idempotency_key_ttl)

    def close_workflows(self) -> None:
        """Wait for background executions and release the database."""
        self.close_jobboard()
        state = self._wf_state()
        runner = state.pop("runner", None)
        if runner is not None:
            runner.close()
        state.pop("reader", None)
        store = state.pop("store", None)
        if store is not None:
            store.backend.close()

    # -- workflows ---------------------------------------------------------------

    def list_workflows(self) -> list[WorkflowSpec]:
        """Every workflow of every loadable workbook, by full name (read without
        checking the workbooks: their problems are raised when one runs)."""
        return sorted(self._listed_catalog().workflows(), key=lambda w: w.full_name)

    def get_workflow(self, name: str) -> WorkflowSpec:
        """The workflow ``name`` (full or unique short name); raises if its workbook is invalid."""
        return self._catalog().get(name)

    def workflow_dot(self, name: str) -> str:
        """The task graph of workflow ``name`` in Graphviz DOT."""
        from tripleo_flow.engine.compile import compiler

        return compiler.to_dot(self.get_workflow(name))

    def workflow_graph(self, name: str) -> dict[str, Any]:
        """The task graph of workflow ``name`` as data
        (:func:`~tripleo_flow.engine.compile.compiler.to_graph`)."""
        from tripleo_flow.engine.compile import compiler

        return compiler.to_graph(self.get_workflow(name))

    def run_workflow(self, name: str, inputs: Mapping[str, Any] | None = None, wait: bool = True,
                     listeners: Iterable[Listener] | None = None,
                     target: str | None = None, detach: bool = False,
                     paths: ServerPaths | None = None, api_user: bool = False,
                     env: Mapping[str, Any] | None = None,
                     evaluate_env: bool = True) -> Execution:
        """Run workflow ``name`` with ``inputs``.

        :param wait: return when it has ended (else it runs in a thread of this process,
            or on a conductor with ``[jobboard] backend_url``: then the run is posted as a
            job and this returns at once; waiting follows its record)
        :param listeners: callables receiving each :class:`ProgressEvent`
        :param target: for a reverse workflow, the task to reach
        :param detach: with ``wait`` False, run it in a separate process that
            outlives this one (what ``workflow run --no-wait`` uses)
        :param paths: the server paths the inputs may name (the HTTP API's); None lets
            them name any local path
        :param api_user: started for a user of the HTTP API (implied by ``paths``): recorded
            with the execution, whose tasks that run code taken from the plan on this
            machine (``runs_plan_code``) are then refused unless ``[api] allow_plan_code``,
            also when it is resumed
        :param env: the execution's environment (Mistral's ``env``), read with ``env()``
            in its expressions and kept for a resume; with ``paths``, no action may take
            a server path from it
        :param evaluate_env: False keeps the expressions in ``env``'s values as text
            (Mistral's ``evaluate_env`` start parameter)
        :raises PathNotAllowed: with ``paths``, an input names a server path it does not
            allow, or an action gets a path from something else than a workflow input
        :raises WorkflowFailed: when it failed (its completed tasks were reverted)
        :raises InvalidInput: ``inputs`` nest deeper than ``[limits] yaml_max_depth``, hold
            more than ``yaml_max_nodes`` values, a non-finite number or a lone surrogate,
            or take over ``[limits] input_max_size`` bytes (``env`` too), before the
            execution is recorded
        """
        from tripleo_flow.engine.compile.runner import check_env
        from tripleo_flow.engine.store.executions import ORIGIN_API

        jsonvalues.check_value(dict(inputs or {}), self._limit("yaml_max_depth"),
                               self._limit("yaml_max_nodes"), "The workflow input")
        lifecycle_options.check_inputs(name, inputs or {})  # tripleoclient's names
        check_env(env)
        if env is not None:
            jsonvalues.check_value(dict(env), self._limit("yaml_max_depth"),
                                   self._limit("yaml_max_nodes"),
                                   "The execution's env")
        if paths is not None:
            inputs = self._server_inputs(name, inputs or {}, paths)
        else:
            inputs = self._absolute_paths(name, inputs or {})
        origin = ORIGIN_API if api_user or paths is not None else None
        if origin == ORIGIN_API:
            from tripleo_flow.client.heat import check_heat_launch_place

            check_heat_launch_place(self.conf, self.get_workflow(name).full_name, inputs)
        with start_gate.starting(self.data_dir):  # no restore swaps the database meanwhile
            return self._start(name, inputs, wait, listeners, target, detach, origin, env,
                               evaluate_env)

    def _start(self, name: str, inputs: dict[str, Any], wait: bool,
               listeners: Iterable[Listener] | None, target: str | None, detach: bool,
               origin: str | None, env: Mapping[str, Any] | None,
               evaluate_env: bool) -> Execution:
        """:meth:`run_workflow` once its inputs are checked."""
        runner = self._runner()
        if self.jobboard_settings() is not None:
            fd = runner.start(name, inputs, target, origin, env, local=False,
                              evaluate_env=evaluate_env)
            self._post_execution(fd)
            if wait:
                return self.follow_execution(fd.uuid, listeners or ())
            return runner.store.get(fd.uuid)
        if wait or not detach:
            return runner.run(name, inputs, target, listeners or (), wait=wait, origin=origin,
                              env=env, evaluate_env=evaluate_env)
        fd = runner.start(name, inputs, target, origin, env, evaluate_env=evaluate_env)
        self._spawn_worker(fd.uuid)
        return runner.store.get(fd.uuid)

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

        jsonvalues.check_value(dict(inputs), self._limit("yaml_max_depth"),
                               self._limit("yaml_max_nodes"), "The workflow input")
        inputs = self._absolute_paths(name, inputs)
        stop = StopRequest(interruptible) if interruptible else None
        try:
            with start_gate.starting(self.data_dir):  # no restore swaps the database
                if stop is None:
                    return self._runner().run(name, inputs, listeners=listeners, wait=True)
                with stop.installed():
                    return self._runner().run(name, inputs, listeners=listeners, wait=True,
                                              stop=stop)
        except exceptions.WorkflowFailed as failed:
            cause = failed.__cause__
            if isinstance(cause, Exception) and not isinstance(
                    cause, tf_exceptions.WrappedFailure):
                raise cause from None
            raise

    def _absolute_paths(self, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """``inputs`` with each relative local path (an input reaching an action's path
        input) made absolute against this process's directory, so that the execution
        keeps meaning the same file when it is resumed from another directory."""
        from tripleo_flow.engine.lang import paths as flow_paths

        try:
            kinds = flow_paths.path_inputs(self.get_workflow(name), self._catalog(),
                                           self.action_registry.get)
        except exceptions.TripleoFlowError:
            return dict(inputs)  # an unknown or odd workflow: its run says what is wrong
        return {k: os.path.abspath(v) if kinds.get(k) in PATH_KINDS and isinstance(v, str)
                and v and not os.path.isabs(v) else v for k, v in inputs.items()}

    def _server_inputs(self, name: str, inputs: Mapping[str, Any],
                       paths: ServerPaths) -> dict[str, Any]:
        """``inputs`` with every server path checked (or placed) by ``paths``."""
        from tripleo_flow.engine.lang import paths as flow_paths
        from tripleo_flow.engine.lang.workbook_model import apply_inputs

        workflow = self.get_workflow(name)
        kinds = flow_paths.path_inputs(workflow, self._catalog(), self.action_registry.get)
        if not kinds:
            return dict(inputs)
        every = apply_inputs(workflow, inputs)
        checked = paths.apply(workflow.full_name, kinds, every)
        return {**inputs, **{k: checked[k] for k in kinds if checked.get(k) is not None}}

    def _spawn_worker(self, execution_id: str) -> None:
        args = [sys.executable, "-m", "tripleo_flow.client.worker", execution_id,
                "--data-dir", str(self.data_dir)]
        for path in getattr(self.conf, "config_file", None) or []:
            args += ["--config-file", str(path)]
        # the worker words the errors it records as this process does (an interface's)
        env = {**os.environ, **operations.exported()}
        subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, env=env)

    # -- executions ---------------------------------------------------------------

    def get_execution(self, execution_id: str) -> Execution:
        """An execution's record; PAUSED at once once a pause was asked
        (:mod:`~tripleo_flow.engine.store.pause_views`)."""
        from tripleo_flow.engine.store import pause_views

        store = self._execution_reader()
        return pause_views.shown_one(store, store.get(execution_id))

    def list_executions(self, workflow: str | None = None) -> list[Execution]:
        """Every execution (of ``workflow``: its full name, or without its workbook),
        oldest first, read a page of ``[api] executions_page_max`` at a time (each with
        SQL ``LIMIT``); :meth:`page_executions` reads one page."""
        from tripleo_flow.engine.store import pause_views

        store = self._execution_reader()
        executions: list[Execution] = []
        marker = None
        while True:
            page, more = store.page(self.conf.api.executions_page_max, marker, workflow)
            executions += pause_views.shown(store, page)
            if not (more and page):
                return executions
            marker = page[-1].id

    def page_executions(self, limit: int | None = None, marker: str | None = None,
                        workflow: str | None = None, sort_dir: str = "asc",
                        ) -> tuple[list[Execution], str | None]:
        """One page of executions, oldest first (``sort_dir`` ``desc``: newest first),
        and the marker of the next page (None: this was the last).

        :param limit: most executions on the page (``[api] executions_page_size`` when
            None; at most ``[api] executions_page_max``); fewer when their records
            take over ``[api] executions_page_max_bytes`` (one at least)
        :param marker: the marker the previous page returned
        :raises InvalidInput: a bad limit, marker or sort_dir
        """
        api = self.conf.api
        limit = check_page(api.executions_page_size if limit is None else limit,
                           api.executions_page_max, sort_dir)
        from tripleo_flow.engine.store import pause_views

        store = self._execution_reader()
        page, more = store.page(limit, marker, workflow, sort_dir == "desc",
                                api.executions_page_max_bytes)
        return pause_views.shown(store, page), (page[-1].id if more and page else None)

    def execution_tasks(self, execution_id: str) -> list[TaskRecord]:
        """The tasks of an execution; one whose sub-workflow is paused reads PAUSED.  A
        task of a stopped execution whose ``timeout`` passed while it waited for a client
        is completed first (:mod:`~tripleo_flow.engine.compile.stopped_items`)."""
        from tripleo_flow.engine.store import pause_views

        store = self._execution_store()
        tasks = store.tasks(execution_id)
        now = time.time()
        if any((w.get("deadline") or now) < now for t in tasks for w in t.waiting):
            from tripleo_flow.engine.compile import stopped_publish

            if stopped_publish.settle(self._runner(), execution_id):  # when stopped
                tasks = store.tasks(execution_id)
        return pause_views.shown_tasks(store, self.get_execution(execution_id), tasks)

    def resume_execution(self, execution_id: str, listeners: Iterable[Listener] | None = None,
                         wait: bool = True, detach: bool = False,
                         api_user: bool = False) -> Execution:
        """Continue a paused or suspended execution, or one interrupted by a crash, from
        its last completed task.

        With ``[jobboard] backend_url`` the continuation is posted as a job for a
        conductor (refused while a job of the execution is on the board: a conductor
        will continue it); else it runs in this process.

        :param wait: return when it has ended (else at once: it runs in a thread of
            this process, or on a conductor)
        :param detach: with ``wait`` False and no jobboard, run it in a separate
            process that outlives this one (what ``execution resume --async`` uses)
        :param api_user: asked by a user of the HTTP API: only executions started through
            the API may be resumed (Conflict otherwise)
        An execution that has ended (succeeded, failed, cancelled) is returned unchanged,
        as Mistral's resume of a workflow that is not paused.

        :raises Conflict: it still runs, already waits on the jobboard, or
            (``api_user``) was not started through the API
        """
        with start_gate.starting(self.data_dir):  # no restore swaps the database
            return self._resume(execution_id, listeners, wait, detach, api_user)

    def _resume(self, execution_id: str, listeners: Iterable[Listener] | None,
                wait: bool, detach: bool, api_user: bool) -> Execution:
        """:meth:`resume_execution` inside the start gate."""
        from tripleo_flow.engine.store.executions import ORIGIN_API

        runner = self._runner()
        origin = ORIGIN_API if api_user else None
        ended = runner.ended(execution_id, origin)
        if ended is not None:  # as Mistral's resume of a workflow that is not paused
            return ended
        # A sub-workflow its paused parent waits for: the parent resumes, then it.
        target = runner.resume_target(execution_id)
        if target != execution_id:
            self._resume(target, listeners, wait, detach, api_user)
            return runner.store.get(execution_id)
        if self.jobboard_settings() is None:
            if wait or not detach:
                return runner.resume(execution_id, listeners or (), wait=wait, origin=origin)
            runner.resumable(execution_id, origin)
            self._spawn_worker(execution_id)
            return runner.store.get(execution_id)
        with self.context.locks.hold_execution(execution_id):  # one job per resume
            fd = runner.resumable(execution_id, origin)
            if self._execution_job(execution_id) is not None:
                raise exceptions.Conflict(
                    f"Execution {execution_id!r} already waits on the jobboard: a conductor "
                    "will continue it.")
            self._post_execution(fd)
        if wait:
            return self.follow_execution(execution_id, listeners or ())
        return runner.store.get(execution_id)

    def pause_execution(self, execution_id: str, api_user: bool = False) -> Execution:
        """Pause a running execution and its running sub-workflow executions, as
        Mistral's pause: they start no new task and stop PAUSED once their running
        tasks end; :meth:`resume_execution` continues them.  One run by another
        process (a CLI run, the API server, a conductor), or not started yet (PENDING),
        gets a pause request that its engine reads before it starts its next tasks;
        its record reads PAUSED at once, with ``pausing`` true until its running tasks
        ended (:mod:`~tripleo_flow.engine.store.pause_views`).

        A paused execution is left as it is (Mistral's pause does nothing then).

        :param api_user: asked by a user of the HTTP API: only executions started through
            the API may be paused (as only those may be resumed there)
        :raises Conflict: it is not running (it ended, was interrupted), or
            (``api_user``) was not started through the API
        """
        from tripleo_flow.engine.store import pause_views
        from tripleo_flow.engine.store.executions import ORIGIN_API

        runner = self._runner()
        return pause_views.shown_one(
            runner.store, runner.pause(execution_id, ORIGIN_API if api_user else None))

    def cancel_execution(self, execution_id: str, message: str | None = None,
                         api_user: bool = False) -> Execution:
        """Cancel an execution and its sub-workflow executions, as Mistral's
        ``execution-update -s CANCELLED``: it reads CANCELLED at once, with ``message``
        as its ``state_info`` and ``{"result": message}`` as its output; its running
        tasks end, no new task starts, and it is never resumed.  A running, paused,
        suspended or crash-interrupted execution can be cancelled, wherever it runs; one
        that has ended is returned unchanged (Mistral's cancel does nothing then).

        :param api_user: asked by a user of the HTTP API: only executions started through
            the API may be cancelled (as only those may be paused there)
        :raises Conflict: (``api_user``) it was not started through the API
        :raises InvalidInput: ``message`` is not text
        """
        from tripleo_flow.engine.store import pause_views
        from tripleo_flow.engine.store.executions import ORIGIN_API

        if message is not None and not isinstance(message, str):
            raise exceptions.InvalidInput(
                f"A cancel's message must be text, not {type(message).__name__}.")
        runner = self._runner()
        return pause_views.shown_one(
            runner.store, runner.cancel(execution_id, message, ORIGIN_API if api_user else None))
