"""Commands that read a plan start without the workflow engine: ``tripleo-flow plan
list``, ``plan show`` and ``parameters show``, run as real subprocesses against a
local store, import neither TaskFlow nor networkx, SQLAlchemy or alembic (what made
every command cost seconds of CPU), nor the backups' archive code and cryptography; a
command that runs a workflow still runs it.
``tripleo-flow --help`` (and ``help``, and a command's ``--help``) import no other
command's module and no heavy library; listing executions compiles no workflow (no
YAQL, no workbook, no TaskFlow engine) and reads the executions database without
TaskFlow's persistence (SQLAlchemy, alembic); listing workflows checks no workbook
(no action registry, no YAQL).  A command that runs a workflow checks the workbooks
once for the files as they are (a record of the check it trusts only when it is
authentic: :mod:`tripleo_flow.client.catalog_checks`), then loads only the actions
its workflow uses.

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
    # Nor the backups' archive code and the cryptography sealing one.
    assert "cryptography" not in packages(loaded)
    assert "tripleo_flow.workspace.backup_archive" not in loaded
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


#: Action modules no plan-parameters workflow uses: loaded only when every action is,
#: to check the workbooks.
UNUSED_ACTIONS = ("tripleo_flow.actions.nodes", "tripleo_flow.actions.deploy_heat",
                  "tripleo_flow.actions.ansible")


def checked(loaded: list[str]) -> bool:
    """Whether a command that loaded ``loaded`` checked the workbooks (every action
    loaded) rather than trusting the record of an earlier check."""
    found = set(UNUSED_ACTIONS) & set(loaded)
    assert found in (set(), set(UNUSED_ACTIONS)), found
    return bool(found)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    """A store of its own for the tests that change the plan and the workbooks."""
    cli = Cli(tmp_path_factory.mktemp("runs"))
    cli("plan", "create", "overcloud", "--sample")
    return cli


def set_compute(cli: Cli, count: int) -> list[str]:
    """Run the parameters' workflow (it succeeds); the modules it loaded."""
    return cli("parameters", "set", "--plan", "overcloud", f"ComputeCount={count}")[1]


def user_workbook(cli: Cli, name: str, action: str) -> Path:
    """Add the user workbook ``name``: a workflow ``hello`` whose one task runs
    ``action``."""
    path = cli.tmp_path / "data" / "workbooks" / f"{name}.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"version: '2.0'\nname: {name}\nworkflows:\n  hello:\n    tasks:\n"
                    f"      say:\n        action: {action}\n")
    return path


def test_a_workflow_run_does_not_check_an_unchanged_catalog_again(runs: Cli) -> None:
    set_compute(runs, 4)  # the catalog as it is now is checked at most here ...
    loaded = set_compute(runs, 5)
    assert not checked(loaded)  # ... not again: only the workflow's own actions load
    assert "tripleo_flow.actions.parameters" in loaded


def test_a_changed_workbook_file_is_checked_again(runs: Cli) -> None:
    set_compute(runs, 4)
    mine = user_workbook(runs, "mine", "std.echo output=1")
    try:
        assert checked(set_compute(runs, 5))
        assert not checked(set_compute(runs, 6))
        mine.write_text(mine.read_text().replace("output=1", "output=2"))
        assert checked(set_compute(runs, 7))
    finally:
        mine.unlink()
    assert checked(set_compute(runs, 8))  # a file fewer: another catalog


@pytest.mark.parametrize("record", [b"", b"not json", b"[]", b'{"key": 1, "mac": 2}',
                                    b'{"key": "KEY", "mac": "0"}'])
def test_a_corrupt_record_of_a_check_is_ignored(runs: Cli, record: bytes) -> None:
    set_compute(runs, 4)
    path = runs.tmp_path / "data" / "checks" / "catalog"
    key = json.loads(path.read_text())["key"]
    path.write_bytes(record.replace(b"KEY", key.encode()))
    assert checked(set_compute(runs, 5))  # checked again, and recorded again
    assert json.loads(path.read_text())["key"] == key
    assert not checked(set_compute(runs, 6))


def test_a_forged_record_cannot_make_an_invalid_workbook_run(runs: Cli) -> None:
    import hashlib
    import hmac

    from tripleo_flow.actions.registry import ActionRegistry
    from tripleo_flow.client import catalog_checks
    from tripleo_flow.engine.lang import workbook_loader

    bad = user_workbook(runs, "bad", "no.such_action")
    workbooks = bad.parent
    try:
        # The key of this very catalog, authenticated with a secret of one's own.
        files = [(path, shipped) for directory, shipped in
                 [(workbook_loader.SHIPPED_DIR, True), (workbooks, False)]
                 for path in workbook_loader.workbook_files(directory)]
        limits = workbook_loader.WorkbookLimits()
        key = catalog_checks.catalog_key(files, (limits.max_size, limits.max_tasks),
                                         ActionRegistry.load().entry_points().items())
        assert key is not None
        record = runs.tmp_path / "data" / "checks" / "catalog"
        record.write_text(json.dumps({"key": key, "mac": hmac.new(
            b"not the secret", key.encode(), hashlib.sha256).hexdigest()}))
        done = subprocess.run(
            [sys.executable, "-m", "tripleo_flow.cli.main", "--config-file", str(runs.conf),
             "workflow", "run", "bad.hello"], capture_output=True, text=True, timeout=300,
            env=dict(os.environ, HOME=str(runs.tmp_path / "home")))
        assert done.returncode != 0
        assert "Invalid workbook" in done.stderr and "no.such_action" in done.stderr
    finally:
        bad.unlink()


def test_the_ended_states_spelt_out_are_taskflow_s_as_records_read_them() -> None:
    from taskflow import states

    from tripleo_flow.client import jobs
    from tripleo_flow.engine.store import states as ours

    assert set(ours.STORED_FAILED) == {states.FAILURE, states.REVERTED}  # both read ERROR
    assert jobs.ENDED == (states.SUCCESS, ours.ERROR)
