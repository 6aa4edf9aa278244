"""Conformance with Mistral (issue 26): a reverse sub-workflow run to a task (``task_name``).

Ported from mistral/tests/unit/engine/test_subworkflows.py (WB1, test_subworkflow_success):
``workflow: wf1 param1='Bonnie' param2='Clyde' task_name='task2'`` starts the reverse
workflow wf1 as a child execution that runs to ``task2``.  Mistral passes every input
the sub-workflow does not declare as a parameter of its execution, ``task_name`` among
them; ours takes ``task_name`` that way for a reverse workflow that does not declare
it, and (deliberately stricter) refuses any other undeclared input at validation,
since Mistral would silently lose its value.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_dynamic_subworkflows import validation_problems
from tests.unit.engine.test_mistral_subworkflows import FAILED, Run

#: Mistral's WB1.
WB1 = """
    wf1:
      type: reverse
      input:
        - param1
        - param2
      output:
        final_result: <% $.final_result %>
      tasks:
        task1:
          action: std.echo output=<% $.param1 %>
          publish:
            result1: <% task(task1).result %>
        task2:
          action: std.echo output="'<% $.param1 %> & <% $.param2 %>'"
          publish:
            final_result: <% task(task2).result %>
          requires: [task1]
    wf:
      output:
        slogan: <% $.slogan %>
      tasks:
        task1:
          workflow: wf1 param1='Bonnie' param2='Clyde' task_name='task2'
          publish:
            slogan: "<% task(task1).result.final_result %> is a cool movie!"
    """

#: A reverse workflow whose tasks each leave a line in ``path``.
RECORDING = """
    rev:
      type: reverse
      input: [path]
      tasks:
        first:
          action: test.record path=<% $.path %> value="first"
        second:
          action: test.record path=<% $.path %> value="second"
          requires: [first]
        other:
          action: test.record path=<% $.path %> value="other"
    """


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host._session.close_workflows()


def test_subworkflow_success(host: Host, tmp_path: Path) -> None:
    """test_subworkflow_success: the child gets the declared inputs, runs to task2, and
    its output reaches the parent."""
    run = Run(host, tmp_path, WB1)
    assert run.state == "SUCCESS", run.error
    assert run.output == {"slogan": "'Bonnie & Clyde' is a cool movie!"}
    [child] = run.children
    assert child.input == {"param1": "Bonnie", "param2": "Clyde"}
    assert child.target == "task2" and child.parent_task == "task1"
    assert child.output == {"final_result": "'Bonnie & Clyde'"}
    assert {t.name for t in host.tasks.list(child.id)} == {"task1", "task2"}


@pytest.mark.parametrize("target, ran", [
    ("first", "do first\n"), ("second", "do first\ndo second\n"), ("other", "do other\n")])
def test_task_name_runs_only_what_the_task_requires(host: Host, tmp_path: Path, target: str,
                                                    ran: str) -> None:
    log = tmp_path / "log"
    run = Run(host, tmp_path, RECORDING + f"""
    wf:
      input: [path]
      tasks:
        call:
          workflow: rev
          input:
            path: <% $.path %>
            task_name: {target}
    """, path=str(log))
    assert run.state == "SUCCESS", run.error
    assert log.read_text() == ran


def test_task_name_from_an_expression_and_a_dynamic_workflow(host: Host, tmp_path: Path
                                                            ) -> None:
    log = tmp_path / "log"
    run = Run(host, tmp_path, RECORDING + """
    wf:
      input: [path, name, target]
      tasks:
        call:
          workflow: <% $.name %>
          input:
            path: <% $.path %>
            task_name: <% $.target %>
    """, path=str(log), name="rev", target="second")
    assert run.state == "SUCCESS", run.error
    assert log.read_text() == "do first\ndo second\n"
    assert [c.target for c in run.children] == ["second"]


def test_a_task_name_that_is_no_task_fails_the_task(host: Host, tmp_path: Path) -> None:
    log = tmp_path / "log"
    run = Run(host, tmp_path, RECORDING + """
    wf:
      input: [path, target]
      tasks:
        call:
          workflow: rev
          input:
            path: <% $.path %>
            task_name: <% $.target %>
    """, path=str(log), target="nowhere")
    assert run.state == FAILED and run.error is not None
    assert "task_name 'nowhere' is not a task of reverse workflow" in str(run.error)
    assert run.children == [] and not log.exists()


def test_a_failed_parent_undoes_the_tasks_the_target_ran(host: Host, tmp_path: Path) -> None:
    log = tmp_path / "log"
    run = Run(host, tmp_path, RECORDING + """
    wf:
      input: [path]
      tasks:
        call:
          workflow: rev path=<% $.path %> task_name="second"
          on-success: [boom]
        boom:
          action: std.fail
    """, path=str(log))
    assert run.state == FAILED
    assert log.read_text() == "do first\ndo second\nundo second\nundo first\n"


def test_a_declared_task_name_input_is_an_input(host: Host, tmp_path: Path) -> None:
    """A reverse workflow that declares ``task_name`` gets it as an input (as Mistral
    gives it every declared input), and runs all its tasks."""
    run = Run(host, tmp_path, """
    rev:
      type: reverse
      input: [task_name]
      output:
        got: <% $.got %>
      tasks:
        a:
          action: std.echo output=<% $.task_name %>
          publish:
            got: <% task().result %>
    wf:
      output:
        got: <% $.got %>
      tasks:
        call:
          workflow: rev task_name="a value"
          publish:
            got: <% task().result.got %>
    """)
    assert run.state == "SUCCESS", run.error
    assert run.output == {"got": "a value"}
    assert [c.target for c in run.children] == []  # inlined: no child execution


@pytest.mark.parametrize("call, expected", [
    ("workflow: rev path='x' task_name='second'", []),
    ("workflow: rev path='x' task_name=<% $.t %>", []),
    ("workflow: rev path='x' task_name='nowhere'",
     ["task_name 'nowhere' is not a task of reverse workflow 'rev.rev' (its tasks: first, "
      "second, other)"]),
    ("workflow: direct task_name='a'",
     ["unexpected input 'task_name' for workflow 'rev.direct' (its inputs: none)"]),
])
def test_validation_of_task_name(tmp_path: Path, call: str, expected: list[str]) -> None:
    """Checked statically when written: it names a task of the reverse workflow; a
    direct workflow has no use for it (Mistral ignores it there)."""
    problems = validation_problems(tmp_path, RECORDING + f"""
    direct:
      tasks:
        a:
          action: std.noop
    wf:
      tasks:
        call:
          {call}
    """, name="rev")
    assert problems == expected
