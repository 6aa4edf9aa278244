"""Conformance with Mistral's engine tests (issue 26): sub-workflows as executions of
their own (:mod:`tripleo_flow.flows.subworkflow`).

Each test runs, on the real engine with the executions database, the workflow of the
Mistral test its docstring names (mistral/tests/unit/engine/...) with its inputs, and
asserts its outcome: ``with-items``, ``retry`` and ``timeout`` apply to a
``workflow:`` task as to an action task, each item and each attempt being one child
execution linked to its parent's task (``parent_id``, ``parent_task``); a workflow
that loops can be a sub-workflow, a looping workflow can call one, and a workflow can
call itself.  Deliberate difference kept: a failed workflow reverts what its completed
tasks did (REVERTED; Mistral: ERROR).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host
from tripleo_flow import exceptions

FAILED = "REVERTED"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host.close_workflows()


class Run:
    """How one execution of workflow ``wf`` ended, and its child executions."""

    def __init__(self, host: Host, tmp_path: Path, text: str, **inputs: Any) -> None:
        name = f"subwf_{len(host.list_workbooks())}"
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"version: '2.0'\nname: {name}\nworkflows:\n"
                        + textwrap.indent(textwrap.dedent(text), "  "))
        host.create_workbook(path)
        self.error: exceptions.WorkflowFailed | None = None
        try:
            execution = host.run_workflow(f"{name}.wf", inputs)
        except exceptions.WorkflowFailed as exc:
            self.error = exc
            execution = next(e for e in reversed(host.list_executions())
                             if e.parent_id is None)
        self.id = execution.id
        execution = host.get_execution(execution.id)
        self.state = execution.state
        self.output = execution.output
        self.tasks = {t.name: t for t in host.execution_tasks(execution.id)}
        self.children = [e for e in host.list_executions() if e.parent_id == execution.id]


def test_with_items_over_a_sub_workflow_keeps_item_order(host: Host, tmp_path: Path) -> None:
    """Ported from test_with_items.py: test_with_items_subflow_concurrency_gt_list_length
    and test_subworkflows.py's with-items case: one child execution per item, the
    task's result the children's outputs in item order."""
    run = Run(host, tmp_path, """
        sub:
          input: [name, delay]
          output:
            greeting: <% $.greeting %>
          tasks:
            wait:
              action: std.sleep seconds=<% $.delay %>
              publish:
                greeting: <% 'Hello, ' + $.name %>
        wf:
          input: [names]
          output:
            result: <% $.result %>
          tasks:
            task1:
              with-items: name in <% $.names %>
              concurrency: 3
              workflow: sub
              input:
                name: <% $.name %>
                delay: <% 0.3 - 0.1 * $.names.indexOf($.name) %>
              publish:
                result: <% task().result.greeting %>
        """, names=["John", "Ivan", "Mistral"])
    assert run.state == "SUCCESS", run.error
    assert run.output == {"result": ["Hello, John", "Hello, Ivan", "Hello, Mistral"]}
    assert len(run.children) == 3
    assert {c.parent_task for c in run.children} == {"task1"}
    assert {c.state for c in run.children} == {"SUCCESS"}
