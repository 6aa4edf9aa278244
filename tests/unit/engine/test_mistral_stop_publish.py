"""What a task publishes when a client completes its action after the execution was
stopped with SUCCESS or ERROR, as Mistral's (issue 26).

Mistral's ``stop_workflow`` leaves the running task execution and its action execution
RUNNING; a completion then runs ``Task.complete``, whose
``data_flow.publish_variables`` evaluates the task's ``publish`` (``publish-on-error``
after an error) over a ``ContextView`` of the task itself (``task()``: its state and
result now), its ``in_context``, the env, the workflow's context and input; the result
is the task execution's ``published``.  An expression that fails raises out of
``on_action_complete``: ``task_handler._on_action_complete`` calls
``force_fail_task``, the task goes ERROR with the error in its ``state_info`` and the
completed workflow is left as it is (``_fail_workflow`` returns for a completed one).
Either way the workflow's state and output stay what the stop gave them and no task
starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host, until
from tests.unit.engine.test_mistral_async_actions import _start
from tests.unit.engine.test_mistral_async_actions import host as host  # the fixture
from tripleo_flow import exceptions

#: ``started`` publishes ``y`` and fires ``held``, which waits for a client.
WORKBOOK = """\
    workflows:
      wf:
        input: [who]
        tasks:
          started:
            action: std.echo output="started"
            publish:
              y: <% task().result %>
            on-success: [held]
          held:
            {items}action: std.async_noop
            publish:
              {publish}
            publish-on-error:
              err: <% task().result %>
              state: <% task().state %>
              seen: <% $.y %>
            on-complete: [after]
          after:
            {join}action: std.echo output="after"
    """

#: What ``held`` publishes by default: its result, state and name, what it received.
PUBLISH = ("got: <% task().result %>\n              seen: <% $.y %>\n"
           "              who: <% $.who %>\n              me: <% task().name %>\n"
           "              state: <% task().state %>")


def _stopped(host: Host, tmp_path: Path, state: str, publish: str = PUBLISH,
             join: bool = False, items: str = "", who: str = "me") -> tuple[str, Any]:
    """Run :data:`WORKBOOK` until ``held`` waits, stop it in ``state``; its id and its
    record once its end is recorded."""
    ident = _start(host, tmp_path, WORKBOOK.format(
        publish=publish, items=items, join="join: all\n            " if join else ""),
        who=who)
    until("held waits", lambda: {t.name: t.state for t in host.tasks.list(ident)}
          .get("held") == "RUNNING" and bool(_held(host, ident).waiting))
    host.executions.stop(ident, state, "Stopped")
    return ident, until("its end recorded", lambda: (lambda done: done if done.finished_at
                                                     else None)(host.executions.get(ident)))


def _held(host: Host, ident: str) -> Any:
    return {t.name: t for t in host.tasks.list(ident)}["held"]


def _unchanged(host: Host, ident: str, before: Any) -> None:
    """The workflow keeps the state and output the stop gave it; ``after`` never ran."""
    after = host.executions.get(ident)
    assert (after.state, after.state_info, after.output) == (
        before.state, before.state_info, before.output)
    assert "after" not in {t.name for t in host.tasks.list(ident)}


@pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
def test_a_completion_after_the_stop_publishes(host: Host, tmp_path: Path,
                                               join: bool) -> None:
    """A SUCCESS completion: ``publish`` over the task (its result, name, state) and
    its inbound context (``started``'s ``y``, the input)."""
    ident, before = _stopped(host, tmp_path, "SUCCESS", join=join)
    assert _held(host, ident).published == {}
    host.tasks.complete(ident, "held", "SUCCESS", {"a": 1})
    held = _held(host, ident)
    assert (held.state, held.result, held.state_info) == ("SUCCESS", {"a": 1}, None)
    assert held.published == {"got": {"a": 1}, "seen": "started", "who": "me",
                               "me": "held", "state": "SUCCESS"}
    _unchanged(host, ident, before)


@pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
def test_an_error_completion_after_the_stop_publishes_on_error(host: Host, tmp_path: Path,
                                                              join: bool) -> None:
    """An ERROR completion: ``publish-on-error`` (``task().result`` is the error)."""
    ident, before = _stopped(host, tmp_path, "ERROR", join=join)
    host.tasks.complete(ident, "held", "ERROR", "boom")
    held = _held(host, ident)
    assert (held.state, held.result, held.state_info) == ("ERROR", "boom", "boom")
    assert held.published == {"err": "boom", "state": "ERROR", "seen": "started"}
    _unchanged(host, ident, before)


@pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
def test_a_publish_that_fails_after_the_stop_fails_the_task(host: Host, tmp_path: Path,
                                                            join: bool) -> None:
    """Mistral's ``force_fail_task``: the task ERROR with the evaluation error as its
    ``state_info``, nothing published; the action execution keeps its completion.
    Worded differently, on purpose: Mistral's ``state_info`` is "Failed to handle
    action completion [...]" and a server traceback; ours is the task and the error,
    as a publish that fails in a running execution reads (a record readers of the
    HTTP API see carries no server internals)."""
    ident, before = _stopped(host, tmp_path, "SUCCESS", "bad: <% $.who.nothing %>",
                             join=join)
    done = host.tasks.complete(ident, "held", "SUCCESS", "late")
    assert (done.state, done.output) == ("SUCCESS", "late")
    held = _held(host, ident)
    assert (held.state, held.result, held.published) == ("ERROR", "late", {})
    assert held.state_info is not None and held.state_info.startswith("task 'held': ")
    assert "nothing" in held.state_info
    assert held.error == held.state_info
    _unchanged(host, ident, before)


def test_a_with_items_task_publishes_once_every_item_was_completed(
        host: Host, tmp_path: Path) -> None:
    """``with-items``: Mistral's task completes once every item's action execution was
    completed; ``task().result`` lists their outputs in item order."""
    ident, before = _stopped(host, tmp_path, "SUCCESS", "got: <% task().result %>",
                             items="with-items: i in <% [1, 2] %>\n            ")
    host.tasks.complete(ident, "held", "SUCCESS", "second", item=1)
    held = _held(host, ident)
    assert (held.state, held.published) == ("RUNNING", {})
    host.tasks.complete(ident, "held", "SUCCESS", "first", item=0)
    held = _held(host, ident)
    assert (held.state, held.published) == ("SUCCESS", {"got": ["first", "second"]})
    _unchanged(host, ident, before)


def test_what_it_publishes_is_masked_as_every_record(host: Host, tmp_path: Path) -> None:
    """A known secret in its inbound context reads ``<secret>`` in what it published, as
    in every record of the executions database."""
    secret = "s3cret-value-4711"
    host._session.runner().store.backend.redactor.learn([secret])
    ident, _before = _stopped(host, tmp_path, "SUCCESS", "pw: <% $.who %>", who=secret)
    host.tasks.complete(ident, "held", "SUCCESS", "late")
    assert _held(host, ident).published == {"pw": "<secret>"}


@pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
def test_a_completion_as_the_stop_ends_the_engine_publishes(host: Host, tmp_path: Path,
                                                            join: bool) -> None:
    """A completion right after the stop, before or after its engine recorded the end:
    the same task SUCCESS with what it published, the workflow as the stop left it."""
    ident = _start(host, tmp_path, WORKBOOK.format(
        publish="got: <% task().result %>", items="",
        join="join: all\n            " if join else ""), who="me")
    until("held waits", lambda: any(t.name == "held" and t.waiting
                                    for t in host.tasks.list(ident)))
    asked = host.executions.stop(ident, "SUCCESS", "Stopped")
    host.tasks.complete(ident, "held", "SUCCESS", "late")
    done = until("its end recorded", lambda: (lambda found: found if found.finished_at
                                              else None)(host.executions.get(ident)))
    assert (done.state, done.output) == ("SUCCESS", asked.output)
    held = until("held completed", lambda: (lambda found: found if found.state != "RUNNING"
                                            else None)(_held(host, ident)))
    assert (held.state, held.result, held.published) == ("SUCCESS", "late", {"got": "late"})
    assert "after" not in {t.name for t in host.tasks.list(ident)}


def test_a_completion_killed_before_its_publish_is_repaired_by_a_retry(
        host: Host, tmp_path: Path) -> None:
    """A completion recorded, then its process killed before the publish was evaluated
    (the task reads RUNNING, as before a completion): asking the completion again is
    refused, the task no longer waiting, and repairs it: it reads SUCCESS, published."""
    ident, before = _stopped(host, tmp_path, "SUCCESS")
    store = host._session.runner().store
    [waiting] = store.async_actions.of_task(ident, "held")
    store.async_actions.complete(waiting.id, "SUCCESS", {"a": 1})  # then a kill -9
    assert _held(host, ident).state == "RUNNING"
    with pytest.raises(exceptions.Conflict, match=r"does not wait for a client \(it is SUCCESS"):
        host.tasks.complete(ident, "held", "SUCCESS", {"a": 2})
    held = _held(host, ident)
    assert (held.state, held.result) == ("SUCCESS", {"a": 1})
    assert held.published["got"] == {"a": 1}
    _unchanged(host, ident, before)
