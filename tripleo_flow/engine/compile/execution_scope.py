"""What every task of one execution shares while it runs.

Mistral keeps some state per workflow execution rather than per branch: the
variables published with the ``global`` (or ``atomic``) scope, read with
``global('name')``; the execution's environment, read with ``env()``; the task
executions, listed with ``tasks()``; ``pause``, which stops the whole
execution; and ``succeed``, which ends its workflow (the whole execution at the top
level, the sub-workflow inside one): tasks of an ended workflow that have not
started are skipped, in every branch.  :class:`Scope` holds them for one run of
the engine; the runner attaches it to the engine (:meth:`Scope.attach`), which
also rebuilds the global variables and ended workflows of a resumed execution
from the persisted task outcomes and notes the tasks a crash interrupted (for
``safe-rerun``).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from taskflow import exceptions as tf_exceptions
from taskflow import states
from taskflow.types import failure

from tripleo_flow.engine.compile import item_results
from tripleo_flow.engine.store import error_records, stopped_completions
from tripleo_flow.engine.store.states import CANCELLED_INFO

#: Outcome key of the values a task published to the global scope.
GLOBAL = "global"
#: Outcome key set when ``keep-result`` dropped the action's result.
RESULT_DROPPED = "result_dropped"
#: Outcome key of a task that took a ``succeed`` transition: the atom-name prefix of
#: the workflow it ended ("" for the top-level one).
ENDED = "ended_workflow"
#: Outcome key of a task whose ``fail`` stopped its (inlined sub-)workflow: the prefix.
FAILED_BY = "failed_workflow"
#: Outcome key of a task whose error no ``on-error`` transition handled
#: (:data:`tripleo_flow.engine.compile.atoms.UNHANDLED`).
UNHANDLED = "unhandled"
#: Atom metadata key of the context of a task that failed its workflow.
ERROR_CONTEXT = "error_ctx"
#: Atom metadata key of the inbound context of a task whose asynchronous action waits
#: for a client (Mistral's ``in_context`` of its task execution): what its ``publish``
#: is evaluated over when a client completes it after the execution was stopped
#: (:mod:`.stopped_publish`).
WAIT_CONTEXT = stopped_completions.WAIT_CONTEXT


#: The environment of the execution whose action runs in this thread (``env()`` of an
#: ad-hoc action's ``base-input``).
_ENV: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "tripleo_flow_execution_env", default=None)


@contextlib.contextmanager
def acting_in(env: Mapping[str, Any]) -> Iterator[None]:
    """While an action of an execution whose environment is ``env`` runs here."""
    token = _ENV.set(env)
    try:
        yield
    finally:
        _ENV.reset(token)


def current_env() -> dict[str, Any]:
    """``env()`` for the action running in this thread (``{}`` outside an execution)."""
    return dict(_ENV.get() or {})


def execution_model(fd: Any, name: str, spec: Mapping[str, Any],
                    inputs: Mapping[str, Any]) -> dict[str, Any]:
    """What ``execution()`` gives, as Mistral's: ``id``, ``name``, ``spec`` (the
    workflow as written), ``input`` (defaults applied), ``params`` (``env``) and
    ``created_at`` (an ISO 8601 UTC time, as Mistral's API writes it)."""
    meta = fd.meta or {}
    created = meta.get("created_at")
    env = meta.get("env")
    return {"id": fd.uuid, "name": name,
            "spec": {"version": "2.0", **spec}, "input": dict(inputs),
            "params": {"env": dict(env)} if env else {},
            "created_at": None if created is None else time.strftime(
                "%Y-%m-%d %H:%M:%S", time.gmtime(created))}


def unhandled_message(failed: Sequence[tuple[str, str]]) -> str:
    """Why a workflow failed: each of its tasks that failed with no ``on-error``
    transition handling it, with its error (Mistral's state info lists them all)."""
    if len(failed) == 1:
        (name, error), = failed
        return f"task {name!r} failed and no 'on-error' transition handled it: {error}"
    names = ", ".join(repr(name) for name, _error in failed)
    return (f"tasks {names} failed and no 'on-error' transition handled them: "
            + "; ".join(f"{name!r}: {error}" for name, error in failed))


def internal(name: str) -> bool:
    """Atoms of a compiled flow that are not workbook tasks."""
    return name in ("__end__", "_TaskFlow_INJECTOR") or "#" in name \
        or name.endswith("__enter__")


class Scope:
    """Execution-wide state of one engine run (see the module docstring)."""

    def __init__(self, env: Mapping[str, Any] | None = None, execution_id: str = "") -> None:
        self.env: dict[str, Any] = dict(env or {})
        self.execution_id = execution_id
        self.interrupted: frozenset[str] = frozenset()
        #: A rerun without reset: the results of the items that had succeeded, by atom
        #: (:mod:`.item_results`), taken once by the task's next run.
        self.kept_items: dict[str, dict[int, Any]] = {}
        #: How many times a ``workflow:`` task was rerun, by atom: each rerun starts new
        #: child executions (:func:`.subworkflow.child_id`).
        self.child_reruns: dict[str, int] = {}
        self._globals: dict[str, Any] = {}
        self._ended: set[str] = set()
        self._failed_by: set[str] = set()
        self._failed: list[tuple[str, str, str]] = []
        self._causes: dict[str, BaseException] = {}
        #: Errors named at the workflow's end (``on-complete`` ran), kept for their kind.
        self._kinds: dict[str, BaseException] = {}
        self._lock = threading.Lock()
        self._storage: Any = None
        self._atoms: list[str] = []
        self._pause: Callable[[], None] | None = None
        self._flush: Callable[[], None] | None = None
        #: The spec of each task, by atom prefix and task name (``task().spec``).
        self.task_specs: dict[str, Any] = {}
        #: The tasks (prefix + name) of the graph that chose to run rather than skip:
        #: ``task(NAME)`` of one not among them reads null (not run), as Mistral's.
        self.began: set[str] = set()

    # -- global scope ---------------------------------------------------------

    def publish(self, values: Mapping[str, Any]) -> None:
        """Publish ``values`` to the global scope, all at once."""
        with self._lock:
            self._globals.update(values)

    def get_global(self, name: str) -> Any:
        with self._lock:
            return self._globals.get(name)

    def with_globals(self, ctx: Mapping[str, Any]) -> Mapping[str, Any]:
        """What ``$`` reads in a task whose branch context is ``ctx``: the global
        variables under it, as Mistral's context view puts the workflow's context
        under the task's (a branch value of the same name wins)."""
        with self._lock:
            return {**self._globals, **ctx} if self._globals else ctx

    # -- ended workflows ------------------------------------------------------

    def end(self, prefix: str) -> None:
        """``succeed``: the workflow whose atoms start with ``prefix`` is over."""
        with self._lock:
            self._ended.add(prefix)

    def ended(self, prefix: str) -> bool:
        """Whether the workflow of ``prefix``, or one it runs inside, has ended."""
        with self._lock:
            return any(prefix.startswith(done) for done in self._ended)

    def stop(self, prefix: str) -> None:
        """``fail`` in an inlined sub-workflow: nothing more of it starts (Mistral's
        sub-workflow ends ERROR at once), while it still fails its parent's task
        at its end."""
        with self._lock:
            self._failed_by.add(prefix)

    def stopped(self, prefix: str) -> bool:
        """Whether a ``fail`` stopped the workflow of ``prefix`` or one it runs inside."""
        with self._lock:
            return any(prefix.startswith(done) for done in self._failed_by)

    # -- errors no on-error transition handled ---------------------------------

    def fail_later(self, prefix: str, atom: str, error: str,
                   cause: BaseException | None = None) -> None:
        """Task ``atom`` of the workflow of ``prefix`` failed with no ``on-error``
        transition handling it, and its ``on-complete`` ones run first: the workflow
        fails when it reaches its end (Mistral's ``finally``).

        :param cause: the error itself, raised again when it alone fails the workflow
        """
        with self._lock:
            if all(done[1] != atom for done in self._failed):
                self._failed.append((prefix, atom, error))
                if cause is not None:
                    self._causes[atom] = cause

    def keep_kind(self, atom: str, cause: BaseException, outcome: dict[str, Any]) -> None:
        """The error ``cause`` of task ``atom``, whose ``on-complete`` ran and which
        fails its workflow later, named with the others (its kind and next steps
        kept: :func:`~.error_records.combined`); also as data in its ``outcome``
        (persisted) for a process that resumes the execution."""
        record = error_records.describe(cause)
        if record is not None:
            outcome[error_records.ERROR_RECORD] = {**record, "named": True}
        with self._lock:
            self._kinds.setdefault(atom, cause)

    def causes(self, prefix: str) -> list[BaseException | None]:
        """The errors of :meth:`failed_tasks` (None where not known), in its order."""
        failed = self.failed_tasks(prefix)
        with self._lock:
            return [self._causes.get(atom) or self._kinds.get(atom) for atom, _error in failed]

    def failure(self, prefix: str, message: str) -> BaseException:
        """The error that fails the workflow of ``prefix``, worded ``message``: its one
        failed task's error as raised, or every one's together
        (:func:`~.error_records.combined`)."""
        return self.sole_cause(prefix) or error_records.combined(message,
                                                                 self.causes(prefix))

    def sole_cause(self, prefix: str) -> BaseException | None:
        """The error of the one task that failed the workflow of ``prefix``, as
        :meth:`fail_later` was given it in this process (None: several, or none)."""
        failed = self.failed_tasks(prefix)
        with self._lock:
            return self._causes.get(failed[0][0]) if len(failed) == 1 else None

    def failed_tasks(self, prefix: str) -> list[tuple[str, str]]:
        """``(atom, error)`` of the unhandled errors of the workflow of ``prefix``
        itself (not of its sub-workflows), in the order they happened."""
        with self._lock:
            return [(atom, error) for where, atom, error in self._failed if where == prefix]

    def keep_error_context(self, atom: str, ctx: Mapping[str, Any],
                           cause: BaseException | None = None) -> None:
        """Persist the context of task ``atom`` as it fails the workflow (with what it
        published on error) in its atom's metadata: the workflow's ``output-on-error``
        is evaluated over it (:data:`ERROR_CONTEXT`); and its error ``cause`` as data
        (:data:`~.error_records.ERROR_RECORD`: its kind and next steps, which readers
        word for their interface)."""
        if self._storage is not None:
            meta: dict[str, Any] = {ERROR_CONTEXT: dict(ctx)}
            record = error_records.describe(cause)
            if record is not None:
                meta[error_records.ERROR_RECORD] = record
            self._storage.update_atom_metadata(atom, meta)

    def keep_wait_context(self, atom: str, ctx: Mapping[str, Any], action: str,
                          items: Mapping[str, Any] | None = None) -> None:
        """Persist the inbound context of task ``atom`` as its asynchronous ``action``
        starts waiting for a client, in its atom's metadata (:data:`WAIT_CONTEXT`,
        masked as every record), with the action's name and the ``items`` it has not
        started yet (:mod:`~tripleo_flow.engine.store.stopped_completions`)."""
        if self._storage is not None:
            self._storage.update_atom_metadata(atom, {
                WAIT_CONTEXT: dict(ctx), stopped_completions.WAIT_ACTION: action,
                **({} if items is None else {stopped_completions.WAIT_ITEMS: dict(items)})})

    # -- the engine -----------------------------------------------------------

    def attach(self, engine: Any, flow_detail: Any, atom_names: Iterable[str],
               flush: Callable[[], None] | None = None) -> None:
        """Read the engine's storage from now on; rebuild what a resumed execution
        published globally (in the order its tasks finished) and the workflows it
        ended, and note the tasks that were running when it was interrupted.

        :param flush: writes the deferred RUNNING marks of the executions database
            (:meth:`mark_running`)"""
        self._storage = engine.storage
        self._pause = engine.suspend
        self._flush = flush
        self._atoms = list(atom_names)
        done = []
        running = set()
        for detail in flow_detail:
            if detail.state == states.RUNNING and not internal(detail.name):
                running.add(detail.name)
            kept = (getattr(detail, "meta", None) or {}).get(item_results.RERUN)
            reruns = (getattr(detail, "meta", None) or {}).get(item_results.CHILD_RERUNS)
            if isinstance(reruns, int) and reruns > 0:
                self.child_reruns[detail.name] = reruns
            if kept and detail.state != states.SUCCESS:
                self.kept_items[detail.name] = item_results.kept(kept)
            results = detail.results
            if detail.state != states.SUCCESS or not isinstance(results, Mapping):
                continue
            if results.get(GLOBAL):
                done.append((results.get("finished_at") or 0.0, results[GLOBAL]))
            if isinstance(results.get(ENDED), str):
                self.end(results[ENDED])
            if isinstance(results.get(FAILED_BY), str):
                self.stop(results[FAILED_BY])
            if results.get(UNHANDLED) == "later":
                prefix = detail.name.rpartition("/")[0]
                record = results.get(error_records.ERROR_RECORD)
                cause = error_records.rebuild(record)
                named = isinstance(record, Mapping) and record.get("named")
                self.fail_later(prefix + "/" if prefix else "", detail.name,
                                str(results.get("error") or results.get("state_info")),
                                None if named else cause)
                if named and cause is not None:
                    with self._lock:
                        self._kinds.setdefault(detail.name, cause)
        for _when, values in sorted(done, key=lambda pair: pair[0]):
            self.publish(values)
        self.interrupted = frozenset(running)

    def add_atom(self, name: str) -> None:
        """A task execution the state machine created (:mod:`.state_machine`)."""
        self._atoms.append(name)

    def atom_id(self, atom: str) -> str:
        """The id of task execution ``atom`` ("" before the engine runs)."""
        if self._storage is None:
            return ""
        try:
            return str(self._storage.get_atom_uuid(atom))
        except tf_exceptions.NotFound:  # not (yet) in this storage
            return ""

    def task_model(self, prefix: str, atom: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """What ``task()`` gives for task execution ``atom`` of the workflow of
        ``prefix``, as Mistral's: ``values`` (``name``, ``state``, ``result``,
        ``published``, ``state_info``) with its ``id``, ``spec``, ``type`` and
        ``workflow_execution_id``."""
        spec = self.task_specs.get(prefix + str(values.get("name")))
        model = {"id": self.atom_id(atom), "name": values.get("name"),
                 "spec": dict(getattr(spec, "raw", None) or {}),
                 "state": values.get("state"), "state_info": values.get("state_info"),
                 "result": values.get("result"), "published": values.get("published") or {},
                 "type": "WORKFLOW" if getattr(spec, "workflow", None) else "ACTION",
                 "workflow_execution_id": self.execution_id}
        return model

    def outcome_model(self, prefix: str, atom: str, name: str,
                      outcome: Mapping[str, Any]) -> dict[str, Any]:
        """:meth:`task_model` of a task execution that completed with ``outcome``."""
        return self.task_model(prefix, atom, {
            "name": name, "state": outcome.get("state"), "result": outcome.get("result"),
            "published": outcome.get("published"),
            "state_info": outcome.get("error") or outcome.get("state_info")
            or outcome.get(CANCELLED_INFO)})

    def latest_task(self, prefix: str, name: str) -> dict[str, Any] | None:
        """``task(name)`` where no task runs (a workflow's ``output``): the task
        execution of that name under ``prefix`` that started last, or None."""
        found = [r for r in self.tasks(prefix) if r["name"] == name]
        if not found:
            return None
        record = found[-1]
        return self.task_model(prefix, prefix + name, record) | {"id": record["id"]}

    def mark_running(self) -> None:
        """Make the RUNNING marks durable now (the database defers them): a task with
        ``safe-rerun: false`` must be known as interrupted after a crash."""
        if self._flush is not None:
            self._flush()

    def pause(self) -> None:
        """Stop the execution once the running tasks end (PAUSED until resumed)."""
        if self._pause is None:
            raise RuntimeError("pause is only possible while an engine runs")
        self._pause()

    def tasks(self, prefix: str = "", recursive: bool = False,
              state: str | None = None) -> list[dict[str, Any]]:
        """The task executions of this execution, as Mistral's ``tasks()`` gives them:
        tasks that started (skipped ones never existed), under ``prefix`` (a
        sub-workflow's atoms; ``recursive`` also lists those of its sub-workflows)."""
        if self._storage is None:
            return []
        found = []
        for atom in self._atoms:
            if internal(atom) or not atom.startswith(prefix):
                continue
            name = atom[len(prefix):]
            if "/" in name and not recursive:
                continue
            record = self._record(atom, name)
            if record is not None and (state is None or record["state"] == state):
                found.append(record)
        found.sort(key=lambda r: (r["started_at"] is None, r["started_at"] or 0.0))
        return found

    def _record(self, atom: str, name: str) -> dict[str, Any] | None:
        storage = self._storage
        atom_state = storage.get_atom_state(atom)
        record: dict[str, Any] = {
            "id": storage.get_atom_uuid(atom), "name": name, "state": atom_state,
            "state_info": None, "result": None, "published": {},
            "workflow_execution_id": self.execution_id, "started_at": None}
        if atom_state in (None, states.PENDING, states.IGNORE):
            return None
        if atom_state == states.SUCCESS:
            outcome = storage.get(atom)
            if not isinstance(outcome, Mapping) or outcome.get("state") == "SKIPPED":
                return None
            record.update(state=outcome.get("state"), result=outcome.get("result"),
                          published=dict(outcome.get("published") or {}),
                          state_info=outcome.get("error") or outcome.get(CANCELLED_INFO),
                          started_at=outcome.get("started_at"))
        elif atom_state == states.FAILURE:
            fail = storage.get(atom)
            record.update(state="ERROR", state_info=str(fail.exception_str) if isinstance(
                fail, failure.Failure) else str(fail))
        return record
