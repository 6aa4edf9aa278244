"""Commands that read a plan start without the workflow engine: ``tripleo-flow plan
list``, ``plan show`` and ``parameters show``, run as real subprocesses against a
local store, import neither TaskFlow nor networkx, SQLAlchemy or alembic (what made
every command cost seconds of CPU); a command that runs a workflow still runs it.
``tripleo-flow --help`` (and ``help``, and a command's ``--help``) import no other
command's module and no heavy library; listing executions compiles no workflow (no
YAQL, no workbook, no TaskFlow engine) and reads the executions database without
TaskFlow's persistence (SQLAlchemy, alembic); listing workflows checks no workbook
(no action registry, no YAQL).

The speed itself is measured by ``bench/cli_startup.py``, never asserted here.  Each
command runs in a fresh Python process (what it imports is the point), hence a
functional test, not a unit one.
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

#: What a listing of the commands must not load: the engine, its persistence, its
#: expression language, the configuration library, the templates' renderer.
HEAVY = (*ENGINE, "yaql", "oslo_config", "jinja2", "tooz", "futurist")

#: The modules of the workflow engine proper: compiling workbooks, running them.
COMPILER = ("tripleo_flow.engine.compile.compiler", "tripleo_flow.engine.compile.runner",
            "tripleo_flow.engine.lang.expressions", "tripleo_flow.engine.lang.workbook_loader",
            "tripleo_flow.engine.compile.atoms", "tripleo_flow.actions.registry")

#: Runs the CLI as ``tripleo-flow`` does, then writes the modules it loaded, and the
#: scans of installed distributions' metadata it made (cliff's search of the
#: distribution of each command, a read of an entry point group), to the file named
#: by its first argument.
RUN_AND_LIST = """
import functools, importlib.metadata as md, json, sys
scans = []
def counted(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        scans.append(f"{function.__name__}({', '.join(map(str, kwargs.values()))})")
        return function(*args, **kwargs)
    return wrapper
md.packages_distributions = counted(md.packages_distributions)
md.entry_points = counted(md.entry_points)
from tripleo_flow.cli.main import main
out, argv = sys.argv[1], sys.argv[2:]
try:
    code = main(argv)
finally:
    with open(out, "w") as f:
        json.dump({"modules": sorted(sys.modules), "scans": scans}, f)
sys.exit(code)
"""


def packages(modules: list[str]) -> set[str]:
    """The top-level packages of ``modules``."""
    return {name.partition(".")[0] for name in modules}


class Cli:
    """``tripleo-flow`` on a local store under ``tmp_path``."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.conf = tmp_path / "tripleo-flow.conf"
        self.conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")

    def __call__(self, *args: str) -> tuple[str, list[str]]:
        """The command's standard output, and the modules it imported."""
        loaded = self.tmp_path / "loaded.json"
        done = subprocess.run(
            [sys.executable, "-c", RUN_AND_LIST, str(loaded), "--config-file", str(self.conf),
             *args], capture_output=True, text=True, timeout=300,
            env=dict(os.environ, HOME=str(self.tmp_path / "home")))
        assert done.returncode == 0, done.stderr
        found = json.loads(loaded.read_text())
        #: The metadata scans of the last command (what the entry points' metadata
        #: read: ``packages_distributions()``, ``entry_points(GROUP)``).
        self.scans: list[str] = found["scans"]
        return done.stdout, found["modules"]


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    cli = Cli(tmp_path_factory.mktemp("startup"))
    created, loaded = cli("plan", "create", "overcloud", "--sample", "-f", "json")
    # Changing a plan runs a workflow: the engine is loaded for it, as before.
    assert json.loads(created)["name"] == "overcloud"
    assert {"taskflow", "sqlalchemy", "yaql"} <= packages(loaded)
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
    assert sorted(set(ENGINE) & packages(loaded)) == []
    assert "packages_distributions()" not in cli.scans


@pytest.mark.parametrize("args", [("--help",), ("help",)])
def test_the_command_list_imports_no_command_module_nor_heavy_library(
        cli: Cli, args: tuple[str, ...]) -> None:
    out, loaded = cli(*args)
    # Every command is listed with its line ...
    assert "  plan create    Create a plan from a template directory" in out
    assert "  execution list  List a page of executions, oldest first" in out
    assert "  workflow run   Run a workflow and show its execution" in out
    # ... and none of their modules was imported to write it.
    from tripleo_flow.cli.command_table import COMMANDS, PACKAGE

    modules = {f"{PACKAGE}.{target.partition(':')[0]}" for target, _ in COMMANDS.values()}
    assert sorted(modules & set(loaded)) == []
    assert sorted(set(HEAVY) & packages(loaded)) == []
    # Nor was the metadata of the installed distributions read (stevedore's own
    # cache of every entry point, ``entry_points()``, may be built on a first run).
    assert [scan for scan in cli.scans if scan != "entry_points()"] == []


@pytest.mark.parametrize("args", [("plan", "list", "--help"), ("execution", "list", "--help"),
                                  ("workflow", "run", "--help"), ("help", "deploy")])
def test_a_command_s_help_imports_its_module_alone(cli: Cli, args: tuple[str, ...]) -> None:
    out, loaded = cli(*args)
    name = " ".join(a for a in args if a not in ("help", "--help"))
    assert out.startswith("usage: ") and f" {name} [-h]" in out.splitlines()[0], out
    from tripleo_flow.cli.command_table import target

    assert target(name).partition(":")[0] in loaded
    assert sorted(set(HEAVY) & packages(loaded)) == []
    assert [scan for scan in cli.scans if scan != "entry_points()"] == []


def test_listing_executions_compiles_no_workflow_nor_builds_the_engine_s_store(
        cli: Cli) -> None:
    out, loaded = cli("execution", "list", "-f", "json")
    workflows = sorted(row["Workflow"] for row in json.loads(out))
    assert workflows == ["tripleo.parameters.update_parameters",
                         "tripleo.plan.create_deployment_plan"]
    assert sorted(set(COMPILER) & set(loaded)) == []
    # The SQLite file is read as it is (engine/store/execution_reader.py): no TaskFlow
    # persistence backend, SQLAlchemy or alembic.
    assert sorted(set(ENGINE) & packages(loaded)) == []
    shown, loaded = cli("execution", "show", json.loads(out)[0]["ID"], "-f", "json")
    assert json.loads(shown)["Workflow"] == "tripleo.plan.create_deployment_plan"
    assert sorted(set(COMPILER) & set(loaded)) == []
    assert sorted(set(ENGINE) & packages(loaded)) == []


def test_listing_workflows_checks_no_workbook(cli: Cli) -> None:
    out, loaded = cli("workflow", "list", "-f", "json")
    assert "tripleo.plan.create_deployment_plan" in {row["Name"] for row in json.loads(out)}
    # The files are read, not checked: no action registry, no expression compiled.
    assert sorted({"tripleo_flow.actions.registry", "tripleo_flow.engine.lang.expressions",
                   "tripleo_flow.engine.lang.workbook_validator"} & set(loaded)) == []
    assert sorted({*ENGINE, "yaql"} & packages(loaded)) == []


def test_a_workflow_run_on_sqlite_loads_no_migrations(cli: Cli) -> None:
    out, loaded = cli("parameters", "set", "--plan", "overcloud", "ComputeCount=2",
                      "-f", "json")
    assert "taskflow" in packages(loaded)  # it ran a workflow ...
    # ... whose SQLite tables TaskFlow creates directly: alembic (MariaDB's migrations),
    # with its templates' and highlighting libraries, is left unloaded.
    assert sorted({"alembic", "mako", "pygments"} & packages(loaded)) == []


def test_the_ended_states_spelt_out_are_taskflow_s_as_records_read_them() -> None:
    from taskflow import states

    from tripleo_flow.client import jobs
    from tripleo_flow.engine.store import states as ours

    assert set(ours.STORED_FAILED) == {states.FAILURE, states.REVERTED}  # both read ERROR
    assert jobs.ENDED == (states.SUCCESS, ours.ERROR)
