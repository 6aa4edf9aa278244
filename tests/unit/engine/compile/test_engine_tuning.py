"""The engine tuning stays installed (a TaskFlow upgrade must not silently drop it), on
the engines ``engine.load`` builds and on nothing else in the process (issue 28)."""

from __future__ import annotations

import threading
from concurrent import futures
from typing import Any

from taskflow import task
from taskflow.patterns import graph_flow

from tripleo_flow.actions import std
from tripleo_flow.engine.compile import action_atom, atoms, engine, signatures
from tripleo_flow.engine.lang.workbook_model import TaskSpec, WorkflowSpec


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


def test_the_linear_graph_merge_gives_taskflows_result() -> None:
    from taskflow.types import graph as tf_graph

    first = tf_graph.DiGraph(name="first")
    first.add_node("a", kind="flow")
    first.add_edge("a", "b", x=1)
    second = tf_graph.DiGraph(name="second")
    second.add_node("c", kind="task")
    second.add_edge("c", "d")
    third = tf_graph.DiGraph(name="third")
    third.add_node("e", kind="task", extra=True)
    ours = engine.merge_graphs(first, second, third)
    theirs = engine._TASKFLOW_MERGE(first, second, third)
    assert type(ours) is type(theirs) and ours.name == theirs.name == "first"
    assert list(ours.nodes(data=True)) == list(theirs.nodes(data=True))
    assert list(ours.edges(data=True)) == list(theirs.edges(data=True))
    assert engine.merge_graphs(first) is first and list(first.nodes) == ["a", "b"]
    overlapping = tf_graph.DiGraph(name="again")
    overlapping.add_node("b")
    for merge in (engine.merge_graphs, engine._TASKFLOW_MERGE):
        try:
            merge(first, second, overlapping)
        except ValueError as exc:
            assert "1 overlapping nodes" in str(exc)
        else:
            raise AssertionError("an overlap was merged")
    assert list(engine.merge_graphs(first, overlapping, allow_overlaps=True).nodes) == ["a", "b"]


def test_the_indexed_hierarchy_finds_the_node_a_search_finds() -> None:
    flow, _runtime = _chain(4)
    loaded = engine.load(flow, store={atoms.input_symbol(""): {"state": "SUCCESS", "ctx": {},
                                                               "next": ["*"]}})
    hierarchy = loaded._runtime.compilation.hierarchy
    assert "find" in vars(hierarchy)  # this compilation's own index
    for atom in flow:
        assert hierarchy.find(atom) is type(hierarchy).find(hierarchy, atom)
        walker = loaded._runtime._atom_cache[atom.name]["scope_walker"]
        assert isinstance(walker, engine.ProviderScope)
    assert hierarchy.find("no such atom") is None


def test_only_engines_load_builds_get_the_linear_merge(monkeypatch: Any) -> None:
    """Another TaskFlow user in the process compiles with TaskFlow's own merge, and its
    hierarchy's search is TaskFlow's own; ours compile with the linear one."""
    import taskflow.engines

    calls: list[int] = []
    linear = engine.merge_graphs

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return linear(*args, **kwargs)

    monkeypatch.setattr(engine, "merge_graphs", counted)
    flow, _runtime = _chain(3)
    engine.load(flow, store={atoms.input_symbol(""): {"state": "SUCCESS", "ctx": {},
                                                      "next": ["*"]}})
    assert calls, "the engine load() built did not compile with the linear merge"
    calls.clear()
    theirs = graph_flow.Flow("theirs").add(_Where("x", {}), _Where("y", {}, ["x"]))
    other = taskflow.engines.load(theirs)
    other.compile()
    assert calls == []
    assert "find" not in vars(other._runtime.compilation.hierarchy)
    other.run()
    assert other.storage.fetch("y") == "y"


class _Where(task.Task):  # type: ignore[misc]
    """Notes the thread it runs in; with a barrier, waits for its sibling to run too."""

    def __init__(self, name: str, seen: dict[str, int], requires: list[str] = (),
                 barrier: threading.Barrier | None = None) -> None:
        super().__init__(name=name, provides=name, requires=list(requires))
        self.seen, self.barrier = seen, barrier

    def execute(self, **kwargs: Any) -> str:
        self.seen[self.name] = threading.get_ident()
        if self.barrier is not None:
            self.barrier.wait()  # raises (the task fails) if the sibling never runs
        return self.name


def test_a_chain_runs_in_the_engine_thread_and_branches_in_parallel_on_the_pool() -> None:
    seen: dict[str, int] = {}
    barrier = threading.Barrier(2, timeout=10)
    flow = graph_flow.Flow("shape").add(
        _Where("a", seen), _Where("b", seen, ["a"]),
        _Where("x", seen, ["b"], barrier), _Where("y", seen, ["b"], barrier),
        _Where("z", seen, ["x", "y"]))
    with futures.ThreadPoolExecutor(4) as pool:
        loaded = engine.load(flow, engine="parallel", executor=pool)
        assert isinstance(loaded._runtime.builder._waiter.__self__, engine.HeldExecutor)
        loaded.run()
    me = threading.get_ident()
    assert seen["a"] == seen["b"] == seen["z"] == me  # alone: no hand-off to the pool
    assert seen["x"] != me and seen["y"] != me and seen["x"] != seen["y"]  # together


def test_a_held_task_cancelled_before_the_engine_waits_never_runs() -> None:
    ran: list[str] = []
    with futures.ThreadPoolExecutor(1) as pool:
        held = engine.HeldExecutor(pool)
        future = held.submit(ran.append, "x")
        assert future.cancel()
        done, _ = held.wait_for_any([future], timeout=5)
    assert future in done and future.cancelled() and ran == []


class _Named(task.Task):  # type: ignore[misc]
    """An atom with named arguments (TaskFlow's own mapping, for comparison)."""

    def execute(self, output: Any = None, times: int = 1) -> Any:
        return output

    def revert(self, result: Any, output: Any = None, **kwargs: Any) -> None:
        pass


class _CachedNamed(signatures.CachedSignatures, _Named):
    """The same atom, mapped through the cached signatures."""


def test_atoms_map_their_arguments_as_taskflow_does() -> None:
    plain_atom = type("PlainAtom", (task.Task,), {
        "execute": atoms._WorkbookAtom.execute, "revert": action_atom.ActionAtom.revert})
    flow, _runtime = _chain(2)
    ours = list(flow)[1]
    theirs = plain_atom(name=ours.name, provides=list(ours.provides),
                        requires=list(ours.requires))
    named = _CachedNamed(name="e", requires=["output"])
    for mine, taskflows in ((ours, theirs), (named, _Named(name="e", requires=["output"]))):
        for attr in ("rebind", "requires", "optional", "revert_rebind", "revert_optional"):
            assert list(getattr(mine, attr).items() if attr.endswith("rebind") else
                        getattr(mine, attr)) == list(
                getattr(taskflows, attr).items() if attr.endswith("rebind") else
                getattr(taskflows, attr)), attr
    # Workbook atoms (any keyword): each requirement as named, whatever revert they have.
    for revert in (action_atom.ActionAtom.revert, task.Task.revert):
        mine_cls = type("Mine", (atoms._WorkbookAtom,), {"revert": revert})
        plain_cls = type("Plain", (task.Task,), {"execute": atoms._WorkbookAtom.execute,
                                                 "revert": revert})
        requires = ["task:a", "result", "task:a", "flow_failures", "wf:"]
        mine = mine_cls.__new__(mine_cls)
        task.Task.__init__(mine, name="m", requires=requires)
        plain = plain_cls(name="m", requires=requires)
        for attr in ("rebind", "revert_rebind"):
            assert list(getattr(mine, attr).items()) == list(getattr(plain, attr).items())
        for attr in ("requires", "optional", "revert_optional"):
            assert list(getattr(mine, attr)) == list(getattr(plain, attr)), attr
    for build in (lambda: _CachedNamed(name="e", rebind={"nope": "x"}),
                  lambda: _Named(name="e", rebind={"nope": "x"})):
        try:
            build()
        except ValueError as exc:
            assert "Extra arguments given to atom e: ['nope']" in str(exc)
        else:
            raise AssertionError("an argument execute does not take was accepted")
    # TaskFlow still maps through the atom's _build_arg_mapping (else the cache is dropped).
    calls: list[Any] = []
    real = signatures.bound_signature
    try:
        signatures.bound_signature = lambda method: calls.append(method) or real(method)
        _CachedNamed(name="again", requires=["output"])
    finally:
        signatures.bound_signature = real
    assert len(calls) == 2


def test_engines_run_with_fewer_young_collections_then_the_thresholds_come_back() -> None:
    import gc

    before = gc.get_threshold()
    seen: list[tuple[int, ...]] = []
    with engine.fewer_collections():
        seen.append(gc.get_threshold())
        with engine.fewer_collections():  # a second run at the same time shares it
            seen.append(gc.get_threshold())
        seen.append(gc.get_threshold())
    assert seen == [(max(before[0], engine.YOUNG_THRESHOLD), *before[1:])] * 3
    assert gc.get_threshold() == before
    try:
        with engine.fewer_collections():
            gc.set_threshold(123, 4, 5)  # changed meanwhile: left as it was set
        assert gc.get_threshold() == (123, 4, 5)
    finally:
        gc.set_threshold(*before)


def test_held_tasks_a_guard_refuses_never_start_and_end_cancelled() -> None:
    ran: list[str] = []
    answers = [False, True]
    with futures.ThreadPoolExecutor(1) as pool:
        held = engine.HeldExecutor(pool, guard=lambda _names: answers.pop(0))
        refused = [held.submit(ran.append, "x"), held.submit(ran.append, "y")]
        done, _ = held.wait_for_any(refused, timeout=5)
        assert set(done) == set(refused) and all(f.cancelled() for f in refused)
        allowed = held.submit(ran.append, "z")
        done, _ = held.wait_for_any([allowed], timeout=5)
    assert allowed in done and not allowed.cancelled() and ran == ["z"]
    assert answers == []  # asked once per start, not per task


def test_a_task_handed_to_a_busy_pool_runs_though_the_engine_suspends() -> None:
    """TaskFlow cancels the futures of a suspending engine (a ``pause`` transition of
    another task) that have not ended; one handed over is running, so a task still
    queued on a busy pool is not dropped (TaskFlow had marked it RUNNING: the run
    ended REVERTED, or its resume ran it as new) but runs, as Mistral's started task."""
    ran: list[str] = []
    gate = threading.Event()
    with futures.ThreadPoolExecutor(1) as pool:
        busy = pool.submit(gate.wait, 5)  # the pool's one thread is taken
        held = engine.HeldExecutor(pool)
        handed = [held.submit(ran.append, "x"), held.submit(ran.append, "y")]
        _done, not_done = held.wait_for_any(handed, timeout=0.01)
        assert set(not_done) == set(handed)  # queued behind the busy one
        assert not any(f.cancel() for f in handed)  # TaskFlow's cancel_futures
        gate.set()
        futures.wait(handed, timeout=5)
        assert busy.result() is True
    assert not any(f.cancelled() for f in handed) and sorted(ran) == ["x", "y"]
