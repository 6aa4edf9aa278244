"""Mistral v2 language features on the real engine (tests/workbooks/good/mistral_dsl.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tripleo_flow import exceptions


@pytest.fixture
def host(tmp_path: Path) -> Any:
    host = Host(tmp_path / "data")
    host.install("mistral_dsl")
    yield host
    host._session.close_workflows()


def run(host: Any, name: str, **inputs: Any) -> Any:
    return host.executions.create(f"mistral_dsl.{name}", inputs)


def fails(host: Any, name: str, **inputs: Any) -> str:
    with pytest.raises(exceptions.WorkflowFailed) as info:
        run(host, name, **inputs)
    return str(info.value)


def test_a_bare_task_name_is_a_task_reference(host: Any) -> None:
    assert run(host, "bare_names").output == {"greeting": "hello world"}


def test_input_given_as_one_expression(host: Any) -> None:
    assert run(host, "input_expression").output == {"echoed": "from params"}
    assert run(host, "input_expression", params={"output": 7}).output == {"echoed": 7}
    message = fails(host, "input_expression", params=[1])
    assert "must give a mapping of input names to values (got list)" in message


@pytest.mark.parametrize("failures, attempts, calls", [(2, 3, 3), (0, 0, 1), (3, 3, 4)])
def test_retry_count_and_delay_as_expressions(host: Any, tmp_path: Path, failures: int,
                                              attempts: int, calls: int) -> None:
    counter = tmp_path / "calls"
    execution = run(host, "retry_expressions", counter=str(counter), failures=failures,
                    attempts=attempts)
    assert execution.output == {"calls": calls}


def test_retry_count_expression_ends_the_retries(host: Any, tmp_path: Path) -> None:
    counter = tmp_path / "calls"
    message = fails(host, "retry_expressions", counter=str(counter), failures=5, attempts=2)
    assert "flaky call 3" in message
    assert counter.read_text() == "3"  # one call and two retries, no more


def test_a_retry_count_that_is_not_a_number_fails_the_task(host: Any, tmp_path: Path) -> None:
    message = fails(host, "retry_expressions", counter=str(tmp_path / "c"), failures=0,
                    attempts="many")
    assert ("'retry count' is '<% $.attempts %>', which gave 'many'; it must give a whole "
            "number >= 0") in message


def test_fail_and_succeed_commands_carry_a_message(host: Any) -> None:
    message = fails(host, "command_messages", size=5)
    assert "reached a 'fail' transition: size 5 is too big" in message
    assert run(host, "command_messages", size=1).state == "SUCCESS"


def test_fail_with_a_message_on_error(host: Any) -> None:
    message = fails(host, "error_message")
    assert "'fail' transition: could not write the plan after an error: " \
           "std.fail was called: disk full" in message


def test_advanced_transitions_publish_to_branch_and_global_scopes(host: Any) -> None:
    execution = run(host, "scopes")
    assert execution.output == {"branch_value": 3, "global_value": 6, "atomic_value": "set",
                                "seen": 6, "global_in_context": 6}
    states = {t.name: t.state for t in host.tasks.list(execution.id)}
    assert states == {"count": "SUCCESS", "report": "SUCCESS", "never": "SKIPPED"}


def test_an_on_error_clause_with_publish_handles_the_error(host: Any) -> None:
    execution = run(host, "handled_with_publish")
    assert execution.output == {"reason": "no space"}  # the error data, as Mistral


def test_mistral_functions(host: Any) -> None:
    output = run(host, "functions").output
    assert output == {"id_length": 36, "jinja_id_length": 36, "pretty": '{\n    "a": 1\n}',
                      "names": ["first", "second"], "done_results": [1], "me": "SUCCESS",
                      "executions": 1, "env": {}}


def test_env_is_the_executions_environment_and_survives_a_resume(
        host: Any, tmp_path: Path) -> None:
    log = tmp_path / "log"
    env = {"who": "ann", "greeting": {"text": "hi"}}
    execution = host.executions.create("mistral_dsl.with_env", {"log": str(log)}, env=env)
    assert execution.state == "PAUSED" and execution.env == env
    execution = host.executions.resume(execution.id)  # a new engine, env read back
    assert execution.state == "SUCCESS"
    assert execution.output == {"greeting": "hi", "env": env}
    assert log.read_text().splitlines() == ["do ann"]
    with pytest.raises(exceptions.InvalidInput, match="env must be a JSON object"):
        host.executions.create("mistral_dsl.with_env", {"log": str(log)}, env=["who"])


def test_keep_result_false_keeps_only_what_is_published(host: Any) -> None:
    execution = run(host, "keep_result")
    assert execution.output == {"kept": "a large value"}
    [task] = host.tasks.list(execution.id)
    assert task.result is None and task.published == {"kept": "a large value"}


def test_pause_and_pause_before_stop_until_resumed(host: Any, tmp_path: Path) -> None:
    log = tmp_path / "log"
    execution = run(host, "pausing", log=str(log))
    assert execution.state == "PAUSED"
    assert log.read_text().splitlines() == ["do a"]
    assert host.executions.get(execution.id).state == "PAUSED"
    execution = host.executions.resume(execution.id)
    assert execution.state == "PAUSED"  # pause-before of c
    assert log.read_text().splitlines() == ["do a", "do b"]
    execution = host.executions.resume(execution.id)
    assert execution.state == "SUCCESS"
    assert log.read_text().splitlines() == ["do a", "do b", "do c"]
    assert [t.name for t in host.tasks.list(execution.id)] == ["a", "b", "c"]


def test_adhoc_actions_wrap_a_base_action(tmp_path: Path) -> None:
    host = Host(tmp_path / "data")
    try:
        host.install("adhoc_actions")
        execution = host.executions.create("adhoc_actions.greetings", {"name": "Ann"})
        assert execution.output == {"plain": "HELLO, ANN!", "custom": "GOOD MORNING, ANN!"}
        log = tmp_path / "log"
        with pytest.raises(exceptions.WorkflowFailed):
            host.executions.create("adhoc_actions.undone", {"log": str(log)})
        # the base action's revert ran with the inputs the ad-hoc action derived
        assert log.read_text().splitlines() == ["do remember-this", "undo remember-this"]
    finally:
        host._session.close_workflows()



STRUCTURE = """
version: '2.0'
name: many
workflows:
  w:
    tasks:
      a:
        action: std.echo output=1
        keep-result: maybe
        retry: {count: lots, delay: <% $.d %>}
        on-success:
          publish: {everywhere: {x: 1}}
          next: [b msg="hi"]
      b:
        action: std.noop
"""

MEANING = """
version: '2.0'
name: many
actions:
  shout:
    base: std.yell
  hello:
    base: std.echo
    base-input: {output: <% $.who %>}
    input: [who]
workflows:
  w:
    tasks:
      a:
        action: hello
        on-success:
          - fail msg="<% task(missing).result %>"
          - b
      b:
        action: std.echo
        input: <% $.params %>
        publish: {x: <% task(elsewhere).result %>}
"""


@pytest.mark.parametrize("text, expected", [
    (STRUCTURE, ["task 'a': 'keep-result' must be true, false or an expression",
                 "task 'a': retry 'count' must be a number >= 0 or an expression",
                 "task 'a': 'publish' in 'on-success' must be a mapping of scopes",
                 "task 'a': 'on-success' entry 'b msg=\"hi\"': only the engine commands"]),
    (MEANING, ["action 'shout': unknown base action 'std.yell'",
               "task 'a': missing required input 'who' of action 'many.hello'",
               "task 'a': 'on-success' refers to task('missing')",
               "task 'b': 'publish' refers to task('elsewhere')"]),
], ids=["structure", "meaning"])
def test_validate_reports_every_problem_of_the_new_clauses_at_once(
        tmp_path: Path, text: str, expected: list[str]) -> None:
    """Structural problems come together, then (once the file parses) every problem
    that needs the actions and the other tasks."""
    path = tmp_path / "many.yaml"
    path.write_text(text)
    host = Host(tmp_path / "data")
    try:
        problems = [str(p) for p in host.workbooks.validate([path])]
    finally:
        host._session.close_workflows()
    report = "\n".join(problems)
    for line in expected:
        assert line in report, report
    assert len(problems) == len(expected), report
