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
from tripleo_flow.common import clock

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
    runner = host._session.runner()
    # No engine left to see the completion (the stop's record can come first): as after
    # a kill -9, nothing but a client's retry evaluates its publish.
    until("its engine let go", lambda: ident not in runner._live)
    store = runner.store
    [waiting] = store.async_actions.of_task(ident, "held")
    store.async_actions.complete(waiting.id, "SUCCESS", {"a": 1})  # then a kill -9
    assert _held(host, ident).state == "RUNNING"
    with pytest.raises(exceptions.Conflict, match=r"does not wait for a client \(it is SUCCESS"):
        host.tasks.complete(ident, "held", "SUCCESS", {"a": 2})
    held = _held(host, ident)
    assert (held.state, held.result) == ("SUCCESS", {"a": 1})
    assert held.published["got"] == {"a": 1}
    _unchanged(host, ident, before)


#: ``items``: three items, one at a time.
ONE_AT_A_TIME = "with-items: i in <% [1, 2, 3] %>\n            concurrency: 1\n            "


def _waiting_items(host: Host, ident: str) -> list[Any]:
    return [w.get("item") for w in _held(host, ident).waiting]


def test_a_with_items_task_with_concurrency_starts_its_next_items_after_the_stop(
        host: Host, tmp_path: Path) -> None:
    """``with-items`` with ``concurrency``: Mistral's ``WithItemsTask.on_action_complete``
    looks at no workflow state: each completed item frees a place and
    ``_schedule_actions`` starts the next item, after a stop too; the task completes
    (and publishes) once every item was completed.  The workflow stays as stopped."""
    ident, before = _stopped(host, tmp_path, "SUCCESS", "got: <% task().result %>",
                             items=ONE_AT_A_TIME)
    assert _waiting_items(host, ident) == [0]
    host.tasks.complete(ident, "held", "SUCCESS", "first")
    held = _held(host, ident)
    assert (held.state, held.published) == ("RUNNING", {})
    assert _waiting_items(host, ident) == [1]
    host.tasks.complete(ident, "held", "SUCCESS", "second")
    assert _waiting_items(host, ident) == [2]
    host.tasks.complete(ident, "held", "SUCCESS", "third")
    held = _held(host, ident)
    assert (held.state, held.result) == ("SUCCESS", ["first", "second", "third"])
    assert held.published == {"got": ["first", "second", "third"]}
    _unchanged(host, ident, before)


def test_a_with_items_task_whose_item_failed_after_the_stop_runs_its_other_items(
        host: Host, tmp_path: Path) -> None:
    """An item completed with ERROR after the stop: Mistral's with-items task still
    starts the next items (``_has_more_iterations``) and completes ERROR once every
    item was completed, publishing on error."""
    ident, before = _stopped(host, tmp_path, "ERROR", "got: <% task().result %>",
                             items=ONE_AT_A_TIME)
    host.tasks.complete(ident, "held", "ERROR", "boom")
    assert _waiting_items(host, ident) == [1]
    host.tasks.complete(ident, "held", "SUCCESS", "second")
    host.tasks.complete(ident, "held", "SUCCESS", "third")
    held = _held(host, ident)
    assert (held.state, held.result) == ("ERROR", ["boom", "second", "third"])
    assert held.published == {"err": ["boom", "second", "third"], "state": "ERROR",
                              "seen": "started"}
    _unchanged(host, ident, before)


def test_a_timeout_after_the_stop_fails_the_task_and_publishes_on_error(
        host: Host, tmp_path: Path) -> None:
    """``timeout`` passing after the stop: Mistral's ``TimeoutPolicy`` completes the task
    ERROR (``complete_task``), so its ``publish-on-error`` is evaluated; the workflow
    stays as stopped, a completion after it is refused.  (Worded as our running
    engine's timeout, not Mistral's ``Task timed out [timeout(s)=1].``)"""
    ident, before = _stopped(host, tmp_path, "SUCCESS", items="timeout: 1\n            ")
    held = until("held timed out", lambda: (lambda found: found if found.state != "RUNNING"
                                            else None)(_held(host, ident)))
    assert held.state == "ERROR" and "timed out after 1 s" in (held.state_info or "")
    assert held.published == {"err": held.state_info, "state": "ERROR", "seen": "started"}
    with pytest.raises(exceptions.Conflict, match="does not wait"):
        host.tasks.complete(ident, "held", "SUCCESS", "too late")
    assert _held(host, ident).published == held.published
    _unchanged(host, ident, before)


def test_a_timeout_after_the_stop_is_seen_by_a_late_completion(
        host: Host, tmp_path: Path) -> None:
    """A completion asked after the timeout passed, before anyone read the task: it is
    refused (the task timed out) and the task has published on error."""
    ident, before = _stopped(host, tmp_path, "ERROR", items="timeout: 1\n            ")
    store = host._session.runner().store
    [waiting] = store.async_actions.of_task(ident, "held")
    until("its deadline passed", lambda: clock.time() > (waiting.deadline or 0) + 0.05)
    with pytest.raises(exceptions.Conflict, match="timed out"):
        host.tasks.complete(ident, "held", "SUCCESS", "too late")
    meta = next(ad for ad in store.flow_detail(ident) if ad.name == "held").meta or {}
    assert meta["stopped_publish"]["published"]["state"] == "ERROR"
    _unchanged(host, ident, before)


def _as_an_older_version_kept_it(host: Host, ident: str) -> None:
    """The atom metadata of ``held`` as a version that kept no inbound context wrote it."""
    store = host._session.runner().store
    ad = next(ad for ad in store.flow_detail(ident) if ad.name == "held")
    ad.meta.pop("wait_ctx")
    store.update_atom_meta(ad)


def test_a_task_that_waited_under_an_older_version_fails_its_publish(
        host: Host, tmp_path: Path) -> None:
    """A DIFFERENCE, named: a task whose action started waiting under a version that kept
    no inbound context has nothing to evaluate its ``publish`` over.  Mistral always has
    it (``in_context``); rebuilding it from our records would take a replay of the whole
    machine (joins, engine commands, pauses), so instead of publishing nothing (or a
    guess) the task fails as a publish that cannot be evaluated does
    (``force_fail_task``), saying why; one with nothing to publish completes as
    Mistral's.  The workflow stays as stopped."""
    ident, before = _stopped(host, tmp_path, "SUCCESS")
    _as_an_older_version_kept_it(host, ident)
    host.tasks.complete(ident, "held", "SUCCESS", "late")
    held = _held(host, ident)
    assert (held.state, held.result, held.published) == ("ERROR", "late", {})
    assert "older tripleo-flow" in (held.state_info or "")
    _unchanged(host, ident, before)
    # With nothing to publish on its path (its publish-on-error alone is set, not
    # evaluated), it completes as Mistral's: SUCCESS.
    ident, before = _stopped(host, tmp_path, "SUCCESS", publish="{}")
    _as_an_older_version_kept_it(host, ident)
    host.tasks.complete(ident, "held", "SUCCESS", "late")
    held = _held(host, ident)
    assert (held.state, held.result, held.published, held.state_info) == (
        "SUCCESS", "late", {}, None)
    _unchanged(host, ident, before)


#: An ad-hoc action based on ``std.async_noop`` whose ``output`` reshapes the
#: completion's, run per item two at a time.
ADHOC = """\
    actions:
      wrapped:
        base: std.async_noop
        input: [tag]
        output: <% [$] %>
    workflows:
      wf:
        tasks:
          held:
            with-items: i in <% [1, 2, 3] %>
            concurrency: 2
            action: wrapped tag=<% $.i %>
            publish:
              got: <% task().result %>
    """


def test_an_adhoc_action_reshapes_the_completions_after_the_stop(
        host: Host, tmp_path: Path) -> None:
    """An ad-hoc action's ``output`` reshapes each completion after the stop too (as
    Mistral's ad-hoc action transforms its output as it completes, and as our running
    task does): the task's result and what it publishes; its third item, started by a
    completion after the stop, runs the ad-hoc action."""
    ident = _start(host, tmp_path, ADHOC)
    until("two items wait", lambda: len(_held(host, ident).waiting) == 2
          if host.tasks.list(ident) else False)
    host.executions.stop(ident, "SUCCESS", "Stopped")
    until("its end recorded", lambda: host.executions.get(ident).finished_at)
    host.tasks.complete(ident, "held", "SUCCESS", "a", item=1)
    assert _waiting_items(host, ident) == [0, 2]
    host.tasks.complete(ident, "held", "SUCCESS", "b", item=0)
    host.tasks.complete(ident, "held", "SUCCESS", "c", item=2)
    held = _held(host, ident)
    assert (held.state, held.result) == ("SUCCESS", [["b"], ["a"], ["c"]])
    assert held.published == {"got": [["b"], ["a"], ["c"]]}


def test_a_timeout_after_the_stop_is_applied_when_the_task_is_next_looked_at(
        host: Host, tmp_path: Path) -> None:
    """Deliberately different timing: Mistral's scheduler service fires the timeout of
    a stopped execution's waiting task at its deadline.  A stopped execution here has
    no process that owns it (no server need run beside a single machine's CLI), so
    the timeout is applied when the task is next looked at through the client (its
    task list, a completion): until then, another execution's ``tasks()`` reads the
    records as they are, the task RUNNING past its deadline.  What the client shows,
    and what the task publishes, are Mistral's."""
    from tests.unit.engine.test_mistral_async_actions import _install

    ident, before = _stopped(host, tmp_path, "SUCCESS", items="timeout: 1\n            ")
    store = host._session.runner().store
    [waiting] = store.async_actions.of_task(ident, "held")
    until("its deadline passed", lambda: clock.time() > (waiting.deadline or 0) + 0.05)
    probe = _install(host, tmp_path, """\
        workflows:
          wf:
            input: [id]
            tasks:
              look:
                action: std.noop
                publish:
                  seen: <% tasks($.id).where($.name = 'held').select($.state) %>
        """)
    looked = host.executions.create(probe, {"id": ident})
    (look,) = host.tasks.list(looked.id)
    assert look.published == {"seen": ["RUNNING"]}
    assert _held(host, ident).state == "ERROR"  # the client's list applies it
    _unchanged(host, ident, before)
