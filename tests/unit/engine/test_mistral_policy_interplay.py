"""Conformance with Mistral (issue 26): how a task's policies act together across its
retries.

Mistral builds a task's policies once per task execution, and calls their
``before_task_start`` only when the task execution starts (``Task._run_new``, or a
rerun): ``WaitBeforePolicy`` delays that start and ``TimeoutPolicy`` schedules one
check of the task execution from then.  A ``retry`` continues the same task execution
(``RetryPolicy.after_task_complete`` schedules ``continue_task``; ``Task.run`` then
takes ``_run_existing`` without ``rerun``), so it neither waits before again nor arms
the timeout again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tests.unit.engine.test_mistral_async_actions import _ended, _install, _waiting
from tripleo_flow.engine.compile import atoms


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data")
    yield host
    host._session.close_workflows()


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, Any]]:
    """Every wait a task asks for, (task, policy, seconds), none slept."""
    asked: list[tuple[str, str, Any]] = []

    def wait(self: Any, key: str, value: Any, evaluator: Any) -> None:
        seconds = self._policy(key, value, evaluator)
        if seconds:
            asked.append((self.spec.name, key, seconds))

    monkeypatch.setattr(atoms._WorkbookAtom, "_wait", wait)
    return asked


@pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
def test_wait_before_delays_the_task_execution_once_not_each_retry(
        host: Host, tmp_path: Path, waits: list[tuple[str, str, Any]], join: bool) -> None:
    """Ported from test_policies.py's wait-before and retry policies together: the task
    fails twice then succeeds on its third attempt, and waited before it only once (it
    waited before each attempt)."""
    counter = tmp_path / "calls"
    name = _install(host, tmp_path, f"""\
        workflows:
          wf:
            input: [counter]
            tasks:
              first:
                action: std.noop
                on-success: [flaky]
              flaky:
                {"join: all" if join else ""}
                action: test.flaky counter=<% $.counter %> failures=2
                wait-before: 7
                retry:
                  count: 3
                  delay: 0
                publish:
                  calls: <% task().result %>
        """)
    done = host.executions.create(name, {"counter": str(counter)})
    assert done.state == "SUCCESS"
    assert counter.read_text() == "3"
    assert waits == [("flaky", "wait-before", 7)]


def test_each_retry_has_the_whole_timeout(host: Host, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Deliberately different: each attempt of a retried task runs under the whole
    ``timeout``.  Mistral's one check, at the task execution's start plus the timeout,
    completes the task ERROR ("Task timed out") whatever attempt runs then, and its
    retry policy then retries it again, with no timeout armed any more: the timeout
    bounds neither the whole task nor each try.  A workbook that retries a task with a
    timeout means each try to be bounded, which is what this does."""
    from tripleo_flow.engine.compile import action_atom

    given: list[float | None] = []
    call = action_atom.ActionAtom._call

    def recording(self: Any, inputs: dict[str, Any], timeout: float | None,
                  item: int | None = None, until: float | None = None) -> Any:
        given.append(timeout)
        return call(self, inputs, timeout, item, until)

    monkeypatch.setattr(action_atom.ActionAtom, "_call", recording)
    counter = tmp_path / "calls"
    name = _install(host, tmp_path, """\
        workflows:
          wf:
            input: [counter]
            tasks:
              flaky:
                action: test.flaky counter=<% $.counter %> failures=2
                timeout: 30
                retry:
                  count: 3
                  delay: 0
        """)
    assert host.executions.create(name, {"counter": str(counter)}).state == "SUCCESS"
    assert given == [30, 30, 30]


@pytest.mark.parametrize("action", ["test.count counter=<% $.counter %>",
                                    "std.async_noop"])
def test_the_timeout_counts_from_the_task_executions_start_wait_before_included(
        host: Host, tmp_path: Path, action: str) -> None:
    """Mistral's TimeoutPolicy schedules its check as the task execution starts, with
    the wait-before delay: a task whose wait-before outlasts its timeout times out
    before its action starts (synchronous or waiting for a client: no action execution
    is recorded), as test_policies.py's timeout tests word it ("timed out")."""
    counter = tmp_path / "calls"
    name = _install(host, tmp_path, f"""\
        workflows:
          wf:
            input: [counter]
            tasks:
              late:
                action: {action}
                wait-before: 0.3
                timeout: 0.1
        """)
    done = host.executions.create(name, {"counter": str(counter)}, wait=False)
    ended = _ended(host, done.id)
    assert ended.state == "ERROR"
    assert "timed out" in (ended.error or "")
    assert not counter.exists()
    assert host._session.runner().store.async_actions.of_execution(done.id) == []


def test_a_client_has_what_the_wait_before_left_of_the_timeout(host: Host,
                                                               tmp_path: Path) -> None:
    """The deadline of an action waiting for a client is the task execution's start
    plus its timeout, so the wait-before took its part (it was the timeout from the
    action's start)."""
    name = _install(host, tmp_path, """\
        workflows:
          wf:
            tasks:
              held:
                action: std.async_noop
                wait-before: 0.3
                timeout: 30
        """)
    done = host.executions.create(name, {}, wait=False)
    row = _waiting(host, done.id, "held")
    action = host._session.runner().store.async_actions.get(row.waiting[0]["id"])
    assert action is not None and action.deadline is not None and action.created_at
    assert action.deadline - action.created_at <= 29.8
    host.executions.stop(done.id, "SUCCESS", "done")
