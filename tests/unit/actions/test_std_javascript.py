"""std.javascript / std.js on the embedded V8 engine (mini-racer), in workflows on the
real engine, ported from Mistral's test_javascript_action.py outcomes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_conformance import Run
from tripleo_flow.actions import javascript


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", {**ACTIONS, "std.javascript": javascript.JavaScript,
                                    "std.js": javascript.Js})
    yield host
    host._session.close_workflows()


def test_a_script_reads_its_context_and_returns_json_data(host: Host, tmp_path: Path
                                                          ) -> None:
    """Mistral's test_javascript_action.py: $ is the context, the script's return is
    the result (here an object, as JSON data)."""
    run = Run(host, tmp_path, """
        wf:
          input:
            - num: 50
          output:
            result: <% $.result %>
            short: <% $.short %>
          tasks:
            task1:
              action: std.javascript
              input:
                context: <% $ %>
                script: |
                  return {"doubled": $.num * 2, "list": [1, "two", null], "ok": true};
              publish:
                result: <% task().result %>
              on-success: [task2]
            task2:
              action: std.js
              input:
                context: {n: 2}
                script: return $.n + 1
              publish:
                short: <% task().result %>
        """)
    assert run.state == "SUCCESS", run.error
    assert run.output == {"result": {"doubled": 100, "list": [1, "two", None], "ok": True},
                          "short": 3}


@pytest.mark.parametrize(("script", "expected"), [
    ("throw new Error('no luck')", "no luck"),
    ("return (", "SyntaxError"),
    ("require('fs')", "require is not defined"),
])
def test_a_failing_script_fails_the_task(host: Host, tmp_path: Path, script: str,
                                         expected: str) -> None:
    run = Run(host, tmp_path, f"""
        wf:
          tasks:
            task1:
              action: std.javascript
              input:
                script: "{script}"
        """)
    assert run.state == "ERROR" and run.error is not None
    assert "std.javascript failed" in str(run.error) and expected in str(run.error)


def test_a_script_that_never_ends_is_stopped(host: Host, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(javascript, "TIMEOUT", 0.5)
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.javascript
              input:
                script: "while (true) {}"
        """)
    assert run.state == "ERROR" and run.error is not None
    assert "std.javascript failed" in str(run.error)
    assert "Timeout" in str(run.error)
