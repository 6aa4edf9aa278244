"""Conformance with Mistral's engine tests: an action run by itself
(mistral/tests/unit/engine/test_run_action.py, ``engine.start_action``, which
``POST /v2/action_executions`` calls).

Here an action runs as the execution of its one-task workflow ``action:NAME``
(:mod:`tripleo_flow.engine.lang.action_workflows`), through
``client.action_executions.create``; its output is Mistral's ``{"result": ...}``.
Mistral's ad-hoc action ``concat`` is defined standalone; here ad-hoc actions live in
a workbook's ``actions:`` section, so it is ``adhoc.concat``.  A wrong input is
refused before anything is recorded, with a message naming the action, as Mistral's
``InputException``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import Host, until
from tripleo_flow import exceptions

CONCAT = """\
    ---
    version: '2.0'
    name: adhoc
    actions:
      concat:
        base: std.echo
        base-input:
          output: <% $.left %><% $.right %>
        input:
          - left
          - right
    workflows:
      unused:
        tasks:
          nothing:
            action: std.noop
    """


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    client = Host(tmp_path / "data")
    path = tmp_path / "adhoc.yaml"
    path.write_text(textwrap.dedent(CONCAT))
    client.workbooks.create(path)
    yield client
    client.close()


def test_run_action_sync(host: Host) -> None:
    done = host.action_executions.create("std.echo", {"output": "Hello!"})
    assert done.state == "SUCCESS" and done.output["result"] == "Hello!"


def test_run_action_async(host: Host) -> None:
    # Mistral's save_result=True: started, read back from the database once it ended.
    started = host.action_executions.create("std.echo", {"output": "Hello!"}, wait=False)
    done = until("the action execution ends",
                 lambda: (e := host.executions.get(started.id)).state == "SUCCESS" and e)
    assert done.output == {"result": "Hello!"}


def test_run_action_adhoc(host: Host) -> None:
    done = host.action_executions.create("adhoc.concat",
                                         {"left": "Hello, ", "right": "John Doe!"})
    assert done.output["result"] == "Hello, John Doe!"


@pytest.mark.parametrize("action, inputs", [
    ("std.http", {"url": "Hello, ", "metod": "John Doe!"}),  # test_run_action_wrong_input
    ("adhoc.concat", {"left": "Hello, ", "ri": "John Doe!"}),  # test_adhoc_action_wrong_input
])
def test_a_wrong_input_names_the_action_and_runs_nothing(
        host: Host, action: str, inputs: dict[str, str]) -> None:
    with pytest.raises(exceptions.InvalidInput, match=f"Action '{action}' has no input"):
        host.action_executions.create(action, inputs)
    assert host.executions.list() == []
