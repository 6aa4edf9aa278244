"""The atoms at a workflow's bounds in a compiled graph: :class:`EnterAtom` starts a
``workflow:`` task run inline (the sub-workflow's input and start context), and
:class:`ExitAtom` ends a workflow (its output; for a sub-workflow, its task's publish
and transitions, or its failure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tripleo_flow.engine.compile.atoms import (
    UNHANDLED,
    Links,
    Runtime,
    _WorkbookAtom,
    input_symbol,
    start_context,
    task_symbol,
)
from tripleo_flow.engine.lang import expressions
from tripleo_flow.engine.lang.workbook_model import TaskSpec, WorkflowSpec, apply_inputs
from tripleo_flow.engine.store.states import SKIPPED, SUCCESS
from tripleo_flow.exceptions import TaskFailed


class EnterAtom(_WorkbookAtom):
    """Start of a ``workflow:`` task: evaluates the sub-workflow's input."""

    def __init__(self, name: str, spec: TaskSpec, links: Links, runtime: Runtime,
                 child: WorkflowSpec, child_prefix: str, extra_requires: Sequence[str] = ()
                 ) -> None:
        super().__init__(name, spec, links, runtime, extra_requires=extra_requires,
                         provides=input_symbol(child_prefix))
        self.child = child

    def _run(self, **kwargs: Any) -> dict[str, Any]:
        chosen = self._selected(kwargs)
        if not self._active(chosen):
            skipped = self._skipped(kwargs)
            return {**skipped, "parent": skipped["ctx"]}
        self.runtime.scope.began.add(self.links.prefix + self.spec.name)
        ctx = self._merge(chosen)
        evaluator = self._evaluator(ctx, kwargs)
        self._wait("wait-before", self.spec.wait_before, evaluator)
        child_ctx = start_context(self.child, apply_inputs(self.child,
                                                           self._task_input(evaluator)),
                                  lambda given: self._evaluator(given, kwargs))
        return {"state": SUCCESS, "ctx": child_ctx, "next": ["*"], "parent": ctx}


class ExitAtom(_WorkbookAtom):
    """End of a workflow: evaluates its output (and, for a sub-workflow, publishes)."""

    def __init__(self, name: str, spec: TaskSpec, links: Links, runtime: Runtime,
                 child: WorkflowSpec, child_prefix: str, child_atoms: Sequence[str],
                 provides: str | None = None) -> None:
        extra = [input_symbol(child_prefix)] + [task_symbol(a) for a in child_atoms]
        super().__init__(name, spec, links, runtime, extra_requires=extra, provides=provides)
        self.child = child
        self.child_prefix = child_prefix
        self.child_atoms = tuple(child_atoms)

    def _run(self, **kwargs: Any) -> dict[str, Any]:
        enter = kwargs[input_symbol(self.child_prefix)]
        if enter.get("state") == SKIPPED:
            return {"state": SKIPPED, "next": [], "ctx": dict(enter.get("parent") or {})}
        ctx = dict(enter.get("ctx") or {})
        for atom in self.child_atoms:  # the last tasks: their contexts hold all published
            ctx.update(kwargs[task_symbol(atom)].get("ctx") or {})
        error = self._unhandled_error(self.child_prefix)
        if error is not None and self.spec.name == "":
            raise self.runtime.scope.failure("", error)
        parent = dict(enter.get("parent") or {})
        if error is not None:  # the sub-workflow failed: its task fails, as Mistral's
            outcome = self._finish(parent, kwargs, None, error)
            cause = self.runtime.scope.sole_cause(self.child_prefix)  # kept as raised
            if outcome.get(UNHANDLED) == "now" and not self._contain(outcome, cause):
                raise TaskFailed(error)
            return outcome
        output = self.child.output
        scope, prefix = self.runtime.scope, self.child_prefix

        def lookup(name: str | None) -> Any:
            found = scope.latest_task(prefix, name) if name else None
            if found is None and name in self.child.tasks:
                return None  # a task of the workflow that did not run: null, as Mistral
            if found is None:
                raise expressions.ExpressionError(f"task({name!r})", "no task of this name "
                                                  "ran in the workflow")
            return found

        result = expressions.Evaluator(self.runtime.scope.with_globals(ctx), lookup,
                                       self.runtime.execution, self.runtime.expression_limits,
                                       self._hooks()).evaluate(output) \
            if output is not None else ctx
        if self.spec.name == "":  # the top-level workflow: its output, and no context
            # (nothing reads it after the end; kept, it would double the record's input)
            return {"state": SUCCESS, "result": result, "ctx": {}, "next": []}
        outcome = self._finish(parent, kwargs, result, None)
        self._wait("wait-after", self.spec.wait_after, self._evaluator(outcome["ctx"], kwargs))
        return outcome


__all__ = ["EnterAtom", "ExitAtom"]
