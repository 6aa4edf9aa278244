"""Conformance with Mistral (issue 26): workflow names given as expressions.

Ported from mistral/tests/unit/engine/test_subworkflows.py (its WB3/WB4/WB5 cases:
``workflow: <% $.wf_name %>``, ``'{{ _.wf_name }}'``, ``input: <% $.inp %>``): the
name is evaluated as the task starts, looked up as a written name is (in the
calling workflow's workbook first), and the workflow runs as a child execution.
Validation checks the expression and whatever does not depend on its value.

Deliberately stricter, as for action names given by expressions: over the HTTP API
such a workflow is refused before it starts.  The server checks every server path
an action reads (plan templates, environment files...) when the execution starts,
from the workflow inputs that reach it; a workflow named at run time could be any
workflow, one taking server paths included, so nothing could be checked.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_subworkflows import FAILED, Run
from tripleo_flow import exceptions
from tripleo_flow.client.paths import ServerPaths
from tripleo_flow.engine.lang import paths, workbook_loader

#: Mistral's WB3 and WB4 (one workbook): wf1 calls the workflow ``wf_name`` names.
DYNAMIC = """
    wf:
      input:
        - wf_name
        - inp: null
      output:
        sub_wf_out: <% $.sub_wf_out %>
      tasks:
        task1:
          workflow: <% $.wf_name %>
          {input}
          publish:
            sub_wf_out: <% task(task1).result.sub_wf_out %>
    wf2:
      output:
        sub_wf_out: wf2_out
      tasks:
        task1:
          action: std.noop
    wf3:
      input:
        - inp
      output:
        sub_wf_out: <% $.inp %>
      tasks:
        task1:
          action: std.noop
    """


#: Another workbook's workflow of the same short name.
OTHER_WF2 = """
    wf2:
      output:
        sub_wf_out: other_out
      tasks:
        task1:
          action: std.noop
    """


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host._session.close_workflows()


def install(host: Host, tmp_path: Path, name: str, text: str) -> None:
    """Add workbook ``name`` holding the workflows ``text`` (indented YAML)."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"version: '2.0'\nname: {name}\nworkflows:\n"
                    + textwrap.indent(textwrap.dedent(text), "  "))
    host.workbooks.create(path)


def workbook(host: Host, run: Run) -> str:
    """The workbook of the workflow ``run`` ran."""
    return host.executions.get(run.id).workflow.rsplit(".", 1)[0]


def test_dynamic_subworkflow_wf2(host: Host, tmp_path: Path) -> None:
    """test_dynamic_subworkflow_wf2: the short name is looked up in the caller's
    workbook first (another workbook's wf2 is not the one run)."""
    install(host, tmp_path, "other", OTHER_WF2)
    run = Run(host, tmp_path, DYNAMIC.format(input=""), wf_name="wf2")
    assert run.state == "SUCCESS", run.error
    assert run.output == {"sub_wf_out": "wf2_out"}
    assert [(c.workflow, c.parent_task) for c in run.children] == [
        (f"{workbook(host, run)}.wf2", "task1")]


def test_a_full_workflow_name_from_an_expression(host: Host, tmp_path: Path) -> None:
    install(host, tmp_path, "other", OTHER_WF2)
    run = Run(host, tmp_path, DYNAMIC.format(input=""), wf_name="other.wf2")
    assert run.state == "SUCCESS", run.error
    assert run.output == {"sub_wf_out": "other_out"}


@pytest.mark.parametrize("name", ["not_existing_wf", None])
def test_dynamic_subworkflow_call_failure(host: Host, tmp_path: Path, name: Any) -> None:
    """test_dynamic_subworkflow_call_failure: the workflow fails naming the name (ours
    reverts, reading ERROR as Mistral's); no child execution is started."""
    run = Run(host, tmp_path, DYNAMIC.format(input=""), wf_name=name)
    assert run.state == FAILED and run.error is not None
    assert run.error.task == "task1"
    assert ("unknown workflow 'not_existing_wf'" if name else "not a workflow name") \
        in str(run.error)
    assert run.children == []


@pytest.mark.parametrize("workflow, given", [
    ("<% $.wf_name %>", "input: <% $.inp %>"),
    ("'{{ _.wf_name }}'", "input: '{{ _.inp }}'")])
def test_dynamic_subworkflow_with_generic_input(host: Host, tmp_path: Path, workflow: str,
                                                given: str) -> None:
    """test_dynamic_subworkflow_with_generic_input and test_dynamic_subworkflow_with_jinja."""
    text = DYNAMIC.format(input=given).replace("workflow: <% $.wf_name %>",
                                               f"workflow: {workflow}")
    run = Run(host, tmp_path, text, wf_name="wf3", inp={"inp": "abc"})
    assert run.state == "SUCCESS", run.error
    assert run.output == {"sub_wf_out": "abc"}


def test_string_workflow_input_failure(host: Host, tmp_path: Path) -> None:
    """test_string_workflow_input_failure: an input expression that gives a string fails
    the task.  Mistral's message quotes the value; ours names the expression and the
    type (the value may be a secret)."""
    run = Run(host, tmp_path, DYNAMIC.format(input="input: <% $.inp %>"), wf_name="wf3",
              inp="invalid_string_input")
    assert run.state == FAILED and run.error is not None
    assert "'input' '<% $.inp %>' must give a mapping" in str(run.error)
    assert "(got str)" in str(run.error)


def test_the_name_is_evaluated_once_per_task_with_items(host: Host, tmp_path: Path) -> None:
    """As Mistral's, the name comes from the task's context (not an item's): every item
    runs the same workflow, each as its own child execution."""
    run = Run(host, tmp_path, """
        wf:
          input: [wf_name]
          output:
            outs: <% $.outs %>
          tasks:
            task1:
              with-items: x in [a, b, c]
              workflow: <% $.wf_name %>
              input:
                inp: <% $.x %>
              publish:
                outs: <% task().result.sub_wf_out %>
        wf3:
          input: [inp]
          output:
            sub_wf_out: <% $.inp %>
          tasks:
            task1:
              action: std.noop
        """, wf_name="wf3")
    assert run.state == "SUCCESS", run.error
    assert run.output == {"outs": ["a", "b", "c"]}
    assert [c.workflow for c in run.children] == [f"{workbook(host, run)}.wf3"] * 3


def test_a_loop_calls_a_workflow_named_by_an_expression(host: Host, tmp_path: Path) -> None:
    """A looping workflow (the state machine) runs it once per pass."""
    run = Run(host, tmp_path, """
        wf:
          input: [wf_name]
          output:
            n: <% $.n %>
          tasks:
            init:
              action: std.noop
              publish:
                n: 0
              on-success: [call]
            call:
              workflow: <% $.wf_name %>
              publish:
                n: <% $.n + 1 %>
              on-success:
                - call: <% $.n < 3 %>
        wf2:
          tasks:
            task1:
              action: std.noop
        """, wf_name="wf2")
    assert run.state == "SUCCESS", run.error
    assert run.output == {"n": 3}
    assert [c.workflow for c in run.children] == [f"{workbook(host, run)}.wf2"] * 3


def test_a_failed_parent_undoes_the_child_it_named(host: Host, tmp_path: Path) -> None:
    log = tmp_path / "log"
    run = Run(host, tmp_path, """
        wf:
          input: [wf_name, path]
          tasks:
            call:
              workflow: <% $.wf_name %>
              input:
                path: <% $.path %>
              on-success: [boom]
            boom:
              action: std.fail
        record:
          input: [path]
          tasks:
            task1:
              action: test.record path=<% $.path %> value="child"
        """, wf_name="record", path=str(log))
    assert run.state == FAILED
    assert log.read_text() == "do child\nundo child\n"


def test_a_written_short_name_runs_its_own_workbooks_workflow(host: Host,
                                                              tmp_path: Path) -> None:
    """A written name is looked up the same way when the task runs as a child execution
    (here for its retry): another workbook's workflow of the same short name is not
    taken (both used to be candidates, and the run failed as ambiguous)."""
    install(host, tmp_path, "other", """
        sub:
          output:
            who: other
          tasks:
            task1:
              action: std.noop
        """)
    run = Run(host, tmp_path, """
        wf:
          output:
            who: <% $.who %>
          tasks:
            task1:
              workflow: sub
              retry: {count: 1, delay: 0}
              publish:
                who: <% task().result.who %>
        sub:
          output:
            who: mine
          tasks:
            task1:
              action: std.noop
        """)
    assert run.state == "SUCCESS", run.error
    assert run.output == {"who": "mine"}


# -- validation: what can be checked before the name is known ------------------

def validation_problems(tmp_path: Path, text: str, name: str = "dyn") -> list[str]:
    """What ``workbook validate`` says of workbook ``name`` holding the workflows
    ``text`` (indented YAML)."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"version: '2.0'\nname: {name}\nworkflows:\n"
                    + textwrap.indent(textwrap.dedent(text), "  "))
    catalog = workbook_loader.load_catalog([], ACTIONS, {}, extra_files=[path])
    return [p.message for e in catalog.entries.values() for p in e.problems]


def test_a_workflow_named_by_an_expression_validates(tmp_path: Path) -> None:
    assert validation_problems(tmp_path, DYNAMIC.format(input="input: <% $.inp %>")) == []


@pytest.mark.parametrize("workflow, expected", [
    ("<% $.wf_name + %>", "bad expression in 'workflow'"),
    ("<% task(nowhere).result %>", "'workflow' refers to task('nowhere'), which is not in "
                                   "this workflow"),
    ("'{{ _.wf_name }'", "bad expression in 'workflow'"),
    ("<% $.wf_name %> inp=bad text", "cannot read 'inp=bad text' as a parameter")])
def test_what_validation_still_checks(tmp_path: Path, workflow: str, expected: str) -> None:
    problems = validation_problems(tmp_path, f"""
        wf:
          input: [wf_name]
          tasks:
            task1:
              workflow: {workflow}
        """)
    assert any(expected in p for p in problems), problems


def test_refused_where_server_paths_are_checked(host: Host, tmp_path: Path) -> None:
    """Stricter than Mistral, as for action names (module docstring): the HTTP API's
    check of server paths refuses the workflow before anything runs."""
    install(host, tmp_path, "dyn", DYNAMIC.format(input=""))
    workflow = host.workflows.get("dyn.wf")
    with pytest.raises(exceptions.PathNotAllowed,
                       match="names its workflow with an expression"):
        paths.path_inputs(workflow, host._session.catalog(), host._session.action_registry.get)
    # What the HTTP API's start does: nothing is recorded, nothing runs.
    with pytest.raises(exceptions.PathNotAllowed, match="names its workflow"):
        host.executions.create("dyn.wf", {"wf_name": "wf2"},
                               paths=ServerPaths.for_data_dir(tmp_path / "data"), api_user=True)
    assert host.executions.list() == []
    # The CLI and the Python API run it.
    assert host.executions.create("dyn.wf", {"wf_name": "wf2"}).state == "SUCCESS"
