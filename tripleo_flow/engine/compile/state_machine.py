"""Direct workflows run as Mistral's state machine: a task execution each time a
transition fires.

One static TaskFlow graph per workflow (:mod:`.compiler`) gives every task one
atom, so it cannot express what Mistral's direct workflow controller does:
a task reached by three transitions runs three times, a cycle of transitions
repeats tasks (Mistral's way to poll), a ``join`` waits for ``all``, ``one`` or N
inbound transitions and fails once it can no longer fire, and the engine
commands of a transition list apply in list order.  A direct workflow that
needs any of that (:func:`~.compiler.runs_as_state_machine`) runs here instead:

* TaskFlow still runs what it is good at: each task execution is an
  :class:`~.action_atom.ActionAtom` (its action, with-items, timeout, publish,
  transitions, its own undo on failure) whose outcome is a TaskFlow atom detail
  of the execution's flow detail (:mod:`.machine_records`); the completed ones
  are reverted newest first when the workflow fails, as TaskFlow reverts a graph;
  progress events go through the same ``atom_notifier``.
* The machine creates task executions as transitions fire and runs each wave of
  ready ones on the runner's pool (one alone runs in the machine's thread).  The
  atom detail of the N-th execution of task ``poll`` is ``poll`` then ``poll[N]``.
  Each completed one is persisted with the targets it fired, in order
  (:data:`~.atoms.STEPS`) and its completion index, so a resumed execution
  (``kill -9``, pause) replays the completions in that order, which creates the
  same task executions again, and runs those that had not completed.
* Data flows as Mistral's ``data_flow`` says: a task execution's context is the
  outbound context of the one that fired it; a join's merges its inbound
  branches (:func:`~.atoms.merge_contexts`); the workflow's output is evaluated
  over the merged contexts of the task executions that fired nothing.
* Errors (:mod:`.machine_errors`): as in Mistral, an error no ``on-error``
  transition handles lets the other task executions go on (their transitions
  fire, a join the failed task can no longer reach fails); once nothing is left
  to run, the completed ones are reverted and the workflow fails: reverting is our
  deliberate difference from Mistral (which never reverts), kept for both engines
  (see ``tests/unit/engine/test_mistral_conformance.py``).  A ``fail`` command
  stops new task executions at once, after the targets listed before it started;
  the task that took it keeps its own state.

* A task execution whose asynchronous action (``std.async_noop``) waits for a
  client is parked, holding no thread, and run again once it is completed or its
  ``timeout`` passes (:mod:`.machine_waits`, :mod:`.async_tasks`); a direct workflow
  with such a task runs here for that reason alone.

Not here (the compiled graph runs them): reverse workflows.  A ``workflow:``
task runs its workflow as a child execution (:mod:`.subworkflow`); when that child
pauses, the task execution stays RUNNING and the execution pauses (resumed, the task
execution runs again and resumes its child).  ``pause-before`` pauses
the execution before the task execution starts; the pause is recorded with it
(:data:`.machine_pauses.PAUSED_BEFORE`), so a resumed execution starts it instead of
pausing again.
A pause asked by another process (``pause_check``: :mod:`.pause_requests`) is read
before task executions start: they wait, unstarted, for the execution's resume.
While a pause is pending the run does not end, and a ``fail`` or ``succeed``
command waits for the resume (:mod:`.machine_pauses`), as in Mistral.
A join runs once per execution: a transition reaching it after it ran is ignored
(Mistral's one join task execution per workflow execution).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Generator, Iterator, Mapping
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

from taskflow import states, task
from taskflow.types import notifier

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import (
    action_atom,
    async_actions,
    atoms,
    machine_cancels,
    machine_ends,
    machine_errors,
    machine_joins,
    machine_pauses,
    machine_records,
    machine_waits,
    subworkflow,
)
from tripleo_flow.engine.lang import workbook_validator
from tripleo_flow.engine.lang.workbook_model import TaskSpec, WorkflowSpec
from tripleo_flow.engine.store.states import FAILED_AT, STARTED_AT
from tripleo_flow.exceptions import FailCommand

#: Outcome key of a task execution's place in the machine: ``{"order": completion index}``.
MACHINE = "machine"
_RETRY_STOPS = (exceptions.BreakRetry, FailCommand, exceptions.RetriesExhausted,
                exceptions.PlanCodeNotAllowed, exceptions.Interrupted)


@dataclass
class _TaskEx:
    """One task execution."""

    task: str
    name: str  # its atom detail's name
    ctx: dict[str, Any]
    triggers: list[_TaskEx] = field(default_factory=list)
    outcome: dict[str, Any] | None = None
    order: int = -1
    detail: Any = None
    join_waiting: bool = False
    #: The attempt it runs (a retry's); kept in its atom's metadata while it waits.
    attempt: int = 0
    #: While parked: the action executions it waits for, and their first deadline.
    waiting: tuple[str, ...] = ()
    deadline: float | None = None
    #: It waited and runs again (it has started already).
    again: bool = False


class Machine(machine_errors.Errors, machine_joins.Joins, machine_waits.ClientWaits,
              machine_pauses.Pauses, machine_cancels.Cancels, machine_ends.Ends):
    """The engine of one direct workflow execution run as a state machine.

    It offers what the runner and the conductor use of a TaskFlow engine:
    ``run``/``run_iter``, ``suspend``, ``storage``, ``notifier``, ``atom_notifier``.
    """

    def __init__(self, workflow: WorkflowSpec, runtime: atoms.Runtime, fd: Any, backend: Any,
                 ctx: dict[str, Any], pool: futures.Executor) -> None:
        self.workflow = workflow
        self.runtime = runtime
        self.fd = fd
        self.pool = pool
        self.notifier = notifier.Notifier()
        self.atom_notifier = notifier.Notifier()
        self.storage = machine_records.Records(fd, backend, self.notifier)
        self.atom_names: list[str] = []
        self._start_ctx = ctx
        for name, spec in workflow.tasks.items():  # task(NAME) of one not run: null
            runtime.scope.task_specs.setdefault(name, spec)
        graph = workbook_validator.successors(workflow)
        self._inbound: dict[str, list[str]] = {name: [] for name in workflow.tasks}
        for name, targets in graph.items():
            for target in dict.fromkeys(targets):
                self._inbound[target].append(name)
        self._suspend = threading.Event()
        #: Asked before task executions start: True, they wait for a resume (a pause
        #: asked by another process: :mod:`.pause_requests`).
        self.pause_check: Callable[..., bool] | None = None
        self._lock = threading.Lock()
        self._progress_lock = threading.Lock()
        self._runs: dict[str, int] = {}
        self._ready: list[_TaskEx] = []
        self._done: list[_TaskEx] = []
        self._latest: dict[str, _TaskEx] = {}
        self._joins: dict[str, _TaskEx] = {}
        self._joined: set[str] = set()
        self._ended = False
        self._failing: BaseException | None = None
        self._failed_name: str | None = None
        self._errors: list[tuple[str, BaseException]] = []
        #: Task executions created before a ``fail`` in the same transition list.
        self._forced: list[_TaskEx] = []
        #: Fired before a 'pause' in its transition list: they start though the
        #: execution pauses (Mistral's dispatcher runs the task commands before it).
        self._before_pause: list[_TaskEx] = []
        #: Task executions whose asynchronous action waits for a client (parked), and
        #: those to run again (a completion or a deadline).
        self._waiting: list[_TaskEx] = []
        self._again: list[_TaskEx] = []
        self._cancelled: list[str] = []
        #: Set by a completion in this process, a suspension: a wait ends early.
        self._wake = threading.Event()

    # -- the engine surface ------------------------------------------------------

    def compile(self) -> None:
        """Nothing (a TaskFlow engine's stage, which conductors call): the machine
        creates task executions as it runs."""

    prepare = validate = compile

    def suspend(self) -> None:
        """Start nothing more; the running task executions end, then the run stops
        SUSPENDED (pause, a conductor stopping or losing its claim).  Task executions
        waiting for a client stay RUNNING: a resumed execution waits for them again."""
        self._suspend.set()
        self._wake.set()

    def run(self) -> None:
        for _state in self.run_iter():
            pass

    def run_iter(self) -> Iterator[str]:
        self.storage.set_flow_state(states.RUNNING)
        yield states.RUNNING
        self._replay()
        async_actions.register(self.fd.uuid, self._wake)
        try:
            suspended = yield from self._loop()
        finally:
            async_actions.unregister(self.fd.uuid, self._wake)
        if suspended:
            return
        if self._end_cancelled():  # a cancelled sub-workflow's task: Mistral's end
            yield states.SUSPENDED
            return
        if self._failing is None:
            self._failing = self._unhandled()
        if self._failing is not None:
            self._revert()
            raise self._failing
        self.storage.output = self._output()
        self.storage.set_flow_state(states.SUCCESS)
        yield states.SUCCESS

    def _loop(self) -> Generator[str, None, bool]:
        """Run task executions until none is left to run: True when it suspended."""
        running: dict[futures.Future[Any], _TaskEx] = {}
        while True:
            if self._before_pause:  # started whether the pause has come or not
                starting, self._before_pause = self._before_pause, []
                for tex in starting:
                    self._start(tex)
                    running[self.pool.submit(self._execute, tex)] = tex
            if not self._suspend.is_set():
                if self._failing is None:
                    starting, self._ready = self._ready, []
                else:  # only what a transition listed before 'fail' starts
                    starting, self._forced = self._forced, []
                if any([self._pauses_before(tex) for tex in starting]) or (
                        starting and self._failing is None and self.pause_check is not None
                        and self.pause_check()):
                    self._ready[:0] = starting  # they start when the execution resumes
                    starting = []
                    self.suspend()
                if self._failing is None and not self._ended:
                    starting += self._again
                    self._again = []
                if len(starting) == 1 and not running:
                    running[self._inline(starting[0])] = starting[0]
                else:
                    for tex in starting:
                        self._start(tex)
                        running[self.pool.submit(self._execute, tex)] = tex
            if not running:
                if (self._waiting and self._failing is None and not self._ended
                        and not self._suspend.is_set()):
                    self._wait_for_clients()
                    yield states.RUNNING
                    continue
                if self._failing is not None or self._ended:
                    self._stop_waiting()
                if self._failing is not None:
                    break
                if self._suspend.is_set():
                    self.storage.set_flow_state(states.SUSPENDED)
                    yield states.SUSPENDED
                    return True
                if self._ready or self._fail_stuck_joins():
                    continue
                if self._pause_asked_at_end():
                    continue  # suspended: it ends once resumed
                break
            done, _ = clock.wait_futures(
                list(running), async_actions.POLL_INTERVAL if self._waiting else None)
            for fut in [f for f in running if f in done]:
                tex = running.pop(fut)
                exc = fut.exception()
                if exc is not None:
                    self._fail_task(tex, exc)
                elif isinstance(fut.result(), async_actions.Waiting):
                    self._park(tex, fut.result())
                elif isinstance(fut.result(), exceptions.ChildCancelled):
                    self._cancel_task(tex, fut.result())
                elif isinstance(fut.result(), exceptions.ChildPaused):
                    self._pause_for_child(tex)
                else:
                    self._complete(tex, fut.result(), live=True)
            if self._waiting:
                self._check_waiting()
            yield states.RUNNING
        return False

    # -- task executions ----------------------------------------------------------

    def _inline(self, tex: _TaskEx) -> futures.Future[Any]:
        """Run the one ready task execution in this thread (a chain, a loop)."""
        future: futures.Future[Any] = futures.Future()
        self._start(tex)
        try:
            future.set_result(self._execute(tex))
        except Exception as exc:
            future.set_exception(exc)
        return future

    def _create(self, task: str, triggers: list[_TaskEx]) -> _TaskEx:
        count = self._runs[task] = self._runs.get(task, 0) + 1
        name = task if count == 1 else f"{task}[{count}]"
        ctx = (atoms.merge_contexts([t.outcome or {} for t in triggers]) if triggers
               else dict(self._start_ctx))
        tex = _TaskEx(task, name, ctx, list(triggers))
        self.atom_names.append(name)
        self.runtime.scope.add_atom(name)
        return tex

    def _replay(self) -> None:
        """Create the start task executions, then apply the persisted completions in
        the order they happened: the same task executions are created again."""
        for name, _spec in self.workflow.tasks.items():
            if not self._inbound[name]:
                self._ready.append(self._create(name, []))
        done = sorted((ad for ad in self.fd if ad.state == states.SUCCESS
                       and isinstance(ad.results, Mapping) and MACHINE in ad.results),
                      key=lambda ad: ad.results[MACHINE]["order"])
        for ad in done:
            tex = next((t for t in self._ready if t.name == ad.name), None)
            if tex is None:
                raise exceptions.TripleoFlowError(
                    f"Cannot resume: task execution {ad.name!r} was recorded but the "
                    f"workflow {self.workflow.full_name!r} no longer leads to it (was its "
                    "workbook changed?). Run the workflow again.")
            self._ready.remove(tex)
            tex.detail = ad
            self._complete(tex, dict(ad.results), live=False)
        self._replay_failures()
        for tex in self._answered(self._ready, self.fd.uuid):
            self._ready.remove(tex)
            self._again.append(tex)

    def _start(self, tex: _TaskEx) -> None:
        if tex.again:  # it waited for a client: it has started already
            tex.again = False
            return
        detail = tex.detail = tex.detail or self.storage.detail(tex.name)
        if not tex.attempt:  # a resumed execution: the attempt it waited in
            tex.attempt = int((detail.meta or {}).get("attempt") or 1)
        detail.state = states.RUNNING
        detail.failure = None
        detail.meta = {**(detail.meta or {}), STARTED_AT: clock.time()}
        self.storage.save(detail)
        self.atom_notifier.notify(states.RUNNING, {"task_name": tex.name,
                                                   "task_uuid": detail.uuid, "result": None})

    def atom_for(self, name: str) -> action_atom.ActionAtom:
        """The atom of task execution ``name`` (``poll`` or ``poll[N]``): what undoes
        it once this (sub-workflow) execution completed."""
        return self._atom(_TaskEx(name.split("[", 1)[0], name, {}))

    def _atom(self, tex: _TaskEx) -> action_atom.ActionAtom:
        spec = self.workflow.tasks[tex.task]
        links = atoms.Links(prefix="", preds=(), start=True, machine=True,
                            retry=spec.retry is not None)
        atom = action_atom.ActionAtom(tex.name, spec, links, self.runtime) \
            if spec.workflow is None else subworkflow.SubWorkflowAtom(
                tex.name, spec, links, self.runtime, workbook=self.workflow.workbook)
        atom.notifier.register(task.EVENT_UPDATE_PROGRESS,
                               functools.partial(self._store_progress, tex.name))
        return atom

    def _store_progress(self, name: str, _event: str, details: dict[str, Any]) -> None:
        """Keep what the task's action reports while it runs, as TaskFlow's engine keeps
        it (the atom's ``progress`` and ``progress_details``): the execution's task
        records and its HTTP event stream read it there."""
        details = dict(details)
        fraction = details.pop("progress", 0.0)
        with self._progress_lock:
            self.storage.update_atom_metadata(name, {
                "progress": fraction,
                "progress_details": {"at_progress": fraction, "details": details}
                if details else None})

    def _kwargs(self, tex: _TaskEx, attempt: int) -> dict[str, Any]:
        with self._lock:
            latest = {atoms.task_symbol(name): other.outcome
                      for name, other in self._latest.items() if other.outcome is not None}
        return {**latest, atoms.input_symbol(""): {"state": atoms.SUCCESS, "ctx": tex.ctx,
                                                   "next": ["*"]},
                atoms.retry_symbol(tex.name): attempt}

    def _execute(self, tex: _TaskEx
                 ) -> dict[str, Any] | async_actions.Waiting | exceptions.ChildPaused:
        """Run the task execution, retrying it as its ``retry`` policy says (TaskFlow's
        retry controller :class:`~.action_atom.DelayedTimes` decides in the graph);
        :class:`~.async_actions.Waiting` when its action waits for a client."""
        atom = self._atom(tex)
        spec = self.workflow.tasks[tex.task]
        attempt = tex.attempt or 1
        while True:
            try:
                return dict(atom.execute(**self._kwargs(tex, attempt)))
            except async_actions.Waiting as waiting:
                tex.attempt = max(attempt, atom._attempt_no)  # continue-on moves it on
                return waiting
            except exceptions.ChildPaused as paused:
                tex.attempt = max(attempt, atom._attempt_no)
                return paused
            except Exception as exc:
                attempt = max(attempt, atom._attempt_no)
                if not self._retries(spec, exc, attempt):
                    raise
                self.atom_notifier.notify(states.RETRYING, {"task_name": tex.name,
                                                            "task_uuid": tex.detail.uuid,
                                                            "result": None})
                attempt += 1
                delay = spec.retry.delay if spec.retry is not None else 0
                if isinstance(delay, (int, float)) and delay:
                    clock.sleep(delay)

    @staticmethod
    def _retries(spec: TaskSpec, exc: Exception, attempt: int) -> bool:
        if spec.retry is None or isinstance(exc, _RETRY_STOPS):
            return False
        count = spec.retry.count
        return not isinstance(count, int) or attempt < count + 1

    def _complete(self, tex: _TaskEx, outcome: dict[str, Any], live: bool) -> None:
        """Record a completed task execution, then apply the targets it fired in order."""
        tex.outcome = outcome
        self._note_cancelled(tex, outcome)
        tex.order = len(self._done)
        self._done.append(tex)
        with self._lock:
            self._latest[tex.task] = tex
        if live:
            outcome[MACHINE] = {"order": tex.order}
            self._record(tex, states.SUCCESS, outcome, results=outcome)
        # Replayed: the scope rebuilt its globals and unhandled errors from the details.
        if tex.task in self._joins and self._joins[tex.task] is tex:
            del self._joins[tex.task]
        created, pausing = len(self._ready), False
        for target, message in outcome.get(atoms.STEPS) or []:
            if self._ended or self._failing is not None:
                break
            if target in ("fail", "succeed") and self._command_waits(live):
                break  # applied once resumed (replayed), as Mistral's paused workflow
            if target == "fail":
                self._failing = FailCommand(str(message))
                self._failed_name = tex.name
                self._forced = self._ready[created:]
                break
            if target == "succeed":  # only what was listed before it still starts
                self._ended = True
                self._ready = self._ready[created:]
                self._joins.clear()
                break
            if target == "pause":
                applied = self._pause_command(live)
                if applied is None:
                    continue  # replayed: applied when it completed
                pausing = applied
                break
            if target == "noop":
                continue
            self._fire(tex, target)
        self._check_joins()
        if pausing:  # what it fired before the 'pause' (a join it completed) starts
            self._before_pause += self._ready[created:]
            del self._ready[created:]

    def _fire(self, source: _TaskEx, target: str) -> None:
        if self.workflow.tasks[target].join is None:
            self._ready.append(self._create(target, [source]))
            return
        if target in self._joined:
            return  # a join runs once per execution
        join = self._joins.get(target)
        if join is None:
            join = self._joins[target] = self._create(target, [])
            join.join_waiting = True
        join.triggers.append(source)

    # -- ends ------------------------------------------------------------------------

    def _record(self, tex: _TaskEx, state: str, result: Any, **values: Any) -> None:
        """Persist the end of a task execution, then tell the listeners."""
        tex.detail.state = state
        for key, value in values.items():
            setattr(tex.detail, key, value)
        if state == states.FAILURE:  # no outcome (its times) but the failure is kept
            tex.detail.meta = {**(tex.detail.meta or {}), FAILED_AT: clock.time()}
        self.storage.save(tex.detail)
        self.atom_notifier.notify(state, {"task_name": tex.name, "task_uuid": tex.detail.uuid,
                                          "result": result})
