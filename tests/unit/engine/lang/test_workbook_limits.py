"""[limits] workbook_max_size and workbook_max_tasks: on create/update (Python API and
CLI) and when workbooks are loaded; a workbook past them is listed with the problem and
none of its workflows runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import cli_inprocess
from tests.fixtures_plans import make_client
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.engine.lang import workbook_loader
from tripleo_flow.engine.lang.workbook_loader import WorkbookLimits
from tripleo_flow.plans.local import LocalStore


def workbook(tasks: int, name: str = "big", padding: int = 0) -> str:
    lines = ["version: '2.0'", f"name: {name}", f"# {'x' * padding}", "workflows:",
             "  chain:", "    tasks:"]
    for i in range(tasks):
        lines += [f"      t{i}:", "        action: std.noop"]
        if i + 1 < tasks:
            lines.append(f"        on-success: t{i + 1}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("tasks, padding, limits, words", [
    (11, 0, WorkbookLimits(max_tasks=10), "has 11 tasks, more than [limits] "
                                          "workbook_max_tasks (10)"),
    (2, 5000, WorkbookLimits(max_size=4096), "more than [limits] workbook_max_size (4096)"),
])
def test_read_file_refuses_past_the_limits(tmp_path: Path, tasks: int, padding: int,
                                           limits: WorkbookLimits, words: str) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(workbook(tasks, padding=padding))
    found, problems = workbook_loader.read_file(path, limits)
    assert found is None
    assert [words in p.message for p in problems] == [True]


def test_read_file_takes_what_fits(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(workbook(10))
    found, problems = workbook_loader.read_file(path, WorkbookLimits(max_size=4096,
                                                                     max_tasks=10))
    assert problems == [] and found is not None and len(found.workflows["chain"].tasks) == 10


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    c = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    c.conf.set_override("workbook_max_tasks", 10, group="limits")
    yield c
    c.close()


def test_create_and_update_refuse_a_workbook_past_the_limit(client: Client,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(workbook(11))
    with pytest.raises(exceptions.InvalidWorkbook, match="workbook_max_tasks"):
        client.workbooks.create(path)
    assert not (client._session.workbooks_dir / "big.yaml").exists()
    path.write_text(workbook(3))
    client.workbooks.create(path)
    path.write_text(workbook(12))
    with pytest.raises(exceptions.InvalidWorkbook, match="has 12 tasks"):
        client.workbooks.update(path)
    assert len(client.workflows.get("big.chain").tasks) == 3  # left as it was


def test_a_loaded_workbook_past_the_limit_is_listed_not_run(client: Client) -> None:
    client._session.workbooks_dir.mkdir(parents=True, exist_ok=True)
    (client._session.workbooks_dir / "big.yaml").write_text(workbook(11))
    assert not any(w.workbook == "big" for w in client.workflows.list())
    entry = next(e for e in client.workbooks.list() if e.path.name == "big.yaml")
    assert entry.workbook is None and "workbook_max_tasks" in str(entry.problems[0])
    assert any(w.full_name == "tripleo.plan.create_deployment_plan"
               for w in client.workflows.list())


def test_cli_workbook_create_past_the_limit_exits_2(tmp_path: Path) -> None:
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
                    "[limits]\nworkbook_max_size = 2048\n")
    path = tmp_path / "big.yaml"
    path.write_text(workbook(2, padding=3000))
    done = cli_inprocess.run("--config-file", str(conf), "workbook", "create", str(path))
    assert done.returncode == 2, done.stderr
    assert "more than [limits] workbook_max_size (2048)" in done.stderr
    assert "Traceback" not in done.stderr


def test_workflow_expressions_meet_the_configured_limits(client: Client, tmp_path: Path) -> None:
    path = tmp_path / "grow.yaml"
    path.write_text("""version: '2.0'
name: grow
workflows:
  grow:
    input: [n]
    output:
      text: '{{ "ab" * _.n }}'
    tasks:
      noop:
        action: std.noop
""")
    client.workbooks.create(path)
    assert client.executions.create("grow.grow", {"n": 10}).output == {"text": "ab" * 10}
    client.conf.set_override("render_max_size", 100, group="limits")
    with pytest.raises(exceptions.WorkflowFailed, match=r"render_max_size"):
        client.executions.create("grow.grow", {"n": 60})
