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
  take the lock directly instead of through the decorator.

Nothing about what is written, or when, changes: each completed task is saved
(and committed by :class:`~.execution_backend.BatchingConnection`) before the
engine schedules the next one.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from taskflow import exceptions as tf_exc
from taskflow import states
from taskflow import storage as tf_storage
from taskflow.persistence import models


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
                time.sleep(tf_storage.RETRY_WAIT_TIMEOUT)
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
