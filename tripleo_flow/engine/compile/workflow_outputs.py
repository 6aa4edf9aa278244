"""A workflow's output when it ends without its engine's own end: failed, or stopped.

Mistral evaluates a workflow's ``output`` when it succeeds and its ``output-on-error``
when it fails (``Workflow._succeed_workflow`` / ``_fail_workflow`` of
``mistral/engine/workflows.py``), whether its engine ended it or a user stopped it
(``Workflow.stop`` of a running execution with state SUCCESS or ERROR: both are
evaluated over ``_get_final_context()`` at that moment).  Without the clause the
output is the context itself (``data_flow.evaluate_workflow_output``: ``output or
ctx``); a failed workflow's output is ``{"result": message}`` with what
``output-on-error`` gives merged over it (``merge_dicts``).

Both are evaluated over Mistral's final context of a direct workflow at that moment
(``DirectWorkflowController.evaluate_workflow_final_context``): the merged outbound
contexts of the task executions that completed and fired no transition (none: empty;
:func:`final_context`), whatever order the tasks are declared in.  After a task
failure (:meth:`~.runner.Runner.record_failure`) the tasks that failed the workflow
count too, with what they published on error (:func:`failure_context`).  The inputs
and ``vars`` are visible to the expressions either way (Mistral's ``ContextView``
over ``wf_ex.context`` and input).

Both read a persisted flow detail only, so whichever process is asked evaluates them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.engine.compile import atoms, execution_scope
from tripleo_flow.engine.lang import expressions, workbook_model


def task_of(atom: str, workflow: workbook_model.WorkflowSpec) -> str | None:
    """The top-level task whose execution atom ``atom`` is (``task`` or, run again by
    a state machine, ``task[N]``), else None."""
    if execution_scope.internal(atom):
        return None
    name = atom.split("[", 1)[0] if atom.endswith("]") else atom
    return name if name in workflow.tasks else None


def _ends(fresh: Any, workflow: workbook_model.WorkflowSpec,
          failed: bool) -> list[Mapping[str, Any]]:
    """The outcomes of the task executions of flow detail ``fresh`` that completed
    (SUCCESS or ERROR) without firing a transition, in the order of its atoms; with
    ``failed``, also each task that failed the workflow, as its outbound context (what
    it received, with what it published on error)."""
    ends: list[Mapping[str, Any]] = []
    for ad in fresh:
        if task_of(ad.name, workflow) is None:
            continue
        results = ad.results
        if isinstance(results, Mapping) and results.get("state") in (atoms.SUCCESS, atoms.ERROR) \
                and isinstance(results.get("ctx"), Mapping) and not results.get("next"):
            ends.append(results)
            continue
        kept = (ad.meta or {}).get(execution_scope.ERROR_CONTEXT) if failed else None
        if isinstance(kept, Mapping):
            ends.append({"ctx": kept})
    return ends


def failure_context(fresh: Any, workflow: workbook_model.WorkflowSpec,
                    ctx: dict[str, Any]) -> dict[str, Any]:
    """``ctx`` (the inputs) updated with Mistral's final context of the execution of
    flow detail ``fresh`` that a task failure ended (``Workflow._fail_workflow``): the
    tasks that ended without firing a transition, the failed ones included with what
    they published on error, merged; whatever order the tasks are declared in."""
    ends = _ends(fresh, workflow, failed=True)
    if ends:
        ctx.update(atoms.merge_contexts(ends))
    return ctx


def final_context(fresh: Any, workflow: workbook_model.WorkflowSpec) -> dict[str, Any]:
    """Mistral's final context of the execution of flow detail ``fresh`` as it is now:
    the outbound contexts of its task executions that completed (SUCCESS or ERROR)
    without firing a transition, merged; empty when there is none yet."""
    ends = _ends(fresh, workflow, failed=False)
    return atoms.merge_contexts(ends) if ends else {}


def evaluator(fresh: Any, workflow: workbook_model.WorkflowSpec, ctx: Mapping[str, Any],
              limits: expressions.Limits, current: Mapping[str, Any] | None = None,
              globals_: Mapping[str, Any] | None = None) -> expressions.Evaluator:
    """An evaluator over ``ctx`` above the inputs and ``vars`` of ``fresh``'s execution,
    with ``task(name)`` the last execution of that task (null when it did not run);
    ``current``: the model of the task ``task()`` (and ``task(its name)``) reads;
    ``globals_``: what ``global(name)`` reads."""
    meta = fresh.meta or {}
    view = workbook_model.apply_inputs(workflow, meta.get("input") or {})
    env = dict(meta.get("env") or {})
    execution = {"id": fresh.uuid, "name": workflow.full_name,
                 "input": meta.get("input") or {}}
    if workflow.vars:
        view = atoms.start_context(workflow, view, lambda data: expressions.Evaluator(
            data, None, execution, limits, {"env": lambda: dict(env)}))
    view.update(ctx)
    latest: dict[str, Any] = {}
    for ad in fresh:
        task = task_of(ad.name, workflow)
        if task is not None and isinstance(ad.results, Mapping) \
                and ad.results.get("state") in (atoms.SUCCESS, atoms.ERROR):
            latest[task] = ad.results

    def lookup(name: str | None) -> Any:
        if current is not None and name in (None, current["name"]):
            return dict(current)
        outcome = latest.get(name or "")
        if outcome is not None:
            return {"name": name, "state": outcome.get("state"),
                    "result": outcome.get("result"), "published": outcome.get("published"),
                    "state_info": outcome.get("error")}
        if name in workflow.tasks:
            return None
        raise expressions.ExpressionError(f"task({name!r})", "unknown task")

    hooks: dict[str, Any] = {"env": lambda: dict(env)}
    if globals_ is not None:
        hooks["global"] = dict(globals_).get
    return expressions.Evaluator(view, lookup, execution, limits, hooks)


def on_error(fresh: Any, workflow: workbook_model.WorkflowSpec, ctx: dict[str, Any],
             cause: str | None, limits: expressions.Limits) -> Any:
    """The output of the failed execution of flow detail ``fresh``: ``{"result":
    cause}`` with ``output-on-error`` (without one: ``ctx`` itself) evaluated over
    ``ctx`` merged over it.  An expression that cannot be evaluated leaves
    ``{"result": "CAUSE (output-on-error could not be evaluated: WHY)"}`` (the error
    stays what the user reads first, as Mistral's message names both)."""
    output: dict[str, Any] = {"result": cause}
    try:
        value = evaluator(fresh, workflow, ctx, limits).evaluate(workflow.output_on_error)
    except Exception as exc:
        return {"result": f"{cause} (output-on-error could not be evaluated: {exc})"}
    value = value or ctx  # none given (or empty): the context itself, as Mistral
    if isinstance(value, Mapping):
        output.update(value)
        return output
    return value


def on_success(fresh: Any, workflow: workbook_model.WorkflowSpec, ctx: dict[str, Any],
               limits: expressions.Limits) -> Any:
    """The output of the execution of flow detail ``fresh`` ended SUCCESS now: its
    ``output`` evaluated over ``ctx`` (without one: ``ctx`` itself).

    :raises InvalidInput: an expression of ``output`` cannot be evaluated (Mistral's
        ``stop_workflow`` lets the error out and nothing changes)
    """
    if workflow.output is None:
        return ctx
    try:
        value = evaluator(fresh, workflow, ctx, limits).evaluate(workflow.output)
    except Exception as exc:
        raise exceptions.InvalidInput(
            f"Execution {fresh.uuid!r} cannot end SUCCESS: its workflow's output cannot "
            f"be evaluated now ({exc}). Stop it with state ERROR or CANCELLED.") from exc
    return value or ctx


def stopped(fresh: Any, workflow: workbook_model.WorkflowSpec, state: str,
            message: str | None, limits: expressions.Limits) -> Any:
    """The output of the execution of flow detail ``fresh`` stopped now in ``state``
    (``SUCCESS``, or ``FAILURE``: Mistral's ERROR) with ``message``, as Mistral's
    ``Workflow.stop``.

    :raises InvalidInput: SUCCESS and its ``output`` cannot be evaluated
    """
    ctx = final_context(fresh, workflow)
    if state == "SUCCESS":
        return on_success(fresh, workflow, ctx, limits)
    return on_error(fresh, workflow, ctx, message, limits)


__all__ = ["evaluator", "failure_context", "final_context", "on_error", "on_success",
           "stopped", "task_of"]
