"""TaskFlow's engine storage with a cheaper hot path, for compiled workbooks.

An engine talks to its :class:`taskflow.storage.Storage` about ten times per
task (state RUNNING, progress 0, arguments, uuid, result, progress 1...), and
in TaskFlow 6.5 every call takes a ``fasteners`` reader-writer lock (a
condition variable, thread bookkeeping) and every save goes through a
``tenacity`` retry wrapper: on a 10,000-task chain that is about a third of
the run, well above the SQLite writes themselves.  :class:`EngineStorage`
keeps TaskFlow's behaviour and persistence (the same saves, in the same order,
through the same backend connection) and changes only how the calls are
guarded:

* one re-entrant lock serves as both the read and the write lock (the engine
  and a task reporting progress are the only callers, and no call waits on
  another thread while holding it);
* a save that fails with ``StorageFailure`` is tried again the same number of
  times, after the same pause, as TaskFlow's own retry wrapper does, by a loop;
* the calls an engine makes for every task (atom state, uuid, progress, result)
  take the lock directly instead of through the decorator;
* a task's change of state and of progress is one save, not two
  (:class:`OneSaveTaskAction`: RUNNING with progress 0.0 and the time it started,
  :data:`~.states.STARTED_AT`, which readers show while it runs; the result with 1.0),
  and what the executions database gets back is not copied again
  (:meth:`~.batching_connection.BatchingConnection.save_atom`).

Each completed task is still saved, whole, and committed (by
:class:`~.batching_connection.BatchingConnection`) before the engine schedules the
next one: a ``kill -9`` at any moment resumes after the last completed task.
"""

from __future__ import annotations

import threading
from typing import Any

from taskflow import exceptions as tf_exc
from taskflow import states
from taskflow import storage as tf_storage
from taskflow.engines.action_engine.actions import task as task_action
from taskflow.persistence import models

from tripleo_flow.common import clock
from tripleo_flow.engine.store.states import STARTED_AT

#: ``result`` of :meth:`EngineStorage.change_task` when none is saved (a state change).
_NOT_SAVED = object()


class _OneLock:
    """A re-entrant lock offering ``fasteners.ReaderWriterLock``'s two entry points."""

    def __init__(self) -> None:
        self._lock = threading.RLock()

    def read_lock(self) -> Any:
        return self._lock

    def write_lock(self) -> Any:
        return self._lock

    @property
    def has_pending_writers(self) -> bool:
        return False


class EngineStorage(tf_storage.Storage):  # type: ignore[misc]
    """:class:`taskflow.storage.Storage` guarded by one plain lock (see the module)."""

    def __init__(self, flow_detail: Any, backend: Any = None, scope_fetcher: Any = None
                 ) -> None:
        super().__init__(flow_detail, backend=backend, scope_fetcher=scope_fetcher)
        self._lock = _OneLock()
        self._plain = self._lock.write_lock()

    def _save_atom_detail(self, conn: Any, original_atom_detail: Any, atom_detail: Any
                          ) -> Any:
        save = getattr(conn, "save_atom", None)  # the executions database: no copy back
        for attempt in range(tf_storage.RETRY_ATTEMPTS):
            try:
                if save is not None:
                    save(original_atom_detail, atom_detail)
                else:
                    original_atom_detail.update(conn.update_atom_details(atom_detail))
                return original_atom_detail
            except tf_exc.StorageFailure:
                if attempt + 1 == tf_storage.RETRY_ATTEMPTS:
                    raise
                clock.sleep(tf_storage.RETRY_WAIT_TIMEOUT)
        return original_atom_detail  # not reached: the last attempt returns or raises

    def _detail(self, atom_name: str) -> Any:
        try:
            return self._flowdetail.find(self._atom_name_to_uuid[atom_name])
        except KeyError:
            raise tf_exc.NotFound(f"Unknown atom name '{atom_name}'") from None

    def get_atom_state(self, atom_name: str) -> Any:
        with self._plain:
            return self._detail(atom_name).state

    def get_atom_uuid(self, atom_name: str) -> Any:
        with self._plain:
            return self._detail(atom_name).uuid

    def get_atom_intention(self, atom_name: str) -> Any:
        with self._plain:
            return self._detail(atom_name).intention

    def get_task_progress(self, task_name: str) -> Any:
        with self._plain:
            return tf_storage.Storage.get_task_progress.__wrapped__(self, task_name)

    def set_atom_state(self, atom_name: str, state: Any) -> None:
        with self._plain:
            tf_storage.Storage.set_atom_state.__wrapped__(self, atom_name, state)

    def set_task_progress(self, task_name: str, progress: float, details: Any = None
                          ) -> None:
        update_with: dict[str, Any] = {tf_storage.META_PROGRESS: progress}
        if details is not None:
            update_with[tf_storage.META_PROGRESS_DETAILS] = (
                {"at_progress": progress, "details": details} if details else None)
        with self._plain:
            tf_storage.Storage._update_atom_metadata.__wrapped__(
                self, task_name, update_with, expected_type=models.TaskDetail)

    def save(self, atom_name: str, result: Any, state: Any = states.SUCCESS) -> None:
        with self._plain:
            tf_storage.Storage.save.__wrapped__(self, atom_name, result, state)

    def change_task(self, task_name: str, state: Any, progress: float | None = None,
                    result: Any = _NOT_SAVED) -> None:
        """Set task ``task_name``'s ``state`` (with ``result``, given: :meth:`save`) and
        its ``progress`` in one save, as :meth:`save` (or :meth:`set_atom_state`) then
        :meth:`set_task_progress` would leave it."""
        with self._plain:
            source = self._detail(task_name)
            if progress is not None and not isinstance(source, models.TaskDetail):
                raise TypeError(f"Atom '{task_name}' is not of the expected type: TaskDetail")
            clone = source.copy()
            if result is not _NOT_SAVED:
                changed = clone.put(state, result)
            else:
                changed = clone.state != state
                clone.state = state
            if progress is not None:  # always saved, as TaskFlow saves a progress
                clone.meta = {**(clone.meta or {}), tf_storage.META_PROGRESS: progress}
                if state == states.RUNNING and clone.intention == states.EXECUTE:
                    clone.meta[STARTED_AT] = clock.time()
                changed = True
            if changed:
                self._with_connection(self._save_atom_detail, source, clone)
            if result is _NOT_SAVED:
                return
            if state in (states.FAILURE, states.REVERT_FAILURE) and \
                    clone.intention in tf_storage._SAVE_FAILURE_INTENTIONS:
                self._failures[clone.name][clone.intention] = result
            if state == states.SUCCESS and clone.intention == states.EXECUTE:
                self._check_all_results_provided(clone.name, result)


class OneSaveTaskAction(task_action.TaskAction):  # type: ignore[misc]
    """TaskFlow's task action, saving a task's new state, its result and its progress
    in one storage call (:meth:`EngineStorage.change_task`).

    TaskFlow saves the state (or the result), then the progress: two merges and two
    row updates per change, and a completed task's row read progress 0.0 until the
    next task's durable write carried its 1.0.  Notifications are unchanged.
    """

    def change_state(self, task: Any, state: Any, progress: float | None = None,
                     result: Any = task_action.TaskAction.NO_RESULT) -> None:
        storage = self._storage
        if not isinstance(storage, EngineStorage):
            super().change_state(task, state, progress=progress, result=result)
            return
        old_state = storage.get_atom_state(task.name)
        if self._is_identity_transition(old_state, state, task, progress=progress):
            return
        saved = _NOT_SAVED
        if state in self.SAVE_RESULT_STATES:
            saved = None if result is self.NO_RESULT else result
        storage.change_task(task.name, state, progress, saved)
        details = {"task_name": task.name, "task_uuid": storage.get_atom_uuid(task.name),
                   "old_state": old_state}
        if result is not self.NO_RESULT:
            details["result"] = result
        self._notifier.notify(state, details)
        if progress is not None:
            task.update_progress(progress)


def install(engine: Any) -> None:
    """Give ``engine`` (an action engine not compiled yet) an :class:`EngineStorage`
    in place of the storage it would build on first use, over the same flow detail,
    backend and scope lookup."""
    if "_storage" in vars(engine):
        return  # already built: keep it

    def scope_fetcher(atom_name: str) -> Any:
        if engine._compiled:
            return engine._runtime.fetch_scopes_for(atom_name)
        return None

    engine._storage = EngineStorage(engine._flow_detail, backend=engine._backend,
                                    scope_fetcher=scope_fetcher)
