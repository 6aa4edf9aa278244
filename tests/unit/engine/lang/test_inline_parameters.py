"""Conformance with Mistral (issue 26): inline parameters, ``std.echo output="hi" n=2``.

Mistral reads ``KEY=VALUE`` after the action or workflow name with one pattern
(mistral/lang/base.py): a quoted string, an expression, a ``[...]`` list, ``true``,
``false``, ``null`` or digits; anything else it ignores without a word.  Ours reads
the same values and refuses the rest when the workbook is validated (stricter).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tripleo_flow.engine.lang.workbook_clauses import split_inline


@pytest.mark.parametrize("text, name, params", [
    ('std.echo output=["Hi", "John Doe!"]', "std.echo", {"output": ["Hi", "John Doe!"]}),
    ('wf1 name="John Doe" age=32 param1=null param2=false', "wf1",
     {"name": "John Doe", "age": 32, "param1": None, "param2": False}),
    ("std.echo output='single quoted' flag=true", "std.echo",
     {"output": "single quoted", "flag": True}),
    ("std.echo output=<% $.a + $.b %> n=3", "std.echo", {"output": "<% $.a + $.b %>", "n": 3}),
    ("std.echo output={{ _.greeting }}", "std.echo", {"output": "{{ _.greeting }}"}),
    ('fail msg="<% $.x %> is wrong"', "fail", {"msg": "<% $.x %> is wrong"}),
    ('std.echo output="32"', "std.echo", {"output": "32"}),  # quoted: a string
    ("send to=['a@b.c'] body='Failed to create a VM'", "send",
     {"to": "['a@b.c']", "body": "Failed to create a VM"}),  # not JSON: the text
    ("std.sleep seconds=1 x-y=2", "std.sleep", {"seconds": 1, "x-y": 2}),
    ("std.noop", "std.noop", {}),
])
def test_values_read_as_mistral_reads_them(text: str, name: str, params: dict[str, Any]
                                           ) -> None:
    """The value shapes of mistral/lang/base.py (and its test workbook
    mistral/tests/resources/workbook/v2/my_workbook.yaml, ``wf1 name="John Doe" age=32
    param1=null param2=false``)."""
    assert split_inline(text) == (name, params, "")


@pytest.mark.parametrize("text, unread", [
    ("std.echo output=Hello", "output=Hello"),
    ("std.echo x=1.5", ".5"),
    ('std.echo output= "Task 1"', 'output= "Task 1"'),
    ("std.echo output={'a': 1}", "output={'a': 1}"),
])
def test_what_mistral_would_ignore_is_left_unread(text: str, unread: str) -> None:
    assert split_inline(text)[2] == unread


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data")
    yield host
    host._session.close_workflows()


def install(host: Host, tmp_path: Path, workflows: str) -> None:
    path = tmp_path / "inline.yaml"
    path.write_text("version: '2.0'\nname: inline\n"
                    + textwrap.dedent(workflows))
    host.workbooks.create(path)


def test_a_json_list_with_spaces_is_one_value(host: Host, tmp_path: Path) -> None:
    """Ported from test_dataflow.py: test_destroy_result (the published value is the
    whole list; the result itself is dropped by 'keep-result: false')."""
    install(host, tmp_path, """
        workflows:
          wf:
            tasks:
              task1:
                action: std.echo output=["Hi", "John Doe!"]
                publish:
                  hi: <% task(task1).result %>
                keep-result: false
        """)
    execution = host.executions.create("inline.wf", {})
    assert execution.state == "SUCCESS"
    [task] = host.tasks.list(execution.id)
    assert task.published == {"hi": ["Hi", "John Doe!"]} and task.result is None


def test_inline_parameters_of_workflows_and_ad_hoc_bases(host: Host, tmp_path: Path) -> None:
    """A sub-workflow's inline input (my_workbook.yaml's ``wf1 name="John Doe" age=32
    ...``) and an ad-hoc action's ``base`` with inline parameters (Mistral merges them
    over ``base-input``); an inline value wins over the same key of ``input``."""
    install(host, tmp_path, """
        actions:
          shout:
            base: std.echo output="HELLO"
        workflows:
          wf:
            output:
              person: <% $.person %>
              shouted: <% $.shouted %>
              echoed: <% $.echoed %>
            tasks:
              task1:
                workflow: person name="John Doe" age=32 nickname=null retired=false
                publish: {person: <% task().result %>}
                on-success: task2
              task2:
                action: shout
                publish: {shouted: <% task().result %>}
                on-success: task3
              task3:
                action: std.echo output="inline"
                input: {output: given}
                publish: {echoed: <% task().result %>}
          person:
            input: [name, age, nickname, retired]
            output: [<% $.name %>, <% $.age %>, <% $.nickname %>, <% $.retired %>]
            tasks:
              noop:
                action: std.noop
        """)
    execution = host.executions.create("inline.wf", {})
    assert execution.output == {"person": ["John Doe", 32, None, False], "shouted": "HELLO",
                                "echoed": "inline"}


def test_text_mistral_would_ignore_is_refused_at_validation(host: Host, tmp_path: Path
                                                            ) -> None:
    """Stricter than Mistral, which drops ``output=Hello`` silently (then fails the
    task for a missing input): ours names the text when the workbook is validated."""
    path = tmp_path / "many.yaml"
    path.write_text(textwrap.dedent("""
        version: '2.0'
        name: many
        actions:
          hello:
            base: std.echo output=Hi there
        workflows:
          w:
            tasks:
              a:
                action: std.echo output=Hello
                on-success: [fail msg=oops]
              b:
                workflow: other size=1.5
        """))
    report = "\n".join(str(p) for p in host.workbooks.validate([path]))
    for line in ["action 'hello': 'base' 'std.echo output=Hi there': cannot read "
                 "'output=Hi there' as a parameter",
                 "task 'a': 'action' 'std.echo output=Hello': cannot read 'output=Hello'",
                 "task 'a': 'on-success' entry 'fail msg=oops': cannot read 'msg=oops'",
                 "task 'b': 'workflow' 'other size=1.5': cannot read '.5'"]:
        assert line in report, report
