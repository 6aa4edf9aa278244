"""Bad input through the installed ``tripleo-flow`` command (subprocess), on both
plan stores: exit 2 (invalid) or 3 (not found) with one line, no traceback, and
the plan byte-identical afterwards (issue 10)."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures_plans import make_client, snapshot
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.store import PlanStore

pytestmark = pytest.mark.functional

#: Progress lines plan create and update print (not a terminal: every 10%).
_PROGRESS = ("Checking templates", "Uploading templates")


@dataclass
class Cli:
    """The command over one store, and that store (and a Python API client on it, for
    what a test prepares) for checks."""

    run: Callable[..., subprocess.CompletedProcess[str]]
    store: PlanStore
    tmp: Path
    client: Client

    def fails(self, code: int, *args: str) -> str:
        """Run ``args``; assert exit ``code`` and one line on stderr; return that line."""
        proc = self.run(*args, check=False)
        lines = [line for line in proc.stderr.strip().splitlines()
                 if not line.startswith(_PROGRESS)]
        assert proc.returncode == code, (args, proc.returncode, proc.stderr)
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        return lines[0]

    def plan(self, name: str = "overcloud") -> dict[str, bytes]:
        return snapshot(self.store, name)

    def containers(self) -> list[str]:
        return [c.name for c in self.store.list_containers()]


@pytest.fixture(params=["local", "swift"])
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cli]:
    exe = shutil.which("tripleo-flow", path=os.path.dirname(sys.executable))
    assert exe, "tripleo-flow is not installed in this virtualenv (pip install -e .)"
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"))
    conf = tmp_path / "tripleo-flow.conf"
    text = "[limits]\narchive_max_size = 1048576\nplan_history_max = 3\n"
    store: PlanStore
    if request.param == "swift":
        store = request.getfixturevalue("swift_store")
        server = request.getfixturevalue("swift_server")
        user, key = request.getfixturevalue("swift_account")  # the store's
        text += (f"[plan_store]\nbackend = swift\n[swift]\nauth_url = {server.auth_url}\n"
                 f"user = {user}\nkey = {key}\n")
    else:
        store = LocalStore(tmp_path / "xdg/tripleo-flow/plans")
    conf.write_text(text)

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([exe, "--config-file", str(conf), *args], env=env,
                              capture_output=True, text=True, timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"{args} exited {proc.returncode}: {proc.stderr}")
        return proc

    client = make_client(tmp_path, store)
    yield Cli(run, store, tmp_path, client)
    client.close()


def _create(cli: Cli, files: dict[str, str] | None = None, through_cli: bool = False) -> Path:
    """The plan the bad input is tried on: made through the Python API (a CLI run
    costs seconds of CPU and is not what these tests check) unless ``through_cli``."""
    templates = write_tree(cli.tmp / "t", files or basic_tree())
    if through_cli:
        cli.run("plan", "create", "overcloud", "--templates", str(templates))
    else:
        cli.client.plans.create("overcloud", templates)
    return templates


def test_restore_finds_only_version_ids_the_store_issued(cli: Cli) -> None:
    _create(cli)
    cli.run("parameters", "set", "--plan", "overcloud", "ComputeCount=3")
    (cli.tmp / "evil.yaml").write_text("parameter_defaults: {Stolen: true}\n")
    history = json.loads(cli.run("plan", "history", "overcloud", "-f", "json").stdout)
    before = cli.plan()
    for version in ["../" * 12 + str(cli.tmp / "evil.yaml").lstrip("/"),
                    "../../objects/plan-environment.yaml", "../../../meta.json",
                    "00000000000000000001", "1234567890.12345", "null", "%2e%2e"]:
        line = cli.fails(3, "plan", "restore", "overcloud", version)
        assert line == str(exceptions.VersionNotFound("overcloud", version))
        assert cli.plan() == before
    cli.run("plan", "restore", "overcloud", history[1]["version"])
    assert b"ComputeCount" not in cli.plan()["plan-environment.yaml"]


def test_history_keeps_plan_history_max_versions(cli: Cli) -> None:
    _create(cli)
    for count in range(1, 6):
        cli.run("parameters", "set", "--plan", "overcloud", f"ComputeCount={count}")
    history = json.loads(cli.run("plan", "history", "overcloud", "-f", "json").stdout)
    assert len(history) == 3 and history[0]["current"]
    oldest = cli.run("plan", "restore", "overcloud", history[-1]["version"], "-f", "json")
    assert json.loads(oldest.stdout)["restored"] == history[-1]["version"]


def test_names_are_checked_before_anything_is_stored(cli: Cli) -> None:
    templates = _create(cli)
    before = cli.plan()
    long_name = "a" * 300
    for args in (["plan", "create", "--templates", str(templates), "--", "-bad"],
                 ["plan", "create", long_name, "--templates", str(templates)],
                 ["plan", "show", long_name],
                 ["plan", "history", long_name],
                 ["parameters", "set", "--plan", long_name, "A=1"]):
        assert "Invalid plan name" in cli.fails(2, *args)
    for assignment in ("../x=1", "A B=2", "1abc=3"):
        line = cli.fails(2, "parameters", "set", "--plan", "overcloud", assignment)
        assert "Invalid parameter name" in line
    assert cli.containers() == ["overcloud"]
    assert cli.plan() == before


def _tarball(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_archives_and_trees_that_cannot_be_plans(cli: Cli) -> None:
    _create(cli)
    before = cli.plan()
    info = tarfile.TarInfo("big.bin")  # not YAML: nothing but the limit refuses it
    info.size = 50 << 20  # 50 MB of zeros, past archive_max_size = 1 MB
    raw = info.tobuf() + b"\0" * (info.size + 1024)
    bomb = cli.tmp / "bomb.tar.gz"
    bomb.write_bytes(gzip.compress(raw))
    assert bomb.stat().st_size < 100_000
    assert "archive_max_size" in cli.fails(2, "plan", "create", "other", "--templates",
                                           str(bomb))
    assert "archive_max_size" in cli.fails(2, "plan", "update", "overcloud", "--templates",
                                           str(bomb))
    manifest = _tarball(cli.tmp / "m.tar.gz", {
        "overcloud.yaml": b"heat_template_version: wallaby\n",
        ".tripleo-flow/manifest.json": b"{}"})
    assert ".tripleo-flow/" in cli.fails(2, "plan", "update", "overcloud", "--templates",
                                         str(manifest))
    looped = write_tree(cli.tmp / "looped", {"overcloud.yaml": "heat_template_version: x\n"})
    os.symlink("b.yaml", looped / "a.yaml")
    os.symlink("a.yaml", looped / "b.yaml")
    assert "symbolic link loop" in cli.fails(2, "plan", "create", "other", "--templates",
                                             str(looped))
    assert cli.containers() == ["overcloud"]
    assert cli.plan() == before


def test_template_files_named_like_temporary_files_are_kept(cli: Cli) -> None:
    tree = dict(basic_tree())
    tree[".tmp-user.yaml"] = "parameter_defaults: {A: 1}\n"
    tree["environments/.tmp-x.yaml"] = "parameter_defaults: {B: 2}\n"
    _create(cli, tree, through_cli=True)
    names = set(cli.plan())
    assert {".tmp-user.yaml", "environments/.tmp-x.yaml"} <= names
    out = cli.tmp / "export.tar.gz"
    cli.run("plan", "export", "overcloud", "--output", str(out))
    with tarfile.open(out) as archive:
        assert {".tmp-user.yaml", "environments/.tmp-x.yaml"} <= set(archive.getnames())


def test_wrong_shape_capabilities_map(cli: Cli) -> None:
    tree = dict(basic_tree())
    tree["capabilities-map.yaml"] = "- topics\n- of a list\n"
    templates = write_tree(cli.tmp / "bad", tree)
    line = cli.fails(2, "plan", "create", "overcloud", "--templates", str(templates))
    assert "capabilities-map.yaml" in line and "must be a mapping" in line
    assert cli.containers() == []
    _create(cli)  # then a plan whose map went bad after it was created
    cli.store.put_object("overcloud", "capabilities-map.yaml",
                         b"topics:\n  - title: T\n    environment_groups: {a: 1}\n")
    before = cli.plan()
    for args in (["capabilities", "show", "--plan", "overcloud"],
                 ["capabilities", "set", "--plan", "overcloud", "--enable",
                  "environments/base.yaml"]):
        line = cli.fails(2, *args)
        assert "capabilities-map.yaml" in line
        assert "topics[0].environment_groups must be a list of mappings" in line
    assert cli.plan() == before


@pytest.mark.parametrize("cli", ["local"], indirect=True)
def test_a_number_of_100000_digits_is_refused_clearly(cli: Cli) -> None:
    """Python refuses int() of more than 4300 digits with its own words about
    sys.set_int_max_str_digits (the CLI exited 1 with them, issue 29): exit 2 naming
    the value (or the file's line) and how to pass it, the plan unchanged."""
    _create(cli)
    before = cli.plan()
    digits = "7" * 100_000
    said = [cli.fails(2, "parameters", "set", "--plan", "overcloud",
                      f"ComputeCount={digits}")]
    assert "ComputeCount" in said[0] and "4300 digits" in said[0], said[0][:300]
    big = cli.tmp / "big.yaml"
    big.write_text(f"parameter_defaults:\n  ComputeCount: {digits}\n")
    said.append(cli.fails(2, "parameters", "set", "--plan", "overcloud", "--file", str(big)))
    assert "big.yaml" in said[1] and "line 2" in said[1] and "quote it" in said[1], said[1][:300]
    for line in said:  # Python's own words gone, and the value not quoted back
        assert "set_int_max_str_digits" not in line and len(line) < 1000, line[:300]
    assert cli.plan() == before
