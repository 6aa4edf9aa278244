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

Compiling has the same trouble: TaskFlow merges each child's graph into a
*new copy* of the graph built so far (``networkx.compose``), O(N^2) for a flow
of N atoms (2000 tasks: ~5 s of an 8 s run).  :func:`merge_graphs` merges into
one copy, with the same result and the same overlap check.  And each atom's scope
walker finds its atom in the compiled hierarchy by a depth-first search (O(N) per
atom): :func:`_index_hierarchy` answers that search from an index of the hierarchy
built once per compilation (the same first match).

Both apply to the engines :func:`load` builds and to nothing else in the process:
the hierarchy's index is an attribute of that engine's compilation, and the
linear merge serves only a thread while it compiles such an engine.  TaskFlow has
no seam for its graph merge, so its compiler's lookup of ``merge_graphs`` reaches a
dispatcher (:func:`_merge_for_this_thread`, put in place on the first :func:`load`)
that gives every other caller TaskFlow's own merge, unchanged.  The linear merge is
what TaskFlow itself could adopt (same result, same overlap check).

Running a chain, the parallel engine hands every task to a pool thread and
waits for it: two thread switches per task, contended for the GIL.
:class:`HeldExecutor` (per engine) keeps what the engine submits until the
engine waits; a task that is then all the engine waits for runs in the
engine's own thread, anything else goes to the pool as before; handed over, a
task has started (its future running), so an engine that suspends meanwhile (a
pause) lets it end rather than cancel it while it is queued.  Given a
``guard``, it asks it right before it starts anything: refused, nothing held
starts (its futures end cancelled, which TaskFlow treats as work left for a
resumed run), so a task never starts in an engine that must stop (a conductor
that lost its claim).

A long workflow's engine also keeps tens of thousands of objects (atoms, their
details, the graph) for its whole run, which CPython's cyclic garbage
collector scans again and again (a 10,000-task chain: 15 % of its time);
:func:`fewer_collections` makes young collections rarer while engines run.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent import futures
from typing import Any

import taskflow.engines
from taskflow import states as st
from taskflow.engines.action_engine import builder as bu
from taskflow.engines.action_engine import compiler as co
from taskflow.engines.action_engine import deciders
from taskflow.engines.action_engine import selector as se
from taskflow.types import graph as tf_graph

from tripleo_flow.common import clock
from tripleo_flow.engine.store import engine_storage


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


_TASKFLOW_MERGE = tf_graph.merge_graphs


def merge_graphs(graph: Any, *graphs: Any, **kwargs: Any) -> Any:
    """TaskFlow's ``merge_graphs`` (a new graph holding ``graph`` and ``graphs``; a
    ValueError when one overlaps what is merged so far, unless ``allow_overlaps``)
    in linear time: every graph is added to one copy of ``graph``, as
    ``networkx.compose`` adds them (later node, edge and graph attributes win)."""
    if not graphs:
        return graph
    allow_overlaps = kwargs.get("allow_overlaps", False)
    detector = kwargs.get("overlap_detector")
    if detector is not None and not callable(detector):
        raise ValueError("Overlap detection callback expected to be callable")
    if detector is None:
        def detector(to_graph: Any, from_graph: Any) -> int:
            return sum(1 for node in from_graph.nodes if node in to_graph)
    merged = graph.__class__()
    merged.graph.update(graph.graph)
    merged.add_nodes_from(graph.nodes(data=True))
    merged.add_edges_from(graph.edges(data=True))
    for other in graphs:
        if not allow_overlaps:
            overlaps = detector(merged, other)
            if overlaps:
                raise ValueError(
                    f"Can not merge graph {other} into {merged} since there are "
                    f"{overlaps} overlapping nodes (and we do not support merging nodes)")
        merged.graph.update(other.graph)
        merged.add_nodes_from(other.nodes(data=True))
        merged.add_edges_from(other.edges(data=True))
    merged.name = graph.name
    return merged


#: Whether this thread is compiling an engine :func:`load` builds.
_COMPILING = threading.local()
_MERGE_LOCK = threading.Lock()


def _merge_for_this_thread(graph: Any, *graphs: Any, **kwargs: Any) -> Any:
    """TaskFlow's compiler's ``merge_graphs``: :func:`merge_graphs` while this thread
    compiles an engine :func:`load` builds, TaskFlow's own otherwise."""
    if getattr(_COMPILING, "active", False):
        return merge_graphs(graph, *graphs, **kwargs)
    return _TASKFLOW_MERGE(graph, *graphs, **kwargs)


def _install_merge() -> None:
    """Put :func:`_merge_for_this_thread` where TaskFlow's compiler looks for its merge
    (once; a merge someone else installed since is left alone)."""
    with _MERGE_LOCK:
        if tf_graph.merge_graphs is _TASKFLOW_MERGE:
            tf_graph.merge_graphs = _merge_for_this_thread


def _index_hierarchy(hierarchy: Any) -> None:
    """Answer ``hierarchy.find(item)`` (what each atom's scope walker asks while the
    runtime compiles: a depth-first search) from an index built once: the first node
    of each item in depth-first order, the node the search returns.  Only this
    compilation's root changes; any other kind of search is TaskFlow's own."""
    index: dict[Any, Any] = {}
    for node in hierarchy.dfs_iter(include_self=True):
        index.setdefault(node.item, node)
    search = hierarchy.find

    def find(item: Any, only_direct: bool = False, include_self: bool = True) -> Any:
        if only_direct or not include_self:
            return search(item, only_direct=only_direct, include_self=include_self)
        return index.get(item)

    hierarchy.find = find


def _tune_compiler(engine: Any) -> None:
    """Make ``engine``'s pattern compiler (only this engine's) merge graphs in linear
    time and index the hierarchy it compiles."""
    _install_merge()
    patterns = engine._compiler
    compile_patterns = patterns.compile

    def compile_tuned() -> Any:
        _COMPILING.active = True
        try:
            compilation = compile_patterns()
        finally:
            _COMPILING.active = False
        if "find" not in vars(compilation.hierarchy):
            _index_hierarchy(compilation.hierarchy)
        return compilation

    patterns.compile = compile_tuned


class HeldExecutor(futures.Executor):
    """The executor of one parallel engine: what is submitted waits for the engine
    to wait (:meth:`wait_for_any`, the engine's waiter), then runs in the waiting
    thread when it is the one thing waited for (a chain), else on ``pool``.

    The engine waits right after it schedules, holding no lock, so a held task
    starts as soon as it would on the pool; tasks scheduled together, or while
    another one runs, still run in parallel.

    :param guard: called in the engine's thread before held tasks start (holding
        no storage lock), with the names of their atoms; False: none of them starts,
        their futures are cancelled
    :param on_refused: then called (same thread, no lock) with the names of the
        atoms whose futures were cancelled (TaskFlow marked them RUNNING already)
    """

    def __init__(self, pool: futures.Executor,
                 guard: Callable[[list[str]], bool] | None = None,
                 on_refused: Callable[[list[str]], None] | None = None) -> None:
        self._pool = pool
        self._guard = guard
        self._on_refused = on_refused
        self._held: list[tuple[futures.Future[Any], Callable[..., Any], Any, Any]] = []
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
               ) -> futures.Future[Any]:
        future: futures.Future[Any] = futures.Future()
        with self._lock:
            self._held.append((future, fn, args, kwargs))
        return future

    def wait_for_any(self, fs: Iterable[futures.Future[Any]], timeout: float | None = None
                     ) -> Any:
        """Start what is held, then wait like TaskFlow's waiter."""
        fs = list(fs)
        with self._lock:
            held, self._held = self._held, []
        if held and self._guard is not None:
            # TaskFlow submits (fn, atom, ...)
            names = [getattr(args[0], "name", "") for _f, _fn, args, _kw in held if args]
            if not self._guard(names):
                for future, *_ in held:
                    future.cancel()  # pending: always cancels; waiters see it done
                    future.set_running_or_notify_cancel()
                if self._on_refused is not None:
                    self._on_refused(names)
                held = []
        # Handed over, each future is running: TaskFlow's cancel of a suspending
        # engine's futures (``cancel_futures``) no longer drops one still queued on a
        # busy pool, which it had marked RUNNING and would leave so (the task never
        # ran; the run then ended REVERTED, or a resume ran it as new).  A task
        # scheduled before a pause runs to its end, as Mistral's started task does.
        held = [item for item in held if item[0].set_running_or_notify_cancel()]
        if len(held) == 1 and fs == [held[0][0]]:
            _run(*held[0], inline=True)
        else:
            for item in held:
                self._pool.submit(_run, *item)
        return clock.wait_futures(fs, timeout)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing: the pool is not this executor's."""


def _run(future: futures.Future[Any], fn: Callable[..., Any], args: Any, kwargs: Any,
         inline: bool = False) -> None:
    """Run ``fn`` for ``future`` (running already: :meth:`HeldExecutor.wait_for_any`)."""
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:
        future.set_exception(exc)
        if inline and not isinstance(exc, Exception):
            raise  # KeyboardInterrupt, SystemExit: in the engine's thread, as they came
    else:
        future.set_result(result)


#: Allocations between young collections while an engine runs (CPython's default: 700).
YOUNG_THRESHOLD = 10_000


class _Runs:
    """How many blocks run with fewer collections, and the thresholds found and set."""

    lock = threading.Lock()
    count = 0
    saved: tuple[int, ...] = ()
    set: tuple[int, ...] = ()


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the block with young garbage collections every :data:`YOUNG_THRESHOLD`
    allocations at least as rare (process-wide: runs in several threads share it; the
    last one to end puts back the thresholds it found, unless something changed them
    since).  Nothing else changes: collections still happen, later."""
    with _Runs.lock:
        if _Runs.count == 0:
            _Runs.saved = gc.get_threshold()
            gc.set_threshold(max(_Runs.saved[0], YOUNG_THRESHOLD), *_Runs.saved[1:])
            _Runs.set = gc.get_threshold()
        _Runs.count += 1
    try:
        yield
    finally:
        with _Runs.lock:
            _Runs.count -= 1
            if _Runs.count == 0 and gc.get_threshold() == _Runs.set:
                gc.set_threshold(*_Runs.saved)


def load(flow: Any, **kwargs: Any) -> Any:
    """``taskflow.engines.load`` with linear-time scheduling and argument lookup, a
    cheaper storage guard (:mod:`.engine_storage`), and (a parallel engine given a
    pool as ``executor``) a :class:`HeldExecutor`, with ``guard`` and ``on_refused``
    if given.

    Only for flows built by :mod:`tripleo_flow.engine.compile.compiler` (no deciders,
    one provider per symbol).
    """
    held = None
    pool = kwargs.get("executor")
    guard = kwargs.pop("guard", None)
    on_refused = kwargs.pop("on_refused", None)
    if kwargs.get("engine") == "parallel" and isinstance(pool, futures.Executor):
        held = kwargs["executor"] = HeldExecutor(pool, guard, on_refused)
    elif guard is not None:
        raise ValueError("a guard needs the parallel engine given a pool as executor")
    store = kwargs.pop("store", None)
    engine = taskflow.engines.load(flow, **kwargs)
    _tune_compiler(engine)
    engine_storage.install(engine)
    if store:
        # In memory only: the runner rebuilds it from the execution's record at each
        # run and resume (a persisted copy would add one of the whole input to it).
        # An execution recorded with a persisted one (an older version) has it
        # replaced, as before: a persisted value would be found first.
        flow_detail = kwargs.get("flow_detail")
        persisted = flow_detail is not None and any(
            ad.name == engine.storage.injector_name for ad in flow_detail)
        engine.storage.inject(store, transient=not persisted)
    engine.compile()
    runtime = getattr(engine, "_runtime", None)
    cache = getattr(runtime, "_atom_cache", None)
    if runtime is not None and isinstance(cache, dict) and "_builder" not in vars(runtime):
        runtime._selector = FrontierSelector(runtime)
        if type(runtime.task_action) is engine_storage.task_action.TaskAction:
            # Its hot path (schedule, complete) looks change_state up on the instance.
            runtime.task_action.__class__ = engine_storage.OneSaveTaskAction
        _provider_scopes(runtime)
        if held is not None:
            runtime._builder = bu.MachineBuilder(runtime, held.wait_for_any)
    return engine
