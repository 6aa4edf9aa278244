"""TaskFlow engine tuning for long workflows.

After an atom succeeds, TaskFlow 6.5's selector examines *every descendant*
of it (breadth first) to find what may run next, and checks each candidate by
walking *every ancestor*, so a chain of N tasks costs O(N^2) (1000 tasks:
~10 s).  Both walks only matter for deciders (conditional links that IGNORE
whole branches), which compiled workbooks never use: their conditions are
evaluated inside the atoms.  :class:`FrontierSelector` examines only the next
atoms, and checks only their direct predecessors (looking through flow and
retry boundary markers), which makes scheduling linear.  Reverting, resuming
and retry handling are unchanged.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import taskflow.engines
from taskflow import states as st
from taskflow.engines.action_engine import compiler as co
from taskflow.engines.action_engine import deciders
from taskflow.engines.action_engine import selector as se


class FrontierSelector(se.Selector):  # type: ignore[misc]
    """A selector that looks only at the atoms right after a finished atom."""

    def _browse_atoms_for_execute(self, atom: Any = None) -> Iterator[tuple[Any, Any]]:
        if atom is None:
            yield from super()._browse_atoms_for_execute(atom=None)
            return
        for node in self._neighbours(atom, backward=False):
            is_ready, late_decider = self._get_maybe_ready_for_execute(node)
            if is_ready:
                yield (node, late_decider)


    def _neighbours(self, atom: Any, backward: bool) -> Iterator[Any]:
        graph = self._execution_graph
        step = graph.predecessors if backward else graph.successors
        seen: set[Any] = set()
        todo = deque(step(atom))
        while todo:
            node = todo.popleft()
            if node in seen:
                continue
            seen.add(node)
            if graph.nodes[node].get("kind") in co.ATOMS:
                yield node
            else:
                todo.extend(step(node))

    def _get_maybe_ready_for_execute(self, atom: Any) -> tuple[bool, Any]:
        def ready_checker(preds: Iterator[tuple[Any, tuple[str, str]]]) -> bool:
            return all(state in (st.SUCCESS, st.IGNORE) and intention in (st.EXECUTE, st.IGNORE)
                       for _pred, (state, intention) in preds)

        return self._get_maybe_ready(  # type: ignore[no-any-return]
            atom, st.RUNNING, [st.EXECUTE],
            lambda: self._neighbours(atom, backward=True), ready_checker,
            lambda: deciders.IgnoreDecider(atom, self._runtime.fetch_edge_deciders(atom)),
            for_what="execute")


class ProviderScope:
    """The atoms whose results an atom may read: exactly the providers of its requirements.

    TaskFlow's scope walker yields every ancestor (O(tasks) per lookup); in a
    compiled workbook every symbol has one provider, so naming the providers
    directly gives the same answer in O(requirements).
    """

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def __iter__(self) -> Iterator[list[str]]:
        yield self.names


def _provider_scopes(runtime: Any) -> None:
    graph = runtime.compilation.execution_graph
    atoms = [n for n, data in graph.nodes(data=True) if data.get("kind") in co.ATOMS]
    providers: dict[str, list[str]] = {}
    for atom in atoms:
        for symbol in atom.provides:
            providers.setdefault(symbol, []).append(atom.name)
    for atom in atoms:
        names = sorted({p for symbol in atom.requires for p in providers.get(symbol, ())})
        runtime._atom_cache[atom.name]["scope_walker"] = ProviderScope(names)


def load(flow: Any, **kwargs: Any) -> Any:
    """``taskflow.engines.load`` with linear-time scheduling and argument lookup.

    Only for flows built by :mod:`tripleo_flow.flows.compiler` (no deciders,
    one provider per symbol).
    """
    engine = taskflow.engines.load(flow, **kwargs)
    engine.compile()
    runtime = getattr(engine, "_runtime", None)
    cache = getattr(runtime, "_atom_cache", None)
    if runtime is not None and isinstance(cache, dict) and "_builder" not in vars(runtime):
        runtime._selector = FrontierSelector(runtime)
        _provider_scopes(runtime)
    return engine
