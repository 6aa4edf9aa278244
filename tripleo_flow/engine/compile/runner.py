"""Running, persisting and resuming workflow executions.

:class:`Runner` checks the inputs, records a PENDING execution, compiles the
workflow (a direct workflow that loops or joins runs on
:mod:`~.state_machine` instead, through the same engine surface)
and runs it with TaskFlow's parallel engine on a long-lived thread
pool (an engine that owns its pool costs ~1 s per run; a task that is all the
engine waits for runs in the engine's own thread: :class:`~.engine.HeldExecutor`,
and engines run with rarer young garbage collections:
:func:`~.engine.fewer_collections`).  Progress events go to
listeners through each atom's own notifier.  An execution interrupted by a
crash is resumed from its persisted flow detail: completed tasks are not run
again, the task that was running runs again (at-least-once; with ``safe-rerun:
false`` it fails instead).  A ``pause`` command (or :meth:`Runner.pause`) leaves the
execution PAUSED (TaskFlow's SUSPENDED) until it is resumed the same way; a paused
sub-workflow pauses its parent, and resuming either resumes both
(:mod:`~.subworkflow`).  Another process pauses it through a pause request its
engine reads before it starts tasks (:mod:`~.pause_requests`).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent import futures
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import clock, value_limits
from tripleo_flow.engine.compile import (
    atoms,
    compiler,
    execution_scope,
    progress_events,
    resumes,
    run_outcomes,
    state_machine,
    subworkflow,
    task_progress,
)
from tripleo_flow.engine.compile import engine as tf_engine
from tripleo_flow.engine.compile.interrupt import StopRequest
from tripleo_flow.engine.compile.progress_events import Listener, ProgressEvent
from tripleo_flow.engine.lang import expressions, workbook_model
from tripleo_flow.engine.lang.action import Action, with_run
from tripleo_flow.engine.lang.workbook_loader import Catalog
from tripleo_flow.engine.store import cancels, pause_requests, undo_journal
from tripleo_flow.engine.store.execution_queries import ExecutionQueries
from tripleo_flow.engine.store.executions import (
    ORIGIN_API,
    Execution,
    ExecutionStore,
)

LOG = logging.getLogger(__name__)




def check_env(env: Any) -> None:
    """Raise InvalidInput unless ``env`` (an execution's environment) is None or a mapping."""
    if env is not None and not isinstance(env, Mapping):
        raise exceptions.InvalidInput(
            f"The execution's env must be a JSON object, not {type(env).__name__}.")


class Runner:
    """Runs workflows of a catalog and keeps their executions."""

    def __init__(self, catalog: Callable[[], Catalog], actions: Callable[[str], type[Action]],
                 action_context: Any, store: ExecutionStore, threads: int = 8,
                 allow_plan_code: bool = False, allow_outbound: bool = False) -> None:
        """:param allow_plan_code: let executions started over the HTTP API run actions
            that run plan code (``[api] allow_plan_code``)
        :param allow_outbound: let them run actions that connect out (``[api]
            allow_outbound_actions``)"""
        self._catalog = catalog
        self._allow_plan_code = allow_plan_code
        self._allow_outbound = allow_outbound
        self._actions = actions
        self._action_context = action_context
        self.store = store
        self._threads = max(1, threads)
        self._engine_pool: futures.ThreadPoolExecutor | None = None
        self._item_pool: futures.ThreadPoolExecutor | None = None
        self._guard = threading.Lock()
        self._background: list[threading.Thread] = []
        self._resuming: set[str] = set()
        #: executions :meth:`start` recorded whose plan's secrets it learned
        self._learned: set[str] = set()
        self._resume_lock = threading.Lock()
        #: The engines running in this process, by execution id.
        self._live: dict[str, Any] = {}
        self._closing = False

    def _pools(self) -> tuple[futures.ThreadPoolExecutor, futures.ThreadPoolExecutor]:
        with self._guard:
            if self._engine_pool is None or self._item_pool is None:
                # The standard library's pool, not futurist's: its shutdown wakes idle
                # workers at once, where futurist's poll their queue for up to 1 s (every
                # CLI command that ran a workflow paid that second when it closed).
                self._engine_pool = futures.ThreadPoolExecutor(
                    max_workers=self._threads, thread_name_prefix="tripleo-flow-tasks")
                self._item_pool = futures.ThreadPoolExecutor(
                    max_workers=self._threads, thread_name_prefix="tripleo-flow-items")
            return self._engine_pool, self._item_pool

    def start(self, name: str, inputs: Mapping[str, Any] | None = None,
              target: str | None = None, origin: str | None = None,
              env: Mapping[str, Any] | None = None, local: bool = True,
              execution_id: str | None = None, parent: Mapping[str, Any] | None = None,
              evaluate_env: bool = True) -> Any:
        """Check ``inputs`` and record a PENDING execution of workflow ``name``.

        :param origin: :data:`~tripleo_flow.engine.store.executions.ORIGIN_API` for an HTTP API
            user's execution (persisted: it holds when the execution is resumed)
        :param env: the execution's environment, what ``env()`` reads in its expressions
            (Mistral's ``env``: a JSON object, persisted with the execution)
        :param local: this process runs it or starts its worker (False: it goes to a
            jobboard, where a conductor takes it)
        :param execution_id: its id, ``parent``: its parent's (a sub-workflow's: see
            :mod:`~.subworkflow`)
        :param evaluate_env: False keeps the expressions in ``env``'s values as text
            (Mistral's ``evaluate_env``)
        """
        check_env(env)
        workflow = self._catalog().get(name)
        given = dict(inputs or {})
        limit = getattr(self._action_context, "limit", None)
        value_limits.check_inputs(workflow.full_name, given, env, None if limit is None
                                  else limit("input_max_items"))
        # Before the record is written: inputs too large to keep, then the layer above's
        # own checks (its input hook: TripleO's parameter values and environment files).
        value_limits.check_execution_input(
            workflow.full_name, given, env, *(() if limit is None else (limit("input_max_size"),)))
        check_input = getattr(self._action_context, "check_input", None)
        if check_input is not None:
            check_input(workflow.full_name, given)
        # Before the record is written: inputs that are missing or that its vars reject.
        self._with_vars(workflow, workbook_model.apply_inputs(workflow, given),
                        self._evaluated_env(env or {}) if evaluate_env else dict(env or {}),
                        {"name": workflow.full_name, "input": given})
        if target is not None:
            compiler._selection(workflow, target, compiler._preds(workflow))
        # Before the record is written: the secrets its inputs carry, as the layer above
        # finds them (its input_secrets hook: TripleO's environment files given as text),
        # and those of the plan (its first record is then masked as its later ones are).
        input_secrets = getattr(self._action_context, "input_secrets", None)
        if input_secrets is not None:
            self.store.backend.redactor.learn(input_secrets(given))
        self._learn_secrets(given.get("plan"))
        fd = self.store.create(workflow.full_name, given, target, origin, dict(env or {}),
                               local=local, execution_id=execution_id, parent=parent,
                               evaluate_env=evaluate_env)
        if local:  # run at once here (a job may wait: its runner learns them then)
            with self._guard:
                self._learned.add(fd.uuid)
        return fd

    def run(self, name: str, inputs: Mapping[str, Any] | None = None, target: str | None = None,
            listeners: Iterable[Listener] = (), wait: bool = True,
            origin: str | None = None, stop: StopRequest | None = None,
            env: Mapping[str, Any] | None = None, evaluate_env: bool = True) -> Execution:
        """Run workflow ``name``; with ``wait`` False return while it runs in a thread.

        :param stop: with ``wait``, what a signal sets to stop the run: the next task
            to start (or a running one at its next look) fails with it and the
            execution reverts
        """
        fd = self.start(name, inputs, target, origin, env, evaluate_env=evaluate_env)
        if wait:
            return self.execute(fd, listeners, stop)
        return self._in_background(fd, listeners)

    def _in_background(self, fd: Any, listeners: Iterable[Listener]) -> Execution:
        """Run ``fd`` in a thread of this process; its record as it starts."""
        thread = threading.Thread(target=self._quiet, args=(fd, tuple(listeners)),
                                  name=f"execution-{fd.uuid}", daemon=True)
        self._background.append(thread)
        thread.start()
        return self.store.get(fd.uuid)

    def _quiet(self, fd: Any, listeners: Iterable[Listener]) -> None:
        try:
            self.execute(fd, listeners)
        except exceptions.TripleoFlowError as exc:
            LOG.info("execution %s ended: %s", fd.uuid, exc)
        except Exception:  # a background run must not die silently
            LOG.exception("execution %s crashed", fd.uuid)

    def resume(self, execution_id: str, listeners: Iterable[Listener] = (),
               wait: bool = True, origin: str | None = None) -> Execution:
        """Continue an interrupted execution from its last completed task; with ``wait``
        False return while it runs in a thread (:func:`.resumes.resume`)."""
        return resumes.resume(self, execution_id, listeners, wait, origin)

    def _claim_resume(self, execution_id: str) -> None:
        """Note that ``execution_id`` is being resumed here; Conflict if it is already."""
        resumes.claim_resume(self, execution_id)

    def resumable(self, execution_id: str, origin: str | None = None) -> Any:
        """The flow detail of an execution that can be continued
        (:func:`.resumes.resumable`)."""
        return resumes.resumable(self, execution_id, origin)

    def resume_target(self, execution_id: str) -> str:
        """The execution to resume to continue ``execution_id``: its topmost paused
        (or interrupted) ancestor, whose task resumes it (:mod:`.subworkflow`)."""
        return subworkflow.resume_target(self.store, execution_id)

    def pause(self, execution_id: str, origin: str | None = None) -> Execution:
        """Pause an execution running in this process and its running child executions,
        as Mistral's pause: each starts no new task and stops PAUSED once its running
        tasks end (readers show it PAUSED at once: :mod:`.pause_views`).  Pausing a
        child pauses its parent the same way.  :meth:`resume` continues them.

        Another process's execution (a CLI run, a conductor's), or one not started yet
        (PENDING), gets a pause request in the executions database, which its engine
        reads before it starts its next tasks (:mod:`.pause_requests`).

        :param origin: given (:data:`~.executions.ORIGIN_API`), only an execution
            started from there may be paused
        A PAUSED execution is left as it is (its record returned), as Mistral's.

        :raises Conflict: the execution is not running (it ended or was interrupted), or
            not started from ``origin``; nothing is changed
        """
        pause_requests.check_origin(self.store, execution_id, origin)
        paused = self.store.get(execution_id)
        if paused.state == "PAUSED":
            return paused  # Mistral's pause of a paused workflow does nothing
        if execution_id not in self._live:
            return pause_requests.ask(self.store, execution_id)
        pause_requests.check_pausable(self.store.get(execution_id))
        subworkflow.pause_family(self.store, self._live, execution_id)
        # Recorded too, so readers show it PAUSED at once (:mod:`.pause_views`).
        return pause_requests.note(self.store, execution_id)

    def cancel(self, execution_id: str, message: str | None = None, origin: str | None = None,
               state: str = cancels.CANCELLED) -> Execution:
        """Cancel an execution and its sub-workflows (or stop it alone in ``state``, its
        output evaluated now), as Mistral's (:mod:`.cancels`); Conflict when ``origin`` is
        given and it was not started there."""
        pause_requests.check_origin(self.store, execution_id, origin, cancels.verb(state))
        return cancels.cancel(self.store, execution_id, message, self._live, state,
                              lambda: self.stopped_output(execution_id, state, message))

    def ended(self, execution_id: str, origin: str | None = None) -> Execution | None:
        """Its record when it has ended (a resume returns it unchanged, as Mistral's)."""
        return cancels.ended(self.store, execution_id, origin)

    def _evaluated_env(self, env: Mapping[str, Any]) -> dict[str, Any]:
        """The execution's environment with the expressions in its values evaluated, once,
        over the environment as given (``env()``), as Mistral evaluates it."""
        try:
            return dict(expressions.Evaluator(
                {}, None, None, self._expression_limits(),
                {"env": lambda: dict(env)}).evaluate(dict(env)))
        except exceptions.ExpressionError as exc:
            raise exceptions.InvalidInput(
                f"The execution's environment holds an expression that cannot be evaluated "
                f"over it: {exc}") from exc

    def _with_vars(self, workflow: workbook_model.WorkflowSpec, ctx: dict[str, Any],
                   env: Mapping[str, Any], execution: Mapping[str, Any]) -> dict[str, Any]:
        """The initial context of an execution: inputs ``ctx`` and the workflow's vars."""
        try:
            return atoms.start_context(workflow, ctx, lambda given: expressions.Evaluator(
                given, None, execution, self._expression_limits(), {"env": lambda: dict(env)}))
        except exceptions.ExpressionError as exc:
            raise exceptions.InvalidInput(
                f"Workflow {workflow.full_name!r}: its 'vars' cannot be evaluated over these "
                f"inputs: {exc}") from exc

    def _queries(self, catalog: Catalog) -> ExecutionQueries:
        """``executions()`` and ``tasks(id)`` over this runner's executions database."""
        def spec_of(name: str) -> dict[str, Any]:
            found = catalog.lookup(name)
            return {} if found is None else {"version": "2.0", **found.raw}

        return ExecutionQueries(self.store, self._expression_limits().max_items, spec_of)

    def _expression_limits(self) -> expressions.Limits:
        limit = getattr(self._action_context, "limit", None)
        if limit is None:
            return expressions.DEFAULT_LIMITS
        return expressions.Limits(max_size=limit("render_max_size"),
                                  max_items=limit("expression_max_items"),
                                  timeout=self._action_context.seconds("expression_timeout"))

    def execute(self, fd: Any, listeners: Iterable[Listener] = (),
                stop: StopRequest | None = None) -> Execution:
        """Run (or continue) the execution of flow detail ``fd`` to its end."""
        if (failed := run_outcomes.unrecorded_failure(self, fd)) is not None:
            return self._failed(fd, str(fd.meta["workflow"]), failed)  # ended: recorded
        with tf_engine.fewer_collections():
            engine, workflow = self.load(fd, listeners, stop)
            self._live[fd.uuid] = engine
            try:
                try:
                    engine.run()
                except Exception as exc:
                    return self._failed(fd, workflow, exc)
                return self.succeeded(fd, engine)
            finally:
                # Once its end (or pause) is recorded: a resume waiting for it to
                # settle must not have its record written over by this run's.
                self._live.pop(fd.uuid, None)
                self.store.backend.forget(fd.uuid)  # its rows are not kept in memory

    def load(self, fd: Any, listeners: Iterable[Listener] = (),
             stop: StopRequest | None = None, backend: Any = None,
             guard: Callable[[], bool] | None = None) -> tuple[Any, str]:
        """The engine that runs (or continues) flow detail ``fd``, and its workflow's name.

        A conductor (:mod:`tripleo_flow.engine.jobs.conductor`) runs it; :meth:`succeeded` and
        :meth:`record_failure` then complete the execution's record.

        :param backend: the persistence the engine writes through (default: the
            executions database; a conductor's can be fenced off it)
        :param guard: asked right before the engine starts tasks: False, and they do
            not start (left for whoever continues the execution); a conductor's says
            whether it still holds the job's claim.  Compiled (TaskFlow) engines only:
            a state-machine run checks nothing before its tasks start
        """
        meta = fd.meta or {}
        catalog = self._catalog()
        workflow = catalog.get(meta["workflow"])
        ctx = workbook_model.apply_inputs(workflow, meta.get("input") or {})
        with self._guard:
            learned = fd.uuid in self._learned
            self._learned.discard(fd.uuid)
        if not learned:  # started elsewhere, or resumed: as :meth:`start` does
            self._learn_secrets(ctx.get("plan"))
        engine_pool, item_pool = self._pools()
        listeners = tuple(listeners)

        def on_progress(task_name: str, details: dict[str, Any],
                        typed: task_progress.Progress) -> None:
            event = ProgressEvent(fd.uuid, workflow.full_name, task_name, "progress",
                                  clock.time(), progress=dict(details), report=typed)
            for listener in listeners:
                listener(event)

        journal = self._journal(fd.uuid)
        action_context = with_run(self._action_context, undo_journal=journal,
                                  api_user=meta.get("origin") == ORIGIN_API,
                                  **({} if stop is None else {"stop_check": stop.check}))
        runtime = atoms.Runtime(catalog.action_lookup(self._actions), action_context,
                                item_pool,
                                execution_scope.execution_model(
                                    fd, workflow.full_name, workflow.raw, ctx),
                                on_progress if listeners else None,
                                plan_code_allowed=self._allow_plan_code
                                or meta.get("origin") != ORIGIN_API,
                                outbound_allowed=self._allow_outbound
                                or meta.get("origin") != ORIGIN_API,
                                expression_limits=self._expression_limits(),
                                scope=execution_scope.Scope(
                                    self._evaluated_env(meta.get("env") or {})
                                    if meta.get("evaluate_env", True) else meta.get("env"),
                                    fd.uuid),
                                stop_check=None if stop is None else stop.check,
                                undo_journal=journal,
                                children=subworkflow.child_runs(self, fd, listeners, stop,
                                                                catalog.lookup),
                                async_actions=self.store.async_actions,
                                queries=self._queries(catalog))
        # A resumed execution is no longer paused (a later suspension may be another's).
        self.store.update_meta(fd, pid=os.getpid(), host=socket.gethostname(), paused_at=None)
        pause = pause_requests.check_for(self.store, fd)  # and forget its own request
        ctx = self._with_vars(workflow, ctx, runtime.scope.env, runtime.execution)
        engine: Any
        is_async = compiler.asynchronous(runtime.actions)
        if meta.get("target") is None and workflow.type == "direct" and (
                compiler.runs_as_state_machine(workflow, is_async)
                or compiler.takes_fail(workflow)
                or compiler.starts_children(workflow, catalog, is_async)):
            engine = state_machine.Machine(workflow, runtime, fd, backend or self.store.backend,
                                           ctx, engine_pool)
            engine.pause_check = pause
            runtime.scope.attach(engine, fd, engine.atom_names, self.store.backend.flush)
            if listeners:
                progress_events.listen(engine, fd.uuid, workflow.full_name, listeners)
            return engine, workflow.full_name
        compiled = compiler.compile_workflow(workflow, catalog, runtime, meta.get("target"))
        start = {"state": atoms.SUCCESS, "ctx": ctx, "next": ["*"]}
        loaded: list[Any] = []
        engine = tf_engine.load(
            compiled.flow, store={atoms.input_symbol(""): start}, flow_detail=fd,
            book=self.store.book(), backend=backend or self.store.backend, engine="parallel",
            executor=engine_pool, guard=pause.guard(
                lambda: loaded[0].suspend(), guard,
                pause_requests.ends_run(lambda: loaded[0], compiler.END_ATOM)),
            on_refused=lambda names: pause.unstarted(loaded[0], names))
        loaded.append(engine)
        engine.pause_check = pause
        runtime.scope.attach(engine, fd, compiled.atoms, self.store.backend.flush)
        engine.workbook_atoms = compiled.atoms  # what undoes a completed child execution
        if listeners:
            progress_events.listen(engine, fd.uuid, workflow.full_name, listeners)
        return engine, workflow.full_name

    def child_runner(self) -> Runner:
        """A runner of this one's catalog and store on pools of its own (a child
        execution waited for on the parent's pools could starve them)."""
        child = Runner(self._catalog, self._actions, self._action_context, self.store,
                       self._threads, self._allow_plan_code, self._allow_outbound)
        child._live = self._live  # one map of running engines: a pause finds the children
        return child

    def succeeded(self, fd: Any, engine: Any) -> Execution:
        """Record the end of the finished engine of ``fd``
        (:func:`.run_outcomes.succeeded`)."""
        return run_outcomes.succeeded(self, fd, engine)

    def _journal(self, execution_id: str) -> undo_journal.ExecutionUndoJournal:
        return undo_journal.ExecutionUndoJournal(self.store.backend.engine, execution_id,
                                                 self.store.backend.redactor)

    def _learn_secrets(self, plan: Any) -> None:
        """Tell the executions database the secrets of the plan an execution names and
        of the configuration, so it masks them wherever they appear
        (:mod:`tripleo_flow.engine.store.redaction`)."""
        redactor = self.store.backend.redactor
        # The hooks of the layer above: the secret values of its configuration ...
        config_secrets = getattr(self._action_context, "config_secrets", None)
        if config_secrets is not None:
            redactor.learn(config_secrets())
        # ... and a plan's secrets, which its context knows.
        plan_secrets = getattr(self._action_context, "plan_secrets", None)
        if not isinstance(plan, str) or plan_secrets is None:
            return
        redactor.learn(plan_secrets(plan))

    def _failed(self, fd: Any, workflow: str, exc: BaseException) -> Execution:
        failed_task, cause, reverted = self.record_failure(fd, exc)
        raise exceptions.WorkflowFailed(workflow, failed_task, cause, reverted) from exc

    def recorded_unrecorded_failure(self, fd: Any) -> bool:
        """Whether ``fd`` is an execution whose run failed, its end not recorded
        (:func:`.run_outcomes.unrecorded_failure`), and its end is now recorded."""
        failed = run_outcomes.unrecorded_failure(self, fd)
        if failed is not None:
            self.record_failure(fd, failed)
        return failed is not None

    def record_failure(self, fd: Any, exc: BaseException) -> tuple[str | None, str, bool]:
        """Record why the engine of ``fd`` failed: ``(failed task, cause, reverted)``
        (:func:`.run_outcomes.record_failure`)."""
        return run_outcomes.record_failure(self, fd, exc)

    def stopped_output(self, execution_id: str, state: str, message: str | None) -> Any:
        """The output of ``execution_id`` stopped now in ``state`` with ``message``
        (:func:`.run_outcomes.stopped_output`)."""
        return run_outcomes.stopped_output(self, execution_id, state, message)

    def wait_background(self, timeout: float | None = None) -> None:
        """Wait for executions started with ``wait=False`` (tests, shutdown)."""
        for thread in list(self._background):
            clock.join(thread, timeout)
        self._background = [t for t in self._background if t.is_alive()]

    def close(self) -> None:
        """Wait for the executions running here; one whose tasks only wait for clients
        to complete their asynchronous actions is suspended instead (SUSPENDED: a
        completion, or ``execution resume``, continues it)."""
        self._closing = True
        while self._background:
            for engine in list(self._live.values()):
                if getattr(engine, "waits_for_clients", lambda: False)():
                    engine.suspend()
            self.wait_background(0.2)
        with self._guard:
            if self._engine_pool is not None:
                self._engine_pool.shutdown()
            if self._item_pool is not None:
                self._item_pool.shutdown()
            self._engine_pool = self._item_pool = None
