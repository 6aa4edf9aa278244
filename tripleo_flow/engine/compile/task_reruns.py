"""Rerunning a failed task of a failed execution, as Mistral's task rerun
(``PUT /v2/tasks/<id>`` with ``state`` RUNNING, ``reset`` and ``env``).

Mistral keeps every task execution of an ERROR workflow; its rerun sets the failed
task execution running again and the workflow goes on from there.  Here a failed
execution's flow detail keeps its atoms too, REVERTED once its completed tasks were
undone.  :func:`prepare` rewrites that flow detail so that the resume path
(:meth:`~tripleo_flow.engine.compile.runner.Runner.resume`) continues it:

* the completed tasks read SUCCESS again, their results and published values as
  they were (nothing runs them again);
* the failed task (and, in a compiled graph, every task after it and the graph's
  end) is PENDING again; on the state machine the task executions are created again
  as their completions are replayed, and a ``join`` that failed because the failed
  task could no longer reach it waits again (its record is reused when it fires);
  the other failed task executions stay failed;
* the execution's error is cleared and it reads SUSPENDED until it is resumed.

``reset`` false (Mistral's: only a ``with-items`` task may take it) runs its failed
items only: the items that had succeeded keep their results (:mod:`.item_results`).
When its action undoes something, those items were undone as the task failed: they
run again too.

Where ours is deliberately stricter: our failed workflows undo their completed tasks
(Mistral's never do).  A completed task whose action has a real ``revert`` (an undo:
TripleO's shipped workbooks are made of them) was undone when the execution failed:
rerunning the failed task would go on as if it had not been, so such an execution is
refused (run the workflow again).  Actions that undo nothing (``std.*``) are safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from taskflow import states

from tripleo_flow import exceptions
from tripleo_flow.engine.compile import action_atom, atoms, compiler, item_results
from tripleo_flow.engine.compile.state_machine import MACHINE
from tripleo_flow.engine.lang.workbook_model import TaskSpec, WorkflowSpec
from tripleo_flow.engine.store.states import STARTED_AT

#: The flow states of a failed execution (Mistral's ERROR): its tasks may be rerun.
FAILED = (states.FAILURE, states.REVERTED)
#: What the execution's meta said of its end, cleared by a rerun.
_ENDED_META = ("error", "failed_task", "finished_at", "output", "error_api", "error_hints",
               "error_record", "state_info", "paused_at")


def _outcome_state(ad: Any) -> str | None:
    results = ad.results
    return results.get("state") if isinstance(results, Mapping) else None


def _failed(ad: Any) -> bool:
    """Whether atom detail ``ad`` is a failed workbook task (its action's error: the
    atom's failure, or an outcome in ERROR)."""
    return ad.failure is not None or _outcome_state(ad) == atoms.ERROR


def _is_join_failure(ad: Any) -> bool:
    """Whether ``ad`` is a join the state machine failed (it could no longer fire)."""
    check = getattr(ad.failure, "check", None)
    return bool(check is not None and check(exceptions.JoinFailed))


def _internal(segment: str) -> bool:
    """Whether a segment of an atom name is the engine's own (an enter atom, a retry
    controller, a pause gate), not a task execution a user reruns."""
    return "#" in segment or segment.startswith(("_", "__"))


def find(fd: Any, task: str) -> Any:
    """The atom detail of task execution ``task`` (its name as ``execution tasks``
    lists it, ``t2/s1`` for task ``s1`` of the sub-workflow task ``t2`` runs inline,
    or its id) of flow detail ``fd``.

    :raises NotFound: no such task execution
    """
    for ad in fd:
        if ad.name == task or ad.uuid == task:
            if any(_internal(segment) for segment in ad.name.split("/")):
                break
            return ad
    raise exceptions.NotFound(
        f"Execution {fd.uuid!r} has no task execution {task[:80]!r}.",
        hints=[exceptions.Hint("List its tasks with", "execution.tasks",
                               {"execution": fd.uuid})])


#: Finds a workflow by name near a workbook (the catalog's ``lookup``).
Lookup = Callable[[str, str | None], WorkflowSpec | None]


def _task_of(segment: str) -> str:
    """The task name in a segment of an atom name (``poll[2]``, ``t1#retry``)."""
    return segment.partition("#")[0].partition("[")[0]


def levels(workflow: WorkflowSpec, atom: str, lookup: Lookup | None
           ) -> list[tuple[str, WorkflowSpec, TaskSpec]] | None:
    """From the top down, ``(prefix, workflow, task)`` of every level of atom name
    ``atom`` (``t2/s1``: task ``t2`` of ``workflow``, then task ``s1`` of the
    sub-workflow ``t2`` inlines, prefix ``t2/``); None when a level names no task."""
    found: list[tuple[str, WorkflowSpec, TaskSpec]] = []
    here: WorkflowSpec | None = workflow
    prefix = ""
    for segment in atom.split("/"):
        spec = here.tasks.get(_task_of(segment)) if here is not None else None
        if here is None or spec is None:
            return None
        found.append((prefix, here, spec))
        prefix += segment + "/"
        here = (lookup(spec.workflow, here.workbook)
                if spec.workflow is not None and lookup is not None else None)
    return found


def _spec(workflow: WorkflowSpec, atom: str, lookup: Lookup | None) -> TaskSpec | None:
    found = levels(workflow, atom, lookup)
    return found[-1][2] if found else None


def _inlined(fd: Any, atom: str) -> bool:
    """Whether ``atom`` is a ``workflow:`` task whose sub-workflow runs inline (its
    tasks are atoms ``atom/...`` of the same flow detail)."""
    return any(ad.name.startswith(atom + "/") for ad in fd)


def _graph(fd: Any) -> bool:
    """Whether ``fd`` is the execution of a compiled graph (not of the state machine)."""
    return any(ad.name == compiler.END_ATOM for ad in fd)


def _after(workflow: WorkflowSpec, task: str) -> set[str]:
    """``task`` and every task a transition (or ``requires``) leads to from it."""
    found, todo = {task}, [task]
    edges = compiler.edges(workflow)
    while todo:
        here = todo.pop()
        for source, target, _label in edges:
            if source == here and target in workflow.tasks and target not in found:
                found.add(target)
                todo.append(target)
    return found


def check(fd: Any, workflow: WorkflowSpec, task: str, reset: bool,
          actions: Callable[[str], Any], lookup: Lookup | None = None) -> Any:
    """Refuse what Mistral refuses, and what ours cannot do faithfully; the failed task's
    atom detail otherwise.

    :raises Conflict: the execution has not failed (Mistral's ERROR)
    :raises InvalidInput: the task has not failed, ``reset`` false for a task without
        ``with-items``, or a completed task of the execution was undone (its action
        reverts)
    """
    if fd.state not in FAILED:
        raise exceptions.Conflict(
            f"Execution {fd.uuid!r} is {fd.state}: only a task of a failed execution "
            "(ERROR) can be rerun.")
    ad = find(fd, task)
    spec = _spec(workflow, ad.name, lookup)
    if _is_join_failure(ad):
        raise exceptions.InvalidInput(
            f"Join {ad.name!r} of execution {fd.uuid!r} failed because a task it waits for "
            "failed: rerun that task (the join then waits for it again).")
    if spec is None or not _failed(ad):
        raise exceptions.InvalidInput(
            f"Task execution {ad.name!r} of execution {fd.uuid!r} did not fail "
            f"(it is {_outcome_state(ad) or ad.state}): only a failed task can be rerun.")
    if not _graph(fd) and isinstance(ad.results, Mapping) and MACHINE in ad.results:
        raise exceptions.InvalidInput(
            f"Task execution {ad.name!r} of execution {fd.uuid!r} failed but its "
            "on-complete transitions ran already: rerun the task they failed on.")
    if not reset and spec.with_items is None:
        raise exceptions.InvalidInput(
            f"Task {spec.name!r} has no with-items: only a with-items task can be rerun "
            "without reset (its failed items only).")
    undone = sorted(_undone(fd, workflow, actions, lookup))
    if undone:
        raise exceptions.InvalidInput(
            f"Execution {fd.uuid!r} cannot be rerun from task {ad.name!r}: its completed "
            f"task(s) {', '.join(undone)} were undone when it failed (their actions revert), "
            "and a rerun would go on without what they did. Run the workflow again.")
    return ad


def _undone(fd: Any, workflow: WorkflowSpec, actions: Callable[[str], Any],
            lookup: Lookup | None = None) -> Iterable[str]:
    """The completed tasks of ``fd`` whose undo ran: their action has a ``revert``
    (a ``workflow:`` task run as a child execution: its sub-workflow's completed tasks
    were undone too; one run inline: its tasks are atoms of ``fd``, looked at here)."""
    for ad in fd:
        if ad.state not in (states.REVERTED, states.REVERT_FAILURE) or \
                _outcome_state(ad) != atoms.SUCCESS:
            continue
        if any(_internal(segment) for segment in ad.name.split("/")):
            continue
        spec = _spec(workflow, ad.name, lookup)
        if spec is None:
            continue
        if spec.workflow is not None:
            if not _inlined(fd, ad.name):
                yield ad.name
            continue
        name = ad.results.get(action_atom.ACTION) or spec.action
        try:
            cls = actions(str(name))
        except exceptions.TripleoFlowError:
            continue  # an action no longer known: it cannot have run an undo now
        if getattr(cls, "has_revert", lambda: False)():
            yield ad.name


def _again(fd: Any, workflow: WorkflowSpec, failed: str, lookup: Lookup | None) -> set[str]:
    """The atoms of compiled graph ``fd`` that run again when ``failed`` is rerun: at
    its own level, it and every task after it, each with the tasks of the sub-workflow
    it runs inline (a rerun ``workflow:`` task runs its whole sub-workflow again, as
    Mistral's starts a new child execution); at each level above, the ``workflow:`` task
    that contains it (its exit) and every task after that, wholly; and the graph's end."""
    found = levels(workflow, failed, lookup) or []
    names = {compiler.END_ATOM}
    for depth, (prefix, level, spec) in enumerate(found):
        after = _after(level, spec.name)
        whole = after if depth == len(found) - 1 else after - {spec.name}
        names |= {prefix + name for name in after}
        for ad in fd:
            base = ad.name.partition("#")[0]
            if base in names or any(ad.name.startswith(prefix + name + "/") for name in whole):
                names.add(base)
    return names


def prepare(fd: Any, workflow: WorkflowSpec, failed: Any, reset: bool = True,
            lookup: Lookup | None = None, new_child: bool = True) -> None:
    """Rewrite flow detail ``fd`` (in place) so a resume reruns task execution
    ``failed`` (:func:`check` found it) and goes on from there; without ``reset`` the
    items of its with-items that had succeeded keep their results.  A ``workflow:``
    task run as a child execution starts a new one (its atom counts the reruns:
    :data:`~.item_results.CHILD_RERUNS`), unless ``new_child`` is false: its failed
    child was made ready to go on by a rerun of the child's own failed task."""
    done = ((failed.results or {}).get(item_results.DONE) if isinstance(failed.results, Mapping)
            else None) or (failed.meta or {}).get(item_results.DONE)
    spec = _spec(workflow, failed.name, lookup)
    apart = spec is not None and spec.workflow is not None and not _inlined(fd, failed.name)
    graph = _graph(fd)
    if graph:
        again = _again(fd, workflow, failed.name, lookup)
        pending = [ad for ad in fd if ad.name.partition("#")[0] in again]
    else:
        # The task executions are created again as their completions are replayed; a
        # join the failed task could not reach waits again once created (its FAILURE
        # record is reused when it fires).
        pending = [failed]
    again_ids = {id(ad) for ad in pending}
    for ad in fd:
        if id(ad) in again_ids:
            ad.reset(states.PENDING)
            ad.meta = {k: v for k, v in (ad.meta or {}).items()
                       if k not in (STARTED_AT, item_results.DONE, item_results.RERUN)}
            if ad is failed and not reset and done:
                ad.meta[item_results.RERUN] = done
        elif ad.state != states.REVERTED:
            continue
        elif not graph and ad.failure is not None:
            ad.state = states.FAILURE  # another failed task execution: it stays failed
        elif graph or isinstance(ad.results, Mapping) and MACHINE in ad.results:
            ad.state = states.SUCCESS  # completed: its undo did nothing (see check)
            ad.intention = states.EXECUTE
    if apart and new_child:
        failed.meta[item_results.CHILD_RERUNS] = int(
            (failed.meta or {}).get(item_results.CHILD_RERUNS) or 0) + 1
    fd.state = states.SUSPENDED
    fd.meta = {k: v for k, v in (fd.meta or {}).items() if k not in _ENDED_META}


__all__ = ["FAILED", "check", "find", "levels", "prepare"]
