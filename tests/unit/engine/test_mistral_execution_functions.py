"""Conformance with Mistral (issue 26): ``tasks()`` and ``executions()`` read other
executions, as Mistral's do.

Ported from mistral/tests/unit/engine/test_tasks_function.py (``test_tasks_function``:
five helper executions, then a workflow whose task publishes what ``tasks()`` gives for
each, by id, recursive, by state, ``flat``, in YAQL and Jinja) and
mistral/tests/unit/expressions/test_jinja_expression.py (``test_executions*``: the
filters ``id``, ``root_execution_id``, ``state``, ``from_time``, ``to_time``).  Ours has
one project: an expression sees what ``GET /v1/executions`` shows (records masked), at
most ``[limits] expression_max_items`` of them.  Deliberately stricter: ours refuses
an input a sub-workflow does not declare when the workbook is loaded, so
``wf4_second_lvl`` declares the ``raise_error`` that ``wf5_top_lvl`` passes it (its
expression still fails the task at run time, as in Mistral's test).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tests.unit.engine.test_mistral_dynamic_subworkflows import host as host  # the fixture
from tests.unit.engine.test_mistral_dynamic_subworkflows import install
from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile.runner import Runner
from tripleo_flow.engine.lang import expressions

HELPERS = """
wf1_top_lvl:
  tasks:
    top_lvl_wf1_task_1:
      workflow: wf1_second_lvl
    top_lvl_wf1_task_2:
      action: std.noop
wf1_second_lvl:
  tasks:
    second_lvl_wf1_task_1:
      workflow: wf1_third_lvl_fail
      on-error: [second_lvl_wf1_task_2]
    second_lvl_wf1_task_2:
      action: std.noop
    second_lvl_wf1_task_3:
      action: std.noop
wf1_third_lvl_fail:
  tasks:
    third_lvl_wf1_task_1:
      action: std.noop
      on-success: [third_lvl_wf1_task_2_fail]
    third_lvl_wf1_task_2_fail:
      action: std.fail
      on-complete: join_task
    third_lvl_wf1_task_3:
      action: std.noop
      on-complete: join_task
    join_task:
      join: all
wf2_top_lvl:
  tasks:
    top_lvl_wf2_task_1:
      action: std.noop
    top_lvl_wf2_task_2:
      action: std.noop
wf3_top_lvl:
  tasks:
    top_lvl_wf3_task_1_fail:
      workflow: wf3_second_lvl_fail
      on-complete: join_task
    top_lvl_wf3_task_2_fail:
      action: std.fail
      on-complete: join_task
    join_task:
      join: all
wf3_second_lvl_fail:
  tasks:
    second_lvl_wf3_task_1_fail:
      workflow: wf3_third_lvl_fail
      on-complete: join_task
    second_lvl_wf3_task_2:
      action: std.noop
      on-complete: join_task
    second_lvl_wf3_task_3:
      action: std.noop
      on-complete: join_task
    join_task:
      join: all
wf3_third_lvl_fail:
  tasks:
    third_lvl_wf3_task_1:
      action: std.noop
      on-success: [third_lvl_wf3_task_2]
    third_lvl_wf3_task_2:
      action: std.noop
      on-complete: join_task
    third_lvl_wf3_task_3_fail:
      action: std.fail
      on-complete: join_task
    join_task:
      join: all
wf4_top_lvl:
  tasks:
    top_lvl_wf4_task_1:
      workflow: wf4_second_lvl
      publish:
        raise_error: <% $.invalid_yaql_expression %>
wf4_second_lvl:
  input:
    - raise_error: null  # (ours refuses an undeclared input at validation: stricter)
  tasks:
    second_lvl_wf4_task_1:
      action: std.noop
wf5_top_lvl:
  tasks:
    top_lvl_wf5_task_1:
      workflow: wf4_second_lvl
      input:
        raise_error: <% $.invalid_yaql_expression2 %>
"""

#: What the test workflow publishes: (key, expression) in YAQL and in Jinja.
QUERIES = {
    "all_tasks": ("tasks()", "tasks()"),
    "wf1_tasks": ("tasks($.wf1)", "tasks(_.wf1)"),
    "wf1_recursive_tasks": ("tasks($.wf1, true)", "tasks(_.wf1, true)"),
    "wf1_recursive_error_tasks": ("tasks($.wf1, true, ERROR)",
                                  "tasks(_.wf1, True, 'ERROR')"),
    "wf1_not_recursive_error_tasks": ("tasks($.wf1, false, ERROR)",
                                      "tasks(_.wf1, False, 'ERROR')"),
    "wf1_recursive_success_flat_tasks": ("tasks($.wf1, true, SUCCESS, true)",
                                         "tasks(_.wf1, True, 'SUCCESS', True)"),
    "wf2_recursive_tasks": ("tasks($.wf2, true)", "tasks(_.wf2, true)"),
    "wf3_recursive_error_tasks": ("tasks($.wf3, true, ERROR)",
                                  "tasks(_.wf3, True, 'ERROR')"),
    "wf3_recursive_error_flat_tasks": ("tasks($.wf3, true, ERROR, true)",
                                       "tasks(_.wf3, True, 'ERROR', True)"),
    "wf4_recursive_error_flat_tasks": ("tasks($.wf4, true, ERROR, true)",
                                       "tasks(_.wf4, True, 'ERROR', True)"),
    "wf5_recursive_error_flat_tasks": ("tasks($.wf5, true, ERROR, true)",
                                       "tasks(_.wf5, True, 'ERROR', True)"),
}

#: Mistral's asserted names (a count alone where Mistral asserts only that).
EXPECTED: dict[str, Any] = {
    "all_tasks": 26,
    "wf1_tasks": ["top_lvl_wf1_task_1", "top_lvl_wf1_task_2"],
    "wf1_recursive_tasks": [
        "join_task", "second_lvl_wf1_task_1", "second_lvl_wf1_task_2",
        "second_lvl_wf1_task_3", "third_lvl_wf1_task_1", "third_lvl_wf1_task_2_fail",
        "third_lvl_wf1_task_3", "top_lvl_wf1_task_1", "top_lvl_wf1_task_2"],
    "wf1_recursive_error_tasks": ["second_lvl_wf1_task_1", "third_lvl_wf1_task_2_fail"],
    "wf1_not_recursive_error_tasks": [],
    "wf1_recursive_success_flat_tasks": [
        "join_task", "second_lvl_wf1_task_2", "second_lvl_wf1_task_3",
        "third_lvl_wf1_task_1", "third_lvl_wf1_task_3", "top_lvl_wf1_task_2"],
    "wf2_recursive_tasks": ["top_lvl_wf2_task_1", "top_lvl_wf2_task_2"],
    "wf3_recursive_error_tasks": [
        "second_lvl_wf3_task_1_fail", "third_lvl_wf3_task_3_fail",
        "top_lvl_wf3_task_1_fail", "top_lvl_wf3_task_2_fail"],
    "wf3_recursive_error_flat_tasks": ["third_lvl_wf3_task_3_fail", "top_lvl_wf3_task_2_fail"],
    "wf4_recursive_error_flat_tasks": ["top_lvl_wf4_task_1"],
    "wf5_recursive_error_flat_tasks": ["top_lvl_wf5_task_1"],
}


def _run(host: Host, workflow: str, inputs: dict[str, Any] | None = None) -> Any:
    try:
        return host.executions.create(workflow, inputs or {})
    except exceptions.WorkflowFailed:
        return [e for e in host.executions.list() if e.workflow == workflow][-1]


def test_tasks_function(host: Host, tmp_path: Path) -> None:
    """Mistral's test_tasks_function: wf1 and wf2 succeed, wf3, wf4 and wf5 fail, then
    each query lists the task executions Mistral's lists (by name; sub-workflows run
    inline or apart alike)."""
    install(host, tmp_path, "wb", HELPERS)
    ran = {f"wf{n}": _run(host, f"wb.wf{n}_top_lvl") for n in range(1, 6)}
    assert {k: e.state for k, e in ran.items()} == {
        "wf1": "SUCCESS", "wf2": "SUCCESS", "wf3": "ERROR", "wf4": "ERROR", "wf5": "ERROR"}
    publish = "".join(f"        {key}_yaql: <% {yaql} %>\n"
                      f"        {key}_jinja: \"{{{{ {jinja} }}}}\"\n"
                      for key, (yaql, jinja) in QUERIES.items())
    install(host, tmp_path, "probe", "test_tasks_function:\n"
             "  input: [wf1, wf2, wf3, wf4, wf5]\n"
             "  tasks:\n    main_task:\n      action: std.noop\n      publish:\n"
             + publish)
    done = host.executions.create("probe.test_tasks_function",
                                  {k: e.id for k, e in ran.items()})
    (main,) = host.tasks.list(done.id)
    for key, expected in EXPECTED.items():
        for language in ("yaql", "jinja"):
            published = main.published[f"{key}_{language}"]
            names = sorted(t["name"] for t in published)
            if isinstance(expected, int):
                assert len(names) == expected, (key, language, names)
            else:
                assert names == expected, (key, language)
    # Each is Mistral's user model of a task execution.
    wf2 = main.published["wf2_recursive_tasks_yaql"]
    assert {t["workflow_execution_id"] for t in wf2} == {ran["wf2"].id}
    assert {t["state"] for t in wf2} == {"SUCCESS"} and {t["type"] for t in wf2} == {"ACTION"}
    assert set(wf2[0]) >= {"id", "name", "spec", "state", "state_info", "result",
                           "published", "type", "workflow_execution_id", "created_at",
                           "updated_at"}


EXECUTIONS = """
parent:
  tasks:
    call:
      workflow: child
child:
  tasks:
    join_makes_me_apart:
      join: all
      action: std.noop
probe:
  input: [query]
  output:
    found: <% $.found %>
  tasks:
    look:
      action: std.noop
      publish:
        found: <% executions($.query.get('id'), $.query.get('root'), $.query.get('state'),
                  $.query.get('from_time'), $.query.get('to_time')).select([$.id, $.state]) %>
"""


def test_executions_and_their_filters(host: Host, tmp_path: Path) -> None:
    """Mistral's test_executions, test_executions_id_filter, _state_filter,
    _from_time_filter and _to_time_filter: every execution (the probe's own, RUNNING,
    too), one by id, a sub-workflow's by its root, by state, by creation time."""
    install(host, tmp_path, "ex", EXECUTIONS)
    parent = _run(host, "ex.parent")
    (child,) = [e for e in host.executions.list() if e.parent_id == parent.id]
    clock.sleep(1.1)
    middle = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(clock.time()))
    failed = _run(host, "ex.probe", {"query": "not a mapping"})  # fails: .get of a string
    assert failed.state == "ERROR"

    def probe(**query: Any) -> list[list[str]]:
        return list(host.executions.create("ex.probe", {"query": query}).output["found"])

    everything = host.executions.create("ex.probe", {"query": {}}).output["found"]
    ids = [row[0] for row in everything]
    assert ids[:3] == [parent.id, child.id, failed.id]
    assert everything[3][1] == "RUNNING" and len(everything) == 4  # the probe itself
    assert probe(id=parent.id) == [[parent.id, "SUCCESS"]]
    assert probe(root=parent.id) == [[child.id, "SUCCESS"]]  # Mistral's root_execution_id
    assert probe(state="ERROR") == [[failed.id, "ERROR"]]
    assert probe(id=parent.id, state="ERROR") == []
    assert [r[0] for r in probe(from_time=middle)][:1] == [failed.id]
    assert probe(to_time=middle) == [[parent.id, "SUCCESS"], [child.id, "SUCCESS"]]
    assert probe(id=parent.id, from_time=middle) == []
    assert probe(from_time="2000-01-01")[:2] == [[parent.id, "SUCCESS"], [child.id, "SUCCESS"]]


def test_executions_shows_records_masked_and_refuses_too_many(
        host: Host, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a workflow reads of another execution is its record as the API shows it
    (a secret input masked), and no more records than ``expression_max_items``."""
    install(host, tmp_path, "ex", EXECUTIONS + """
secretive:
  input: [AdminPassword]
  tasks:
    nothing:
      action: std.noop
""")
    secret = host.executions.create("ex.secretive", {"AdminPassword": "s3cret"})
    install(host, tmp_path, "look", """
read:
  input: [other]
  output:
    seen: <% executions($.other).first().input %>
  tasks:
    nothing:
      action: std.noop
""")
    seen = host.executions.create("look.read", {"other": secret.id}).output["seen"]
    assert seen["AdminPassword"] != "s3cret"
    monkeypatch.setattr(Runner, "_expression_limits",
                        lambda self: expressions.Limits(max_items=2))
    with pytest.raises(exceptions.WorkflowFailed, match="expression_max_items"):
        host.executions.create("ex.probe", {"query": {}})


def test_reading_many_executions_stops_at_the_expression_s_time_limit() -> None:
    """Each execution a query reads counts against ``[limits] expression_timeout``: a
    workbook over HTTP cannot make one expression read a large history for ever (a
    store whose reads are slow stands for a large one: pure logic)."""
    import time as clock

    from tripleo_flow.common import time_budget
    from tripleo_flow.engine.store.execution_queries import ExecutionQueries
    from tripleo_flow.engine.store.execution_records import Execution

    class SlowStore:
        reads = 0

        def list(self) -> list[Execution]:
            return [Execution(f"e{n}", "wb.wf", "SUCCESS", {}) for n in range(100)]

        def tasks(self, ident: str) -> list[Any]:
            SlowStore.reads += 1
            clock.sleep(0.01)
            return []

    queries = ExecutionQueries(SlowStore(), max_items=1000)
    with time_budget.limit(0.1, "[limits] expression_timeout"), \
            pytest.raises(time_budget.TimeLimitExceeded, match="expression_timeout"):
        queries.tasks(None)
    assert SlowStore.reads < 100
