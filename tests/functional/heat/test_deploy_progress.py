"""Deployment progress on stderr (CLI) and the ``deploy`` workflow, on a real native heat-all."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.functional.heat.conftest import heat_processes
from tests.functional.heat.test_deploy import FAILING_RESOURCE
from tripleo_flow.cli.main import main
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional

#: A plain progress line: the stack's share of the work done, then its resource counts.
_COUNT = re.compile(r"^(\d+)% resources complete (\d+)/(\d+) \(stack oc (\w+)\)$")


def _conf_file(tmp_path: Path, heat_venv: Path) -> Path:
    path = tmp_path / "tripleo-flow.conf"
    path.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
                    f"[heat]\nvenv = {heat_venv}\n"
                    f"clouds_yaml = {tmp_path / 'clouds.yaml'}\napi_timeout = 180\n")
    return path


def test_cli_deploy_prints_progress_to_stderr(
        tmp_path: Path, heat_venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conf = ["--config-file", str(_conf_file(tmp_path, heat_venv))]
    assert main([*conf, "plan", "create", "oc", "--sample"]) == 0
    capsys.readouterr()
    work = tmp_path / "work"
    assert main([*conf, "deploy", "--plan", "oc", "--work-dir", str(work),
                 "-f", "value", "-c", "deployment_status"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "DEPLOY_SUCCESS"
    counts = [_COUNT.match(line) for line in err.splitlines()]
    found = [(m.group(4), int(m.group(2)), int(m.group(3)), int(m.group(1)))
             for m in counts if m]
    assert found, err
    status, complete, total, percent = found[-1]
    assert status == "CREATE_COMPLETE" and complete == total > 0 and percent == 100
    percents = [p for *_, p in found]
    assert percents == sorted(percents), err  # a create's share never goes down
    events = [line for line in err.splitlines() if line.startswith("  ")]
    assert any("CREATE_COMPLETE" in line for line in events), err
    assert any(" oc/Controller CREATE_COMPLETE" in line for line in events), err
    assert any(" oc-Controller-" in line for line in events), err  # nested stacks' events


def test_workflow_run_deploy_runs_end_to_end(
        tmp_path: Path, heat_venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conf = ["--config-file", str(_conf_file(tmp_path, heat_venv))]
    assert main([*conf, "plan", "create", "oc", "--sample"]) == 0
    work = tmp_path / "work"
    assert main([*conf, "workflow", "run", "deploy", "--input", "plan=oc",
                 "--input", f"work_dir={work}", "--input", "heat_type=native"]) == 0
    out, err = capsys.readouterr()
    assert "SUCCESS" in out and "DEPLOY_SUCCESS" in out, out
    # The stack's progress, as lines every 10% (stderr is not a terminal here).
    stack = [line for line in err.splitlines() if "] deploy_stack: stack " in line]
    assert 1 <= len(stack) <= 12, err  # 11 steps of 10%, and the final status
    assert re.search(r"deploy_stack: stack (\d+)/\1 CREATE_COMPLETE$", stack[-1]), stack
    assert (work / "config-download" / "tripleo-ansible-inventory.yaml").is_file()
    client = Client.from_config_files([conf[1]])
    try:
        assert client.deployments.status("oc")["deployment_status"] == "DEPLOY_SUCCESS"
        executions = client.executions.list("deploy")
        assert [e.state for e in executions] == ["SUCCESS"]
    finally:
        client.close()
    assert heat_processes(HeatDir(work).conf_file) == []


def test_failed_deploy_workflow_records_the_failing_reason(
        tmp_path: Path, heat_venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    templates = tmp_path / "templates"
    shutil.copytree(sample_plan_dir(), templates)
    root = templates / "overcloud.j2.yaml"
    root.write_text(root.read_text().replace("\noutputs:\n", FAILING_RESOURCE + "\noutputs:\n", 1))
    conf = ["--config-file", str(_conf_file(tmp_path, heat_venv))]
    assert main([*conf, "plan", "create", "broken", "--templates", str(templates)]) == 0
    work = tmp_path / "work"
    assert main([*conf, "workflow", "run", "deploy", "--input", "plan=broken",
                 "--input", f"work_dir={work}", "--input", "heat_type=native"]) == 6
    client = Client.from_config_files([conf[1]])
    try:
        status = client.deployments.status("broken")
        assert status["deployment_status"] == "DEPLOY_FAILED"
        # The reason of the failing task, not a bare "deployment reverted".
        assert "deploy_stack" in status["message"] and "CREATE_FAILED" in status["message"]
        assert [f["resource"] for f in client.deployments.failures("broken")] == [
            "BrokenOnPurpose"]
        assert [e.state for e in client.executions.list("deploy")] == ["ERROR"]
    finally:
        client.close()
    assert heat_processes(HeatDir(work).conf_file) == []
