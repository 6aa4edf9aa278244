"""Commands that name no ``--heat-type`` keep to the type a deployment was made with.

Real CLI (in process), real Heat: the sample plan (with THT's lifecycle environments)
is deployed on ``processes`` Heat (MariaDB dump) while ``[heat] heat_type`` is
``native`` (SQLite), then updated and its Heat launched from the dump and killed, none
of them naming a type: each uses ``processes`` (``native`` could not load the dump).
Scale-down runs the same deploy sub-workflow with the same null input (checked in
tests/unit/engine/test_shipped_workbooks.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.functional.heat.conftest import heat_processes
from tests.functional.heat.lifecycle import lifecycle_templates
from tests.functional.mariadb import free_port
from tripleo_flow.cli.main import main
from tripleo_flow.heat import database
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional


def test_update_and_launch_without_heat_type_use_the_deployments_type(
        tmp_path: Path, heat_venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conf_file = tmp_path / "tripleo-flow.conf"
    conf_file.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
                         f"[heat]\nheat_type = native\nengine_workers = 2\n"
                         f"venv = {heat_venv}\napi_port = {free_port()}\n"
                         f"clouds_yaml = {tmp_path / 'clouds.yaml'}\napi_timeout = 180\n")
    conf = ["--config-file", str(conf_file)]
    work = tmp_path / "work"
    heat = HeatDir(work)

    def run(*args: str) -> dict:
        code = main([*conf, *args, "-f", "json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out[out.index("{"):])  # after a confirmation prompt, if any

    try:
        assert main([*conf, "plan", "create", "oc", "--templates",
                     str(lifecycle_templates(tmp_path / "templates"))]) == 0
        deployed = run("deploy", "--plan", "oc", "--work-dir", str(work),
                       "--heat-type", "processes")
        assert deployed["heat_type"] == "processes"
        assert database.dump_kind(heat.dump_file) == "mariadb"

        updated = run("overcloud", "update", "prepare", "--plan", "oc", "--work-dir",
                      str(work), "-y")
        assert (updated["deployment_status"], updated["stack_status"]) == (
            "DEPLOY_SUCCESS", "UPDATE_COMPLETE")
        assert run("deployment", "status", "--plan", "oc")["heat_type"] == "processes"

        restored = run("launch", "heat", "--heat-dir", str(work), "--restore-db")
        assert restored["heat_type"] == "processes"
        assert run("heat", "status", "--heat-dir", str(work))["database"] == "mariadb"
        killed = run("launch", "heat", "--heat-dir", str(work), "--kill")
        assert killed["dump"] == str(heat.dump_file)
        assert heat.dump_type() == "processes"
    finally:
        main([*conf, "launch", "heat", "--heat-dir", str(work), "--kill"])
    assert heat_processes(heat.conf_file) == []
