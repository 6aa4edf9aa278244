"""Workflow executions: ``client.executions`` (create, create_once, get, list, page,
pause, resume, cancel, stop, update, follow), as python-mistralclient's
``executions`` manager.

With ``[jobboard] backend_url`` set, :meth:`ExecutionManager.create` records the
execution and posts it as a job instead of running it; ``tripleo-flow conductor``
processes (:class:`~tripleo_flow.client.jobs.ConductorManager`) claim and run the jobs,
and :meth:`ExecutionManager.follow` reads its record until it ends.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client import execution_updates
from tripleo_flow.client.base import Manager
from tripleo_flow.client.jobs import ENDED, _emit
from tripleo_flow.common import clock, jsonvalues
from tripleo_flow.core.deploy import lifecycle_options
from tripleo_flow.engine.store.execution_pages import UUID_PATTERN, check_page
from tripleo_flow.engine.store.states import CANCELLED
from tripleo_flow.workspace import start_gate

if TYPE_CHECKING:
    import builtins

    from tripleo_flow.client.paths import ServerPaths
    from tripleo_flow.engine.compile.runner import Listener
    from tripleo_flow.engine.store.executions import Execution

#: What an execution id looks like (the HTTP API's schema of a page marker).
EXECUTION_ID_PATTERN = UUID_PATTERN


class ExecutionManager(Manager):
    """Run workflows and act on their executions (``client.executions``)."""

    def create(self, name: str, inputs: Mapping[str, Any] | None = None, wait: bool = True,
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
        :raises InvalidInput: with ``api_user``, an action execution (``action:NAME``) or
            a one-action workflow of an action ``[api] action_executions_allowed`` does
            not list (:mod:`~tripleo_flow.client.action_executions`)
        :raises WorkflowFailed: when it failed (its completed tasks were reverted)
        :raises InvalidInput: ``inputs`` nest deeper than ``[limits] yaml_max_depth``, hold
            more than ``yaml_max_nodes`` values, a non-finite number or a lone surrogate,
            or take over ``[limits] input_max_size`` bytes (``env`` too), before the
            execution is recorded
        """
        from tripleo_flow.engine.compile.runner import check_env
        from tripleo_flow.engine.store.executions import ORIGIN_API

        jsonvalues.check_value(dict(inputs or {}), self._session.limit("yaml_max_depth"),
                               self._session.limit("yaml_max_nodes"), "The workflow input")
        lifecycle_options.check_inputs(name, inputs or {})  # tripleoclient's names
        check_env(env)
        if env is not None:
            jsonvalues.check_value(dict(env), self._session.limit("yaml_max_depth"),
                                   self._session.limit("yaml_max_nodes"),
                                   "The execution's env")
        origin = ORIGIN_API if api_user or paths is not None else None
        action = None
        if origin == ORIGIN_API:  # before any server path is read or made
            from tripleo_flow.client.action_executions import check_api_start

            action = check_api_start(self._session, name)
        if paths is not None:
            inputs = self._session.server_inputs(name, inputs or {}, paths)
        else:
            inputs = self._session.absolute_paths(name, inputs or {})
        if origin == ORIGIN_API:
            from tripleo_flow.client.heat import check_heat_launch_place

            check_heat_launch_place(self._session.conf, action, inputs)
        with start_gate.starting(self._session.data_dir):  # no restore swaps the database meanwhile
            return self._start(name, inputs, wait, listeners, target, detach, origin, env,
                               evaluate_env)

    def _start(self, name: str, inputs: dict[str, Any], wait: bool,
               listeners: Iterable[Listener] | None, target: str | None, detach: bool,
               origin: str | None, env: Mapping[str, Any] | None,
               evaluate_env: bool) -> Execution:
        """:meth:`create` once its inputs are checked."""
        runner = self._session.runner()
        if self._session.jobboard_settings() is not None:
            fd = runner.start(name, inputs, target, origin, env, local=False,
                              evaluate_env=evaluate_env)
            self._session.post_execution(fd)
            if wait:
                return self.follow(fd.uuid, listeners or ())
            return runner.store.get(fd.uuid)
        if wait or not detach:
            return runner.run(name, inputs, target, listeners or (), wait=wait, origin=origin,
                              env=env, evaluate_env=evaluate_env)
        fd = runner.start(name, inputs, target, origin, env, evaluate_env=evaluate_env)
        self._session.spawn_worker(fd.uuid)
        return runner.store.get(fd.uuid)


    def create_once(self, key: str, name: str, inputs: Mapping[str, Any] | None = None,
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
        state = self._session.opened()
        if "idempotency" not in state:
            state["idempotency"] = idempotency.IdempotencyKeys(
                lambda: self._session.executions_engine, self._session.idempotency_ttl())
        keys: idempotency.IdempotencyKeys = state["idempotency"]
        execution_id = keys.start(key, fingerprint, lambda: self.create(
            name, inputs, wait=False, target=target, paths=paths, api_user=api_user,
            env=env, evaluate_env=evaluate_env).id, owner=owner)
        return self.get(execution_id)


    def get(self, execution_id: str) -> Execution:
        """An execution's record; PAUSED at once once a pause was asked
        (:mod:`~tripleo_flow.engine.store.pause_views`)."""
        from tripleo_flow.engine.store import pause_views

        store = self._session.execution_reader()
        return pause_views.shown_one(store, store.get(execution_id))

    def list(self, workflow: str | None = None) -> list[Execution]:
        """Every execution (of ``workflow``: its full name, or without its workbook),
        oldest first, read a page of ``[api] executions_page_max`` at a time (each with
        SQL ``LIMIT``); :meth:`page` reads one page."""
        from tripleo_flow.engine.store import pause_views

        store = self._session.execution_reader()
        executions: list[Execution] = []
        marker = None
        while True:
            page, more = store.page(self._session.conf.api.executions_page_max, marker, workflow)
            executions += pause_views.shown(store, page)
            if not (more and page):
                return executions
            marker = page[-1].id

    def page(self, limit: int | None = None, marker: str | None = None,
             workflow: str | None = None, sort_dir: str = "asc",
             ) -> tuple[builtins.list[Execution], str | None]:
        """One page of executions, oldest first (``sort_dir`` ``desc``: newest first),
        and the marker of the next page (None: this was the last).

        :param limit: most executions on the page (``[api] executions_page_size`` when
            None; at most ``[api] executions_page_max``); fewer when their records
            take over ``[api] executions_page_max_bytes`` (one at least)
        :param marker: the marker the previous page returned
        :raises InvalidInput: a bad limit, marker or sort_dir
        """
        api = self._session.conf.api
        limit = check_page(api.executions_page_size if limit is None else limit,
                           api.executions_page_max, sort_dir)
        from tripleo_flow.engine.store import pause_views

        store = self._session.execution_reader()
        page, more = store.page(limit, marker, workflow, sort_dir == "desc",
                                api.executions_page_max_bytes)
        return pause_views.shown(store, page), (page[-1].id if more and page else None)


    def resume(self, execution_id: str, listeners: Iterable[Listener] | None = None,
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
        with start_gate.starting(self._session.data_dir):  # no restore swaps the database
            return self._resume(execution_id, listeners, wait, detach, api_user)

    def _resume(self, execution_id: str, listeners: Iterable[Listener] | None,
                wait: bool, detach: bool, api_user: bool) -> Execution:
        """:meth:`resume` inside the start gate."""
        from tripleo_flow.engine.store.executions import ORIGIN_API

        runner = self._session.runner()
        origin = ORIGIN_API if api_user else None
        ended = runner.ended(execution_id, origin)
        if ended is not None:  # as Mistral's resume of a workflow that is not paused
            return ended
        # A sub-workflow its paused parent waits for: the parent resumes, then it.
        target = runner.resume_target(execution_id)
        if target != execution_id:
            self._resume(target, listeners, wait, detach, api_user)
            return runner.store.get(execution_id)
        if self._session.jobboard_settings() is None:
            if wait or not detach:
                return runner.resume(execution_id, listeners or (), wait=wait, origin=origin)
            runner.resumable(execution_id, origin)
            self._session.spawn_worker(execution_id)
            return runner.store.get(execution_id)
        with self._session.context.locks.hold_execution(execution_id):  # one job per resume
            fd = runner.resumable(execution_id, origin)
            if self._session.execution_job(execution_id) is not None:
                raise exceptions.Conflict(
                    f"Execution {execution_id!r} already waits on the jobboard: a conductor "
                    "will continue it.")
            self._session.post_execution(fd)
        if wait:
            return self.follow(execution_id, listeners or ())
        return runner.store.get(execution_id)

    def pause(self, execution_id: str, api_user: bool = False) -> Execution:
        """Pause a running execution and its running sub-workflow executions, as
        Mistral's pause: they start no new task and stop PAUSED once their running
        tasks end; :meth:`resume` continues them.  One run by another
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

        runner = self._session.runner()
        return pause_views.shown_one(
            runner.store, runner.pause(execution_id, ORIGIN_API if api_user else None))

    def cancel(self, execution_id: str, message: str | None = None,
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
        runner = self._session.runner()
        return pause_views.shown_one(
            runner.store, runner.cancel(execution_id, message, ORIGIN_API if api_user else None))

    def follow(self, execution_id: str, listeners: Iterable[Listener] = (),
               timeout: float | None = None) -> Execution:
        """Wait for an execution that runs elsewhere (a conductor) to end.

        Task changes seen in its record go to ``listeners`` as progress events.

        A cancelled execution is returned once its running tasks ended (CANCELLED).

        :raises WorkflowFailed: when it failed (its completed tasks were reverted)
        :raises Conflict: it had not ended after ``timeout`` s
        """
        settings = self._session.jobboard_settings()
        poll = settings.poll_interval if settings is not None \
            else float(self._session.conf.jobboard.poll_interval)  # a worker runs it: the same look
        store = self._session.runner().store
        listeners = tuple(listeners)
        seen: dict[str, tuple[str, Any, bool]] = {}
        deadline = None if timeout is None else clock.monotonic() + timeout
        while True:
            execution = store.get(execution_id)
            if listeners:
                for task in store.tasks(execution_id):
                    _emit(execution, task, seen, listeners)
            if execution.state in (*ENDED, CANCELLED) and execution.finished_at is not None:
                break
            if deadline is not None and clock.monotonic() > deadline:
                raise exceptions.Conflict(
                    f"Execution {execution_id!r} has not ended after {timeout:g} s "
                    f"({execution.state});", hints=[exceptions.Hint(
                        "follow it with", "execution.show", {"execution": execution_id})])
            clock.sleep(poll)
        if execution.state not in ("SUCCESS", CANCELLED):  # cancelled: not a failure
            raise exceptions.WorkflowFailed(execution.workflow, execution.failed_task,
                                            execution.error or execution.state,
                                            execution.reverted)
        return execution

    def stop(self, execution_id: str, state: str, message: str | None = None,
             api_user: bool = False) -> Execution:
        """Stop a running execution in ``state`` ERROR or SUCCESS, as Mistral's
        ``execution-update -s ERROR|SUCCESS``
        (:func:`~tripleo_flow.client.execution_updates.stop` says how)."""
        return execution_updates.stop(self._session, execution_id, state, message, api_user)

    def update(self, execution_id: str, state: str | None = None,
               state_info: str | None = None, env: Mapping[str, Any] | None = None,
               api_user: bool = False, detach: bool = False,
               description: str | None = None) -> Execution:
        """Change an execution's state, env or description as Mistral's
        ``PUT /v2/executions/<id>``
        (:func:`~tripleo_flow.client.execution_updates.update` says how)."""
        return execution_updates.update(self, self._session, execution_id, state, state_info,
                                        env, api_user, detach, description)
