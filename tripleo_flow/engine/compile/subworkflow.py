"""Sub-workflows run as executions of their own, as Mistral runs them.

A ``workflow:`` task the compiled graph cannot inline (one with ``with-items``,
``retry``, ``timeout`` or ``fail-on``, one calling a workflow that loops or that
is already being inlined above it, any in a workflow run by the state machine)
is a :class:`SubWorkflowAtom`: the atom of an action task whose "action" is the
run of a child execution.  So the task's policies apply as for an action:
``with-items`` starts one child execution per item (``concurrency`` at once),
each retry attempt starts a new one, ``timeout`` fails the task (the child stops
at its next task and reverts), and the task's result is the child's output.

A child execution is recorded like any other, with ``parent_id`` (the parent
execution) and ``parent_task`` (the parent's task execution, its atom name) in
its record, as Mistral links a sub-workflow execution to its
``task_execution_id``.  Its id is derived from the parent's id, the task
execution, the attempt and the item, so a parent resumed after ``kill -9``
finds the child it had started: a completed one gives its output again (its
side effects are not run twice), an interrupted or paused one is resumed, a failed
one fails the task again.

A child that pauses (its own ``pause`` command, or :meth:`~.runner.Runner.pause`)
pauses its parent, as Mistral's does: the task raises
:class:`~tripleo_flow.exceptions.ChildPaused`, which neither ``on-error`` nor
``retry`` handles; the state machine keeps the task execution RUNNING and suspends
the parent (PAUSED).  Resuming the parent runs the task again, which resumes the
child (found by its id); the other items of a ``with-items`` task run to their end
first and are read back then.  When the parent reverts, a completed child's tasks are
undone, newest first, with the child's own atoms.

A workflow named by an expression (``workflow: <% $.wf_name %>``, as Mistral
allows) is known only when its task runs: such a task always runs its workflow
as a child execution.  The name is evaluated once per task execution (with the
task's context, not an item's, as Mistral's), and looked up as a written name is,
in the calling workflow's workbook first; a name that gives no workflow fails
the task.

A reverse workflow's ``task_name`` (``workflow: wf task_name=task2``, an input the
workflow does not declare) is the task its child execution runs to, as Mistral
passes it as the execution's ``task_name`` parameter: such a task also runs its
workflow apart.
"""

from __future__ import annotations

import dataclasses
import signal
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from taskflow import states
from taskflow.types import failure

from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import action_atom, child_errors, item_runs
from tripleo_flow.engine.compile.interrupt import StopRequest
from tripleo_flow.engine.lang import expressions, workbook_validator
from tripleo_flow.engine.lang.workbook_model import TaskSpec, WorkflowSpec
from tripleo_flow.engine.lang.workbook_validator import TASK_NAME
from tripleo_flow.engine.store.executions import CHILDREN, PAUSED
from tripleo_flow.engine.store.states import CANCELLED, ERROR
from tripleo_flow.exceptions import TaskFailed

_NAMESPACE = uuid.UUID("4f9b5a52-6c1e-4f0e-9a57-3c7d1b2e8d10")
#: How deep child executions may nest (a workflow calling itself without end).
MAX_DEPTH = 64


def child_id(parent_id: str, task_atom: str, attempt: int, item: int | None,
             rerun: int = 0) -> str:
    """The id of the child execution that ``task_atom`` of execution ``parent_id``
    starts for its ``attempt`` and ``item``: the same again after a resume.  ``rerun``
    counts the task's reruns (:mod:`.task_reruns`): each starts new child executions,
    as Mistral's rerun of a failed ``workflow:`` task does."""
    key = f"{parent_id}/{task_atom}/{attempt}/{item}" + (f"/rerun {rerun}" if rerun else "")
    return str(uuid.uuid5(_NAMESPACE, key))


def dynamic(spec: TaskSpec) -> bool:
    """Whether the ``workflow:`` task ``spec`` names its workflow with an expression."""
    return expressions.has_expression(spec.workflow or "")


def split_target(task: str, child: WorkflowSpec, inputs: dict[str, Any]
                 ) -> tuple[dict[str, Any], str | None]:
    """``inputs`` without the target ``task_name`` of ``child``, and that target."""
    if not workbook_validator.takes_target(child) or TASK_NAME not in inputs:
        return inputs, None
    rest = {k: v for k, v in inputs.items() if k != TASK_NAME}
    target = inputs[TASK_NAME]
    if not isinstance(target, str) or target not in child.tasks:
        raise TaskFailed(f"task {task!r}: task_name {target!r} is not a task of reverse "
                         f"workflow {child.full_name!r} (its tasks: "
                         f"{', '.join(child.tasks)})")
    return rest, target


def runs_apart(spec: TaskSpec, child: WorkflowSpec, inlining: tuple[str, ...],
               is_async: Callable[[str | None], bool] | None = None) -> bool:
    """Whether the ``workflow:`` task ``spec`` (calling ``child``) runs its workflow as
    a child execution rather than inlined in the parent's graph (one that may pause
    does, so that it pauses as an execution of its own; ``inlining``: the
    workflows being inlined above it; ``is_async``: whether an action waits for a
    client, which a child execution's state machine does without a thread)."""
    from tripleo_flow.engine.compile import compiler  # compiler imports this module

    targets = workbook_validator.takes_target(child) and (
        TASK_NAME in spec.input or spec.input_expr is not None)
    return (targets or spec.with_items is not None or spec.retry is not None
            or spec.timeout is not None or spec.fail_on is not None
            or child.full_name in inlining or compiler.runs_as_state_machine(child, is_async)
            or can_pause(child)
            or (child.type == "direct" and workbook_validator.find_cycle(
                workbook_validator.successors(child)) is not None))


def can_pause(workflow: WorkflowSpec) -> bool:
    """Whether ``workflow`` may pause itself (a ``pause`` command, ``pause-before``): as a
    sub-workflow it then runs as a child execution, PAUSED while its parent waits."""
    return any(spec.pause_before not in (None, False)
               or any(t.target == "pause" for t in spec.transitions())
               for spec in workflow.tasks.values())


class _ChildRun:
    """What :class:`~.action_atom.ActionAtom` asks of its action, for a child run."""

    runs_plan_code = False
    connects_out = False
    secret_result = False
    asynchronous = False

    @staticmethod
    def has_revert() -> bool:
        return False  # its child's own tasks are undone, not by its result


class SubWorkflowAtom(action_atom.ActionAtom):
    """A ``workflow:`` task whose every run (item, attempt) is a child execution.

    :param workbook: the workbook of the workflow the task is in, where a short
        workflow name is looked up first
    """

    def __init__(self, name: str, spec: TaskSpec, links: Any, runtime: Any,
                 extra_requires: Any = (), workbook: str | None = None) -> None:
        super().__init__(name, spec, links, runtime, extra_requires)
        self.workbook = workbook
        #: The workflow the task runs, once known.
        self._child: WorkflowSpec | None = None

    def _get_action(self) -> Any:
        return _ChildRun()

    def _resolve_action(self, evaluator: Any) -> None:
        """The workflow to run: the written name, or the name its expression gives
        (evaluated as the task starts), looked up in this workbook first."""
        written = self.spec.workflow or ""
        name: Any = written
        if dynamic(self.spec):
            name = evaluator.evaluate(written)
            if not isinstance(name, str) or not name.strip():
                raise TaskFailed(f"task {self.spec.name!r}: workflow {written!r} gave "
                                 f"{name!r}, not a workflow name")
            name = name.strip()
        children: ChildRuns | None = self.runtime.children
        found = children.lookup(name, self.workbook) if children is not None else None
        if found is None:
            given = "" if name == written else f" (from {written!r})"
            raise TaskFailed(f"task {self.spec.name!r}: unknown workflow {name!r}{given}")
        self._child = found
        if children is not None and self.name in self.runtime.scope.interrupted:
            # Run again with a child started before (it paused, or a crash stopped
            # both): it goes on with that child, without the safe-rerun refusal.
            self._first_start = children.started_before(self.name)

    def _run(self, **kwargs: Any) -> dict[str, Any]:
        self._started: list[tuple[int | None, str]] = []
        outcome = super()._run(**kwargs)
        if self._started:  # by item (with-items in parallel), then attempt
            outcome[CHILDREN] = [ident for _item, ident in sorted(
                self._started, key=lambda pair: -1 if pair[0] is None else pair[0])]
        return outcome

    def _call(self, inputs: dict[str, Any], timeout: float | None,
              item: int | None = None, until: float | None = None) -> Any:
        children: ChildRuns | None = self.runtime.children
        wait = timeout if until is None else item_runs.left(until)  # the task's deadline
        if wait is not None and wait <= 0:
            raise TaskFailed(f"task {self.spec.name!r} timed out after {timeout:g} s")
        if children is None:
            raise TaskFailed(f"task {self.spec.name!r}: sub-workflow executions need the "
                             "runner's executions store")
        target = None
        if self._child is not None:
            inputs, target = split_target(self.spec.name, self._child, inputs)
        rerun = self.runtime.scope.child_reruns.get(self.name, 0)
        ident = child_id(children.parent_id, self.name, self._attempt_no, item, rerun)
        self._started.append((item, ident))
        name = self._child.full_name if self._child else self.spec.workflow or ""
        return children.run(self.name, name, inputs, self._attempt_no, item, timeout, target,
                            rerun, wait)

    def _undo(self, inputs: dict[str, Any], result: Any,
              flow_failures: Mapping[str, Any] | None = None) -> None:
        """Undo the completed child executions of this task (a failed one reverted
        itself: nothing to undo for its failure, whatever kind its error is)."""
        if isinstance(result, failure.Failure):
            return
        if self.runtime.children is not None:
            self.runtime.children.revert(self.name)

    def _revert_outcome(self, outcome: Mapping[str, Any], kwargs: Mapping[str, Any],
                        flow_failures: Mapping[str, Any] | None = None) -> None:
        if outcome.get("state") == action_atom.SUCCESS:
            self._undo({}, None, flow_failures)


class _Deadline(StopRequest):
    """Stops a child execution whose task timed out, at its next task (or once the
    parent's own stop request is set)."""

    def __init__(self, task: str, timeout: float, parent: StopRequest | None) -> None:
        super().__init__(f"Sub-workflow of task {task!r}")
        self._message = f"task {task!r} timed out after {timeout:g} s"
        self.parent = parent

    def check(self, task: str | None = None) -> None:
        if self.parent is not None:
            self.parent.check(task)
        if self.received is not None:
            raise TaskFailed(f"{self._message}: its sub-workflow stopped before "
                             f"{task or 'its next task'!r}")


class ChildRuns:
    """Starts, resumes and reverts the child executions of one parent execution.

    :param execute: runs (or continues) a child flow detail to its end with a stop
        request (the runner's ``execute`` on pools of its own)
    :param start: records a child execution ``(workflow, inputs, id, parent meta,
        target task)``
    :param revert: undoes a completed child execution's tasks, by id
    :param lookup: finds a workflow by name, near a workbook (the catalog's lookup)
    """

    def __init__(self, parent_id: str, depth: int, store: Any,
                 start: Callable[[str, dict[str, Any], str, dict[str, Any], str | None],
                                 Any],
                 execute: Callable[[Any, StopRequest | None], Any],
                 revert: Callable[[str], None], stop: StopRequest | None = None,
                 lookup: Callable[[str, str | None], WorkflowSpec | None] | None = None
                 ) -> None:
        self.lookup = lookup or (lambda _name, _near: None)
        self.parent_id = parent_id
        self.depth = depth
        self.store = store
        self._start = start
        self._execute = execute
        self._revert = revert
        #: The parent's stop request (a signal): a child it stopped stops the parent.
        self.stop = stop
        #: Pauses the parent and its other running children (a child paused).
        self.pause_parent: Callable[[], None] | None = None

    def run(self, task_atom: str, workflow: str, inputs: dict[str, Any], attempt: int,
            item: int | None, timeout: float | None, target: str | None = None,
            rerun: int = 0, wait: float | None = None) -> Any:
        """The output of the child execution of ``task_atom`` for ``attempt`` and
        ``item`` (of a reverse workflow: run to ``target``; of the task's ``rerun``):
        started, resumed or (completed before) read back; one made ready to go on by a
        rerun of its failed task (SUSPENDED, :mod:`.task_reruns`) goes on.  It times out
        after ``wait`` seconds (what is left of its task's ``timeout``; None: all)."""
        ident = child_id(self.parent_id, task_atom, attempt, item, rerun)
        fd = self._existing(ident)
        if fd is not None:
            record = self.store.get(ident)
            if record.state == states.SUCCESS:
                return (fd.meta or {}).get("output")
            if record.state == ERROR:
                raise child_errors.child_error(self.store, ident, workflow)
            if record.state == states.RUNNING:
                raise TaskFailed(f"sub-workflow execution {ident!r} still runs in another "
                                 "process")
        elif self.depth >= MAX_DEPTH:
            raise TaskFailed(f"task {task_atom!r}: sub-workflow {workflow!r} would nest "
                             f"{MAX_DEPTH + 1} executions deep; does its workflow call "
                             "itself without a condition that stops it?")
        else:
            fd = self._start(workflow, inputs, ident, {
                "parent_id": self.parent_id, "parent_task": task_atom,
                "attempt": attempt, "item": item, "depth": self.depth + 1,
                **({"rerun": rerun} if rerun else {})}, target)
        if timeout is None:
            return self._finish(workflow, fd, None)
        deadline = _Deadline(task_atom, timeout, self.stop)
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["output"] = self._finish(workflow, fd, deadline)
            except BaseException as exc:  # handed to the waiting thread
                box["error"] = exc

        thread = threading.Thread(target=run, name=f"execution-{ident}", daemon=True)
        thread.start()
        clock.join(thread, timeout if wait is None else wait)
        if thread.is_alive():
            deadline.received = signal.SIGALRM
            raise TaskFailed(f"task {task_atom!r} timed out after {timeout:g} s")
        if "error" in box:
            raise box["error"]
        return box["output"]

    def _existing(self, ident: str) -> Any:
        try:
            return self.store.flow_detail(ident)
        except exceptions.ExecutionNotFound:
            return None

    def _finish(self, workflow: str, fd: Any, stop: StopRequest | None) -> Any:
        try:
            record = self._execute(fd, stop or self.stop)
        except exceptions.WorkflowFailed as exc:
            if self.stop is not None and self.stop.received is not None:
                # A signal stopped the child: the parent stops too (no on-error runs).
                raise exceptions.Interrupted(self.stop.what, signal.Signals(
                    self.stop.received).name, (fd.meta or {}).get("parent_task")) from exc
            raise child_errors.child_error(self.store, fd.uuid, workflow) from exc
        if record.state == ERROR:  # stopped with ERROR by a client (:mod:`.cancels`):
            # the parent's task fails with the child's message, as Mistral's state_info
            raise TaskFailed(str(record.error or f"Failed sub-workflow {workflow!r} "
                                 f"[execution_id={record.id}]"))
        if record.state == CANCELLED:  # the task reads so; the parent's branches go on
            raise exceptions.ChildCancelled((fd.meta or {}).get("parent_task", ""),
                                            record.id, record.state_info)
        if record.state != states.SUCCESS:
            # Paused (its 'pause' command, a pause asked of it): the task stays RUNNING
            # and the parent pauses too; resuming the parent resumes this child.
            if self.pause_parent is not None:  # its siblings pause too, as Mistral's
                self.pause_parent()
            raise exceptions.ChildPaused((fd.meta or {}).get("parent_task", ""), record.id)
        return (self.store.flow_detail(record.id, lazy=True).meta or {}).get("output")

    def started_before(self, task_atom: str) -> float | None:
        """When ``task_atom`` started its first child execution (None: it never did)."""
        return min(((fd.meta or {}).get("created_at") or 0.0
                    for fd in self.store.children(self.parent_id)
                    if (fd.meta or {}).get("parent_task") == task_atom), default=None)

    def revert(self, task_atom: str) -> None:
        """Undo every completed child execution of ``task_atom``, newest first."""
        children = [fd for fd in self.store.children(self.parent_id)
                    if (fd.meta or {}).get("parent_task") == task_atom
                    and fd.state == states.SUCCESS]
        children.sort(key=lambda fd: (fd.meta or {}).get("created_at") or 0.0, reverse=True)
        for fd in children:
            self._revert(fd.uuid)


def resume_target(store: Any, execution_id: str) -> str:
    """The execution to resume to continue ``execution_id`` (of ``store``): its topmost
    ancestor that is paused (a child of it paused, or it was paused with it) or was
    interrupted, whose resumed task resumes the child and goes on once it ends, as
    Mistral resumes the parent of a resumed sub-workflow; else ``execution_id``."""
    target = execution_id
    seen = {execution_id}
    parent = (store.flow_detail(execution_id, lazy=True).meta or {}).get("parent_id")
    while isinstance(parent, str) and parent not in seen:
        seen.add(parent)
        try:
            record = store.get(parent)
        except exceptions.ExecutionNotFound:
            break
        if record.state not in (PAUSED, states.SUSPENDED, "INTERRUPTED"):
            break
        target = parent
        parent = (store.flow_detail(parent, lazy=True).meta or {}).get("parent_id")
    return target


def pause_family(store: Any, live: Mapping[str, Any], execution_id: str) -> None:
    """Suspend the engine of ``execution_id`` and those of its descendants that run
    (``live``: engines by execution id), the deepest first, so each parent's task sees
    its child paused."""
    family = [execution_id]
    for ident in family:  # breadth first: children, grandchildren...
        family.extend(fd.uuid for fd in store.children(ident) if fd.uuid not in family)
    for ident in reversed(family):
        engine = live.get(ident)
        if engine is not None:
            engine.suspend()


def revert_atoms(fd: Any, atom_of: Callable[[str], Any]) -> bool:
    """Undo the completed atoms of the ended flow detail ``fd``, newest first, each
    with the atom ``atom_of(name)`` gives (None: nothing to undo); mark them and the
    flow REVERTED (FAILURE when one could not be undone).  True when all were."""
    done = [ad for ad in fd if ad.state == states.SUCCESS and isinstance(ad.results, Mapping)]
    done.sort(key=lambda ad: ad.results.get("finished_at") or 0.0, reverse=True)
    ok = True
    for ad in done:
        atom = atom_of(ad.name)
        if atom is not None:
            try:
                atom.revert(result=ad.results, flow_failures={})
            except Exception as exc:
                ok = False
                ad.state = states.REVERT_FAILURE
                ad.revert_failure = failure.Failure.from_exception(exc)
                continue
        ad.state = states.REVERTED
    fd.state = states.REVERTED if ok else states.FAILURE
    return ok


def child_runs(runner: Any, fd: Any, listeners: tuple[Any, ...],
               stop: StopRequest | None,
               lookup: Callable[[str, str | None], WorkflowSpec | None]) -> ChildRuns:
    """How the ``workflow:`` tasks of execution ``fd`` (run by ``runner``, a
    :class:`~.runner.Runner`, whose catalog's ``lookup`` finds their workflows) run
    child executions: each on a runner of its own pools, with the parent's origin and
    environment, its events forwarded to the parent's listeners under the parent's
    execution and task name."""
    meta = fd.meta or {}

    def start(name: str, inputs: dict[str, Any], ident: str, parent: dict[str, Any],
              target: str | None) -> Any:
        return runner.start(name, inputs, target, origin=meta.get("origin"),
                            env=meta.get("env") or None, execution_id=ident, parent=parent,
                            evaluate_env=meta.get("evaluate_env", True))

    def execute(child: Any, child_stop: StopRequest | None) -> Any:
        task = (child.meta or {}).get("parent_task", "")

        def forward(event: Any) -> None:
            renamed = dataclasses.replace(event, execution_id=fd.uuid,
                                          task=f"{task}/{event.task}")
            for listener in listeners:
                listener(renamed)

        own = runner.child_runner()
        try:
            return own.execute(child, (forward,) if listeners else (), child_stop)
        finally:
            own.close()

    def revert(execution_id: str) -> None:
        own = runner.child_runner()
        try:
            child = own.store.flow_detail(execution_id)
            engine, _name = own.load(child)
            atom_of = getattr(engine, "atom_for", None) or getattr(
                engine, "workbook_atoms", {}).get
            revert_atoms(child, atom_of)
            own.store.save_flow(child)
        finally:
            own.close()

    def pause_parent() -> None:
        try:
            runner.pause(fd.uuid)
        except exceptions.Conflict:
            pass  # not run by this process's runner: its machine pauses by itself

    runs = ChildRuns(fd.uuid, int(meta.get("depth") or 0), runner.store, start, execute,
                     revert, stop, lookup)
    runs.pause_parent = pause_parent
    return runs
