"""Test doubles for the workflow engine: recording actions and a small API host.

``python -m tests.engine_helpers run DATA_DIR WORKFLOW JSON_INPUT KILL_EVENT KILL_AT``
runs a workflow and kills its own process with SIGKILL when the KILL_AT-th
event named KILL_EVENT arrives (for the crash/resume test).
``python -m tests.engine_helpers resume DATA_DIR EXECUTION_ID ALLOW_PLAN_CODE`` resumes
an execution in a new process (``ALLOW_PLAN_CODE``: ``true`` or ``false``) and prints
how it ended.
``python -m tests.engine_helpers start-then-wait DATA_DIR WORKFLOW JSON_INPUT`` starts a
workflow without waiting for it, prints its id, then sleeps (for a test to kill it).
``python -m tests.engine_helpers conductor DATA_DIR JSON_OVERRIDES NAME [CONCURRENCY]`` runs a
conductor (with these test actions) until SIGTERM; JSON_OVERRIDES maps
``group.option`` to a value (``jobboard.backend_url``, ``workflows.connection``...).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from taskflow import task
from taskflow.types import failure

from tripleo_flow import config, exceptions
from tripleo_flow.actions import std
from tripleo_flow.actions.base import Action, Rerun, reverter
from tripleo_flow.actions.parameters import UpdateParameters
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import Client
from tripleo_flow.common import clock
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks

WORKBOOKS = Path(__file__).parent / "workbooks"


def until(what: str, check: Callable[[], Any], timeout: float = 60) -> Any:
    """What ``check`` gives once it is true (asked every 0.05 s); AssertionError
    naming ``what`` after ``timeout`` seconds."""
    deadline = clock.monotonic() + timeout
    while clock.monotonic() < deadline:
        found = check()
        if found:
            return found
        clock.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class ActionTask(task.Task):  # type: ignore[misc]
    """A TaskFlow task running one action, for tests composing actions by hand (to see
    them revert after a later task fails): its inputs are the action's ``execute``
    parameters, its revert the action's (none: it undoes nothing), as the workflow
    engine's atom calls them.

    :param provides: the name its result is stored under (none: not stored)
    """

    def __init__(self, action: Action, provides: str | None = None, **kwargs: Any) -> None:
        self.action = action
        # TaskFlow maps (and calls) the bound methods of the action itself.
        self.execute = action.execute
        self.revert = reverter(action) or _undoes_nothing
        super().__init__(name=kwargs.pop("name", type(action).__name__), provides=provides,
                         **kwargs)

    def execute(self, *args: Any, **kwargs: Any) -> Any:  # replaced by the action's
        raise NotImplementedError


def _undoes_nothing(*_args: Any, **_kwargs: Any) -> None:
    """The revert of an action that defines none."""


def run_linear(flow: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """Run a TaskFlow flow of actions in memory (tests composing actions by hand, e.g.
    to see them revert after a later task fails); re-raise the failed task's error."""
    from taskflow import engines
    from taskflow import exceptions as tf_exceptions

    engine = engines.load(flow, store=dict(inputs), engine="serial")
    try:
        engine.run()
    except tf_exceptions.WrappedFailure as wrapped:
        next(iter(wrapped)).reraise()
    return dict(engine.storage.fetch_all())


class Record(Action):
    """Append 'do VALUE' to a log file (idempotent with once=True)."""

    def execute(self, path: str, value: str, fail: bool = False, once: bool = False) -> str:
        if fail:
            raise RuntimeError(f"boom {value}")
        log = Path(path)
        if once and log.exists() and f"do {value}\n" in log.read_text():
            return value
        with log.open("a") as handle:
            handle.write(f"do {value}\n")
        return value

    def revert(self, result: Any, path: str, value: str, **kwargs: Any) -> None:
        """Append 'undo VALUE' (nothing when execute failed)."""
        if isinstance(result, failure.Failure):
            return
        with Path(path).open("a") as handle:
            handle.write(f"undo {value}\n")


class Gate:
    """A place a :class:`Hold` task waits at until the test opens it (in-process runs)."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.opened = threading.Event()
        #: How many times a task came to it.
        self.calls = 0


#: The gates of this process, by name (:func:`gate_of`).
GATES: dict[str, Gate] = {}
_GATES_LOCK = threading.Lock()


def gate_of(name: str) -> Gate:
    """The gate ``name`` (made on first use)."""
    with _GATES_LOCK:
        return GATES.setdefault(name, Gate())


class Hold(Action):
    """Wait at gate ``gate`` until the test opens it (an error after 60 s: a test that
    forgot it), then return ``gate`` (or fail, with ``fail``)."""

    def execute(self, gate: str, fail: bool = False) -> str:
        held = gate_of(gate)
        with _GATES_LOCK:
            held.calls += 1
        held.reached.set()
        if not held.opened.wait(60):
            raise RuntimeError(f"gate {gate!r} was never opened")
        if fail:
            raise RuntimeError(f"boom {gate}")
        return gate


class RecordPlanCode(Record):
    """Record, as an action that runs code taken from the plan would run it."""

    runs_plan_code = True


class AsyncRecord(Action):
    """Append 'started' to ``path``, then wait for a client to complete it."""

    rerun = Rerun.CALLER
    asynchronous = True

    def execute(self, path: str) -> None:
        with open(path, "a", encoding="utf-8") as out:
            out.write("started\n")


class Flaky(Action):
    """Fail until called ``failures`` + 1 times (calls counted in a file)."""

    def execute(self, counter: str, failures: int) -> int:
        path = Path(counter)
        calls = int(path.read_text()) + 1 if path.exists() else 1
        path.write_text(str(calls))
        if calls <= failures:
            raise RuntimeError(f"flaky call {calls}")
        return calls


class Count(Action):
    """Return how many times it was called (counted in a file)."""

    def execute(self, counter: str) -> int:
        path = Path(counter)
        calls = int(path.read_text()) + 1 if path.exists() else 1
        path.write_text(str(calls))
        return calls


class CrashOnce(Action):
    """SIGKILL the whole process the first time (a marker file remembers), then return."""

    def execute(self, marker: str) -> str:
        path = Path(marker)
        if not path.exists():
            path.write_text("crashed")
            os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(10)
        return "ran"


class UpdateParametersThenCrash(UpdateParameters):
    """``parameters.update``, then SIGKILL the process the first time (a marker file
    remembers): killed after the plan changed, before the task's result was saved."""

    def execute(self, plan: str, parameters: dict[str, Any],  # type: ignore[override]
                marker: str) -> dict[str, Any]:
        record = super().execute(plan, parameters)
        path = Path(marker)
        if not path.exists():
            path.write_text("crashed")
            os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(10)
        return record


class MemoryJournal:
    """The undo journal of one task (:class:`~tripleo_flow.actions.base.UndoJournal`), as
    a resumed execution's re-run of that task sees it: the first run keeps its record
    (through JSON, as the executions database does), the second gets it back."""

    def __init__(self) -> None:
        self.kept: dict[str, str] = {}

    def recall(self, make: Callable[[], Any], part: str = "") -> Any:
        if part not in self.kept:
            self.kept[part] = json.dumps(make())
        return json.loads(self.kept[part])


class Secret(Action):
    """Return a password (a result declared secret)."""

    secret_result = True
    VALUE = "handoff-secret-5e7f9a1c"

    def execute(self) -> dict[str, str]:
        return {"DbPassword": self.VALUE}


class NeedsPlan(Action):
    """Require a plan name (for validation tests)."""

    def execute(self, plan: str, verbose: bool = False) -> str:
        return plan


class MissingPlan(Action):
    """Fail as an action whose plan does not exist (an error with a kind and hints)."""

    def execute(self, plan: str) -> str:
        raise exceptions.PlanNotFound(plan)


ACTIONS: dict[str, type[Action]] = {
    "std.noop": std.Noop, "std.async_noop": std.AsyncNoop, "std.echo": std.Echo,
    "std.fail": std.Fail, "std.sleep": std.Sleep, "std.http": std.Http,
    "test.record": Record, "test.async_record": AsyncRecord, "test.flaky": Flaky,
    "test.count": Count,
    "test.needs_plan": NeedsPlan, "test.secret": Secret, "test.plan_code": RecordPlanCode,
    "test.crash_once": CrashOnce, "test.update_parameters_then_crash": UpdateParametersThenCrash,
    "test.missing_plan": MissingPlan, "test.hold": Hold,
}


class Host(Client):
    """A client over a plain configuration and ``data_dir``, with a test registry."""

    def __init__(self, data_dir: Path, actions: dict[str, type[Action]] | None = None) -> None:
        conf = config.new_conf()
        conf([], default_config_files=[], default_config_dirs=[])
        conf.set_override("data_dir", str(data_dir))
        # Following an execution another process runs looks at its record this often.
        conf.set_override("poll_interval", 0.05, group="jobboard")
        super().__init__(conf, store=LocalStore(Path(data_dir) / "plans"),
                         locks=PlanLocks(f"file://{Path(data_dir) / 'locks'}"))
        self._session.action_registry = ActionRegistry.from_classes(actions or ACTIONS)

    def install(self, *names: str) -> None:
        """Copy tests/workbooks/good/NAME.yaml into the user workbooks dir."""
        for name in names:
            self.workbooks.create(WORKBOOKS / "good" / f"{name}.yaml")


def _run(argv: list[str]) -> int:
    data_dir, workflow, raw_input, kill_event, kill_at = argv
    host = Host(Path(data_dir))
    seen = {"n": 0}

    def killer(event: Any) -> None:
        if event.event == kill_event:
            seen["n"] += 1
            if seen["n"] == int(kill_at):
                sys.stdout.write(json.dumps({"killed_after": event.task}) + "\n")
                sys.stdout.flush()
                os.kill(os.getpid(), signal.SIGKILL)
                time.sleep(10)

    execution = host.executions.create(workflow, json.loads(raw_input), listeners=[killer])
    sys.stdout.write(json.dumps({"finished": execution.id}) + "\n")
    return 0


def _start_then_wait(argv: list[str]) -> int:
    """Start a workflow running in this process, print its id, then wait to be killed."""
    data_dir, workflow, raw_input = argv
    host = Host(Path(data_dir))
    sys.stdout.write(host.executions.create(workflow, json.loads(raw_input), wait=False).id + "\n")
    sys.stdout.flush()
    time.sleep(120)
    return 1


def _record_then_die(argv: list[str]) -> int:
    """Record an execution to run here, then SIGKILL this process before its first task."""
    data_dir, workflow, raw_input = argv
    fd = Host(Path(data_dir))._session.runner().start(workflow, json.loads(raw_input))
    sys.stdout.write(json.dumps({"recorded": fd.uuid}) + "\n")
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(10)
    return 1


def _resume(argv: list[str]) -> int:
    data_dir, execution_id, allow = argv
    host = Host(Path(data_dir))
    host.conf.set_override("allow_plan_code", allow == "true", group="api")
    try:
        execution = host.executions.resume(execution_id)
        sys.stdout.write(json.dumps({"state": execution.state}) + "\n")
    except exceptions.WorkflowFailed as exc:
        sys.stdout.write(json.dumps({"failed": str(exc)}) + "\n")
    finally:
        host._session.close_workflows()
    return 0


def configured(data_dir: Path, overrides: dict[str, Any]) -> Host:
    """A host with ``{"group.option": value}`` set."""
    host = Host(data_dir)
    for key, value in overrides.items():
        group, _, name = key.partition(".")
        host.conf.set_override(name, value, group=group)
    return host


def _conductor(argv: list[str]) -> int:
    import signal as signals

    data_dir, overrides, name, *rest = argv
    concurrency = int(rest[0]) if rest else 4
    host = configured(Path(data_dir), json.loads(overrides))

    def started(conductor: Any) -> None:
        signals.signal(signals.SIGTERM, lambda *_: conductor.stop())
        sys.stdout.write("conductor started\n")
        sys.stdout.flush()

    try:
        host.conductors.run(name, concurrency=concurrency, started=started)
    finally:
        host._session.close_workflows()
    return 0


if __name__ == "__main__":
    # A tripleo-flow process: its errors' next steps in the interfaces' words, as the
    # CLI and the HTTP API register them when they start.
    from tripleo_flow.http import hint_words

    hint_words.install()
    if sys.argv[1] == "conductor":
        sys.exit(_conductor(sys.argv[2:]))
    if sys.argv[1] == "run":
        sys.exit(_run(sys.argv[2:]))
    if sys.argv[1] == "start-then-wait":
        sys.exit(_start_then_wait(sys.argv[2:]))
    if sys.argv[1] == "record-then-die":
        sys.exit(_record_then_die(sys.argv[2:]))
    if sys.argv[1] == "resume":
        sys.exit(_resume(sys.argv[2:]))
    sys.exit(2)
