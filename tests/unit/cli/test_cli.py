"""The workbook/workflow/action/execution commands, run in this process (cliff's app
with its own stdout and stderr, the exit code ``main`` returns).  What needs a second
process (a failed run's own exit code, ``--no-wait``'s detached run) is in
``tests/functional/cli/test_cli_processes.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import cli_inprocess
from tests.engine_helpers import WORKBOOKS
from tests.fixtures_plans import make_client
from tripleo_flow.plans.local import LocalStore

GOOD = WORKBOOKS / "good" / "std_only.yaml"


class Cli:
    def __init__(self, tmp_path: Path) -> None:
        self.conf = tmp_path / "tripleo-flow.conf"
        self.conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")

    def __call__(self, *args: str, ok: bool = True,
                 process: bool = False) -> subprocess.CompletedProcess[str]:
        """Run the command (in this process unless ``process``): its exit code and
        output, as a subprocess would give them."""
        argv = ["--config-file", str(self.conf), *args]
        if process:
            done = subprocess.run([sys.executable, "-m", "tripleo_flow.cli.main", *argv],
                                  capture_output=True, text=True, timeout=120)
        else:
            done = cli_inprocess.run(*argv)
        if ok:
            assert done.returncode == 0, done.stderr
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, "-f", "json").stdout)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """The command with the user workbook ``std_only`` installed (through the Python
    API: ``workbook create`` itself runs as a command in the tests that check it)."""
    cli = Cli(tmp_path)
    client = make_client(tmp_path, LocalStore(tmp_path / "data" / "plans"))
    try:
        client.workbooks.create(GOOD)
    finally:
        client.close()
    return cli


def test_workbooks_and_workflows_are_listed(cli: Cli) -> None:
    workbooks = {row["Name"]: row for row in cli.json("workbook", "list")}
    assert workbooks["std_only"]["Origin"] == "user"
    assert workbooks["tripleo.plan"]["Origin"] == "shipped"
    workflows = {row["Name"]: row for row in cli.json("workflow", "list")}
    assert workflows["std_only.greet"]["Input"] == "who, times=2"
    assert "tripleo.plan.create_deployment_plan" in workflows


def test_workflow_show_prints_inputs_tasks_and_dot(cli: Cli) -> None:
    shown = cli.json("workflow", "show", "greet")
    assert shown["Name"] == "std_only.greet"
    assert "say: action std.echo" in shown["Tasks"]
    assert '"say" -> "repeat" [label="on-success"]' in shown["Graph"]


def test_run_then_inspect_execution(cli: Cli, tmp_path: Path) -> None:
    inputs = tmp_path / "inputs.yaml"
    inputs.write_text("who: file\ntimes: 1\n")
    done = cli("workflow", "run", "greet", "--input-file", str(inputs), "--input", "times=3",
               "-f", "json")
    run = json.loads(done.stdout)
    assert run["State"] == "SUCCESS"
    assert json.loads(run["Output"]) == {"greeting": "hello file", "echoes": [0, 1, 2]}
    assert "say succeeded" in done.stderr
    listed = cli.json("execution", "list")
    assert [row["ID"] for row in listed] == [run["ID"]]
    shown = cli.json("execution", "show", run["ID"])
    assert json.loads(shown["Input"]) == {"who": "file", "times": 3}
    tasks = cli.json("execution", "tasks", run["ID"])
    assert [(t["Task"], t["State"]) for t in tasks] == [("say", "SUCCESS"),
                                                        ("repeat", "SUCCESS")]


def test_the_execution_env_is_read_by_env_and_kept(cli: Cli, tmp_path: Path) -> None:
    envs = tmp_path / "env.yaml"
    envs.write_text("salutation: ignored\nextra: [1, 2]\n")
    run = cli.json("workflow", "run", "greet", "--input", "who=env", "--input", "times=0",
                   "--env-file", str(envs), "--env", "salutation=hi")
    assert json.loads(run["Output"])["greeting"] == "hi env"  # --env wins over the file
    shown = cli.json("execution", "show", run["ID"])
    assert json.loads(shown["Env"]) == {"salutation": "hi", "extra": [1, 2]}
    plain = cli.json("workflow", "run", "greet", "--input", "who=x", "--input", "times=0")
    assert json.loads(plain["Output"])["greeting"] == "hello x"
    assert json.loads(plain["Env"]) == {}
    envs.write_text("- not a mapping\n")
    refused = cli("workflow", "run", "greet", "--input", "who=x", "--env-file", str(envs),
                  ok=False)
    assert refused.returncode == 2 and "must hold a mapping" in refused.stderr


def test_no_evaluate_env_keeps_the_expressions_of_the_env_as_text(cli: Cli) -> None:
    """Mistral's evaluate_env start parameter (false): ``--no-evaluate-env``."""
    given = ["--input", "who=x", "--input", "times=0", "--env", "word=yo",
             "--env", "salutation=<% env().word %>"]
    evaluated = cli.json("workflow", "run", "greet", *given)
    assert json.loads(evaluated["Output"])["greeting"] == "yo x"
    raw = cli.json("workflow", "run", "greet", *given, "--no-evaluate-env")
    assert json.loads(raw["Output"])["greeting"] == "<% env().word %> x"


def test_failed_run_reports_task_and_exit_code(cli: Cli) -> None:
    done = cli("workflow", "run", "std_only.broken", ok=False)
    assert done.returncode == 6  # workflow failed
    assert "failed at task 'boom'" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_input_is_refused(cli: Cli) -> None:
    done = cli("workflow", "run", "greet", "--input", "nobody", ok=False)
    assert done.returncode == 2  # invalid input
    assert "use NAME=VALUE" in done.stderr


def test_actions_are_listed_and_shown(cli: Cli) -> None:
    actions = {row["Name"]: row for row in cli.json("action", "list")}
    assert actions["std.echo"]["Input"] == "output=null, delay=0"
    shown = cli.json("action", "show", "std.http")
    assert "url: str" in shown["Input"]
    assert shown["Entry point"] == "tripleo_flow.actions.std:Http"


def test_workbook_update_and_delete(cli: Cli, tmp_path: Path) -> None:
    changed = tmp_path / "changed.yaml"
    changed.write_text(GOOD.read_text().replace("salutation, hello", "salutation, bye"))
    assert cli("workbook", "create", str(changed), ok=False).returncode == 4  # conflict
    cli("workbook", "update", str(changed))
    run = cli.json("workflow", "run", "greet", "--input", "who=x")
    assert json.loads(run["Output"])["greeting"] == "bye x"
    cli("workbook", "delete", "std_only")
    assert cli("workflow", "show", "greet", ok=False).returncode == 3  # not found
    assert cli("workbook", "delete", "tripleo.plan", ok=False).returncode == 4  # conflict


def test_a_sub_workflow_execution_is_shown_with_its_parent_task(cli: Cli,
                                                                 tmp_path: Path) -> None:
    """with-items over a sub-workflow: the task lists its child executions, each shows
    its parent execution and task (Mistral's task_execution_id), progress lines name
    the child's tasks under the parent's task."""
    book = tmp_path / "items.yaml"
    book.write_text("""
version: '2.0'
name: items
workflows:
  hello:
    input: [who]
    output: <% 'hello ' + $.who %>
    tasks:
      say:
        action: std.echo output=<% $.who %>
  wf:
    output:
      said: <% $.said %>
    tasks:
      each:
        with-items: who in <% ['a', 'b'] %>
        workflow: hello who=<% $.who %>
        publish:
          said: <% task().result %>
""")
    cli("workbook", "create", str(book))
    done = cli("workflow", "run", "items.wf", "-f", "json")
    run = json.loads(done.stdout)
    assert json.loads(run["Output"]) == {"said": ["hello a", "hello b"]}
    assert "each/say succeeded" in done.stderr
    [task] = cli.json("execution", "tasks", run["ID"])
    children = task["Sub-executions"].split()
    assert len(children) == 2
    for child, who in zip(children, ["a", "b"], strict=True):
        shown = cli.json("execution", "show", child)
        assert (shown["Parent execution"], shown["Parent task"]) == (run["ID"], "each")
        assert json.loads(shown["Input"]) == {"who": who}
    assert {row["ID"] for row in cli.json("execution", "list")} == {run["ID"], *children}
