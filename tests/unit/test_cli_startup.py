"""Commands that read a plan start without the workflow engine: ``tripleo-flow plan
list``, ``plan show`` and ``parameters show``, run as real subprocesses against a
local store, import neither TaskFlow nor networkx, SQLAlchemy or alembic (what made
every command cost seconds of CPU); a command that runs a workflow still runs it.

The speed itself is measured by ``bench/cli_startup.py``, never asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

#: Top-level packages a read must not load: the engine and its persistence.
ENGINE = ("taskflow", "networkx", "sqlalchemy", "alembic")

#: Runs the CLI as ``tripleo-flow`` does, then writes the top-level packages it
#: loaded to the file named by its first argument.
RUN_AND_LIST = """
import json, sys
from tripleo_flow.cli.main import main
out, argv = sys.argv[1], sys.argv[2:]
try:
    code = main(argv)
finally:
    with open(out, "w") as f:
        json.dump(sorted({name.partition(".")[0] for name in sys.modules}), f)
sys.exit(code)
"""


class Cli:
    """``tripleo-flow`` on a local store under ``tmp_path``."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.conf = tmp_path / "tripleo-flow.conf"
        self.conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")

    def __call__(self, *args: str) -> tuple[str, list[str]]:
        """The command's standard output, and the top-level packages it imported."""
        loaded = self.tmp_path / "loaded.json"
        done = subprocess.run(
            [sys.executable, "-c", RUN_AND_LIST, str(loaded), "--config-file", str(self.conf),
             *args], capture_output=True, text=True, timeout=300,
            env=dict(os.environ, HOME=str(self.tmp_path / "home")))
        assert done.returncode == 0, done.stderr
        return done.stdout, json.loads(loaded.read_text())


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    cli = Cli(tmp_path_factory.mktemp("startup"))
    created, loaded = cli("plan", "create", "overcloud", "--sample", "-f", "json")
    # Changing a plan runs a workflow: the engine is loaded for it, as before.
    assert json.loads(created)["name"] == "overcloud"
    assert {"taskflow", "sqlalchemy"} <= set(loaded)
    cli("parameters", "set", "--plan", "overcloud", "ComputeCount=3")
    return cli


@pytest.mark.parametrize("args,check", [
    (("plan", "list"),
     lambda out: [row["name"] for row in out] == ["overcloud"]),
    (("plan", "show", "overcloud"),
     lambda out: out["name"] == "overcloud" and out["parameters_set"] >= 1),
    (("parameters", "show", "--plan", "overcloud"),
     lambda out: {row["name"]: row["value"] for row in out}["ComputeCount"] == 3),
])
def test_a_command_that_reads_a_plan_loads_no_workflow_engine(
        cli: Cli, args: tuple[str, ...], check: Any) -> None:
    out, loaded = cli(*args, "-f", "json")
    assert check(json.loads(out)), out
    assert sorted(set(ENGINE) & set(loaded)) == []


def test_a_command_that_runs_the_engine_still_does(cli: Cli) -> None:
    out, loaded = cli("execution", "list", "-f", "json")
    workflows = sorted(row["Workflow"] for row in json.loads(out))
    assert workflows == ["tripleo.parameters.update_parameters",
                         "tripleo.plan.create_deployment_plan"]
    assert "sqlalchemy" in loaded


def test_the_ended_states_spelt_out_are_taskflow_s() -> None:
    from taskflow import states

    from tripleo_flow.api import jobs

    assert jobs.ENDED == (states.SUCCESS, states.FAILURE, states.REVERTED)
