"""The items of a ``with-items`` task whose action is synchronous, run as Mistral's
``WithItemsTask`` runs them.

:meth:`~.action_atom.ActionAtom._run_items` hands the items to :func:`run`: at most
``width`` of them run at once (its ``concurrency``; a thread pool of the task's own),
each next item starting as one ends.  An item that fails does not stop the others:
Mistral's ``on_action_complete`` gives the failed item's place back and
``_schedule_actions`` goes on with the items left, and the task completes (ERROR when
one failed) once every item has.  Three things stop the task at once instead: its
``timeout`` (Mistral's ``TimeoutPolicy`` fails the task, counted from its start: one
deadline for all its items, :func:`deadline`), a cancelled sub-workflow (Mistral's task
completes CANCELLED as soon as one action execution is) and a paused one or a stop
request (nothing more starts; what ran is read back on resume).

The items already running then end first; the first error is the task's
(:func:`worse`), its items that succeeded are undone by the caller (an action with a
``revert``) or kept for a rerun without reset (:mod:`.item_results`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent import futures
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import clock

#: Calls one item: ``(inputs, item index, deadline)`` -> its result.
Call = Callable[[dict[str, Any], int, "float | None"], Any]


def deadline(timeout: float | None) -> float | None:
    """When a task starting now with ``timeout`` (None: none) times out, on the
    :func:`~tripleo_flow.common.clock.monotonic` clock."""
    return None if timeout is None else clock.monotonic() + timeout


def left(until: float | None) -> float | None:
    """Seconds left until ``until`` (None: no deadline; 0 at most: passed)."""
    return None if until is None else until - clock.monotonic()


def run(call: Call, todo: list[tuple[int, dict[str, Any]]], width: int,
        until: float | None, results: list[Any], done: list[int],
        failed: dict[int, BaseException]
        ) -> tuple[BaseException | None, list[BaseException]]:
    """Run the items ``todo`` (index, inputs) with ``call``, ``width`` at once, within
    the task's deadline ``until``; each result goes to ``results[index]`` and its
    index to ``done``, each error to ``failed[index]``.  The task's error (None: every
    item succeeded) and the errors of the items whose sub-workflow was cancelled."""
    first: BaseException | None = None
    cancelled: list[BaseException] = []

    def settle(index: int, get: Callable[[], Any]) -> bool:
        """Keep what item ``index`` gave (``get``); whether it stops the others."""
        nonlocal first
        try:
            results[index] = get()
            done.append(index)
            return False
        except Exception as exc:
            failed[index] = exc
            first = worse(first, exc, cancelled)
            return _stops(exc, until)

    if width <= 1:
        for index, inputs in todo:
            if settle(index, lambda: call(inputs, index, until)):  # noqa: B023 (run now)
                break
        return first, cancelled
    pool = futures.ThreadPoolExecutor(max_workers=width, thread_name_prefix="tripleo-flow-item")
    pending: dict[futures.Future[Any], int] = {}
    queue = list(todo)
    stopped = False
    try:
        while (queue or pending) and not stopped:
            while queue and len(pending) < width:
                index, inputs = queue.pop(0)
                pending[pool.submit(call, inputs, index, until)] = index
            finished, _ = futures.wait(pending, return_when=futures.FIRST_COMPLETED)
            for fut in finished:
                stopped = settle(pending.pop(fut), fut.result) or stopped
        for fut, index in pending.items():  # the running ones end first
            settle(index, fut.result)
    finally:
        pool.shutdown(wait=False)
    return first, cancelled


def outputs(results: list[Any], done: list[int], failed: dict[int, BaseException]
            ) -> list[Any]:
    """What a failed ``with-items`` task reads as ``task().result`` after its error (as
    Mistral's ``get_task_execution_result``): the output of each item that ran, in item
    order; a failed item's is its error data (``std.fail error_data=...``) or its
    error."""
    ended: dict[int, Any] = {index: results[index] for index in done}
    for index, exc in failed.items():
        data = exc.data if isinstance(exc, exceptions.ActionFailed) else None
        ended[index] = (str(exc) or type(exc).__name__) if data is None else data
    return [ended[index] for index in sorted(ended)]


def _stops(exc: BaseException, until: float | None) -> bool:
    """Whether the error of an item stops the task's other items from starting: its
    deadline passed, a sub-workflow was paused or cancelled, a stop was asked."""
    if isinstance(exc, (exceptions.ChildPaused, exceptions.Interrupted)):
        return True
    return until is not None and clock.monotonic() >= until


def worse(first: BaseException | None, exc: BaseException,
          cancelled: list[BaseException]) -> BaseException:
    """The error a ``with-items`` task ends with once another item raised ``exc``
    (noted in ``cancelled`` when its sub-workflow was cancelled): the first, unless a
    cancelled sub-workflow came after it (Mistral's task is then CANCELLED)."""
    if isinstance(exc, exceptions.ChildCancelled):
        cancelled.append(exc)
        if not isinstance(first, exceptions.ChildCancelled):
            return exc
    return first or exc


__all__ = ["deadline", "left", "outputs", "run", "worse"]
