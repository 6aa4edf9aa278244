"""The engine tuning stays installed (a TaskFlow upgrade must not silently drop it)."""

from __future__ import annotations

from concurrent import futures
from typing import Any

from taskflow.patterns import graph_flow

from tripleo_flow.actions import std
from tripleo_flow.flows import action_atom, atoms, engine
from tripleo_flow.flows.workbook_model import TaskSpec, WorkflowSpec


def _chain(n: int) -> Any:
    runtime = atoms.Runtime(lambda name: std.Noop, None, futures.ThreadPoolExecutor(1))
    tasks = []
    for i in range(n):
        links = atoms.Links(prefix="", preds=(f"t{i - 1}",) if i else (), start=i == 0)
        tasks.append(action_atom.ActionAtom(f"t{i}", TaskSpec(name=f"t{i}", action="std.noop"),
                                      links, runtime))
    return graph_flow.Flow("chain").add(*tasks), runtime


def test_selector_and_scopes_are_replaced() -> None:
    flow, _runtime = _chain(3)
    loaded = engine.load(flow, store={atoms.input_symbol(""): {"state": "SUCCESS", "ctx": {},
                                                               "next": ["*"]}})
    assert isinstance(loaded._runtime._selector, engine.FrontierSelector)
    scope = loaded._runtime._atom_cache["t2"]["scope_walker"]
    assert isinstance(scope, engine.ProviderScope)
    assert list(scope) == [["t1"]]


def test_workflow_spec_names() -> None:
    spec = WorkflowSpec(name="w", workbook="wb", path="x.yaml")
    assert spec.full_name == "wb.w"
