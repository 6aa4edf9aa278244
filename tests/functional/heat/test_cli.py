"""``launch heat`` / ``heat status`` as a user runs them, on a real native heat-all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.functional.heat.conftest import heat_processes
from tests.functional.heat.test_deploy_progress import _conf_file
from tripleo_flow.cli.main import main
from tripleo_flow.heat.workdir import HeatDir


def test_launch_status_kill_through_the_cli(
        tmp_path: Path, heat_venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conf = ["--config-file", str(_conf_file(tmp_path, heat_venv))]
    heat_dir = str(tmp_path / "work")

    def run(*args: str) -> dict:
        assert main([*conf, *args, "-f", "json"]) == 0
        return json.loads(capsys.readouterr().out)

    launched = run("launch", "heat", "--heat-type", "native", "--heat-dir", heat_dir)
    assert launched["heat_type"] == "native" and launched["endpoint"].endswith("/v1/admin")
    status = run("heat", "status", "--heat-dir", heat_dir)
    assert status["running"] is True and status["api_answers"] is True
    # A second launch on the same heat-dir is refused with the conflict exit code.
    assert main([*conf, "launch", "heat", "--heat-dir", heat_dir]) == 4
    capsys.readouterr()

    killed = run("launch", "heat", "--heat-dir", heat_dir, "--kill")
    assert killed["dump"] and Path(killed["dump"]).stat().st_size > 0
    assert isinstance(killed["stopped"], list) and killed["stopped"]
    assert heat_processes(HeatDir(heat_dir).conf_file) == []
    again = run("launch", "heat", "--heat-dir", heat_dir, "--kill")  # safe twice
    assert again["stopped"] == []
    assert run("heat", "status", "--heat-dir", heat_dir)["running"] is False
