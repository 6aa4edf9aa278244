"""The installed ``tripleo-flow`` command, run as a user would (subprocess)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.plan_trees import basic_tree, write_tree


@pytest.fixture
def run(tmp_path: Path):
    exe = shutil.which("tripleo-flow", path=os.path.dirname(sys.executable))
    assert exe, "tripleo-flow is not installed in this virtualenv (pip install -e .)"
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"))

    def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"{args} exited {proc.returncode}: {proc.stderr}")
        return proc
    return _run


def test_plan_lifecycle_through_the_cli(run, tmp_path: Path) -> None:
    templates = write_tree(tmp_path / "t", basic_tree())
    created = json.loads(run("plan", "create", "overcloud", "--templates", str(templates),
                             "-f", "json").stdout)
    assert created["name"] == "overcloud" and created["rendered"] >= 5
    plans = json.loads(run("plan", "list", "-f", "json").stdout)
    assert [p["name"] for p in plans] == ["overcloud"]
    # The default local store lives under $XDG_DATA_HOME/tripleo-flow.
    assert (tmp_path / "xdg/tripleo-flow/plans/overcloud").is_dir()

    run("parameters", "set", "--plan", "overcloud", "ComputeCount=3", "NtpServer=[a, b]")
    rows = json.loads(run("parameters", "show", "--plan", "overcloud", "-f", "json").stdout)
    params = {row["name"]: row["value"] for row in rows}
    assert params == {"ComputeCount": 3, "NtpServer": ["a", "b"]}

    names = run("passwords", "show", "--plan", "overcloud", "-f", "value").stdout.split()
    assert "AdminPassword" in names
    roles = run("roles", "list", "--plan", "overcloud", "-f", "value", "-c", "name").stdout
    assert roles.split() == ["Controller", "Compute"]

    out = tmp_path / "export.tar.gz"
    run("plan", "export", "overcloud", "--output", str(out))
    lean = tmp_path / "lean.tar.gz"
    said = run("plan", "export", "overcloud", "-o", str(lean), "--without-secrets").stdout
    assert "(without secrets)" in said
    for archive, has_passwords in ((out, True), (lean, False)):
        with tarfile.open(archive) as tar:
            member = tar.extractfile("plan-environment.yaml")
            assert member is not None
            env = yaml.safe_load(member.read())
        assert bool(env.get("passwords")) is has_passwords, archive
    run("plan", "delete", "overcloud")
    assert json.loads(run("plan", "list", "-f", "json").stdout) == []


def test_errors_are_one_line_with_the_kind_exit_code(run) -> None:
    proc = run("plan", "show", "ghost", check=False)
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines() == [
        "Plan 'ghost' does not exist. Create it with: "
        "tripleo-flow plan create ghost --templates DIR"]
    proc = run("plan", "create", "bad name", "--templates", "/nonexistent", check=False)
    assert proc.returncode == 2 and "Invalid plan name" in proc.stderr
    assert "Traceback" not in proc.stderr
    debug = run("--debug", "plan", "show", "ghost", check=False)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_help_comes_from_docstrings(run) -> None:
    out = run("plan", "create", "--help").stdout
    assert "Create a plan from a template directory or .tar.gz" in out
    assert "--templates" in out and "--sample" in out


def test_singular_command_names_are_listed_and_the_old_ones_still_run(run) -> None:
    """Commands follow the OpenStack client's ``object action`` form with a singular
    object (``role list``); the old plural names run the same command but are left out
    of the help list."""
    from tripleo_flow.cli.common import RENAMED

    listed = run("help").stdout
    commands = {line.strip().split("  ")[0] for line in listed.splitlines()
                if line.startswith("  ")}
    for old, new in RENAMED.items():
        assert new in commands and old not in commands, (old, new)
    run("plan", "create", "overcloud", "--sample")
    new = run("role", "list", "--plan", "overcloud", "-f", "json").stdout
    old = run("roles", "list", "--plan", "overcloud", "-f", "json").stdout
    assert new == old and "Controller" in new
    run("parameter", "set", "--plan", "overcloud", "ComputeCount=2")
    shown = run("parameter", "show", "--plan", "overcloud", "-f", "json").stdout
    assert shown == run("parameters", "show", "--plan", "overcloud", "-f", "json").stdout
    assert {"name": "ComputeCount", "value": 2} in [
        {k.lower(): v for k, v in row.items() if k.lower() in ("name", "value")}
        for row in json.loads(shown)]


@pytest.mark.parametrize(("template", "fragment"), [
    ("a: 1\n\nb: {{ cycler.__init__.__globals__.os.popen('touch PWNED_PATH').read() }}\n",
     "'__init__'"),
    ("a: 1\n\nb: {{ 'a' * 3000000000 }}\n", "render_max_size"),
])
def test_hostile_template_fails_plan_create_and_leaves_no_plan(
        run, tmp_path: Path, template: str, fragment: str) -> None:
    tree = basic_tree()
    tree["puppet/hostile.j2.yaml"] = template.replace("PWNED_PATH", str(tmp_path / "PWNED"))
    templates = write_tree(tmp_path / "t", tree)
    proc = run("plan", "create", "overcloud", "--templates", str(templates), check=False)
    assert proc.returncode == 2, proc.stderr
    assert "'puppet/hostile.j2.yaml'" in proc.stderr and "at line 3" in proc.stderr
    assert fragment in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "PWNED").exists()
    assert json.loads(run("plan", "list", "-f", "json").stdout) == []
    # the refusal leaves nothing behind: the same name can be used at once
    del tree["puppet/hostile.j2.yaml"]
    write_tree(tmp_path / "good", tree)
    run("plan", "create", "overcloud", "--templates", str(tmp_path / "good"))


@pytest.mark.parametrize(("content", "fragments"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00", ["binary"]),
    (bytes(range(128, 256)), ["UTF-8"]),
    (("l0: &l0 [" + ", ".join(["lol"] * 10) + "]\n" + "".join(
        f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]\n" for i in range(1, 10))
      ).encode(), ["yaml_max_nodes", "line 6"]),
    (b"a: 1\nb: &b\n  c: *b\n", ["recursive alias *b", "line 3"]),
])
def test_parameters_set_file_refuses_hostile_files(run, tmp_path: Path, content: bytes,
                                                   fragments: list[str]) -> None:
    path = tmp_path / "params.yaml"
    path.write_bytes(content)
    proc = run("parameters", "set", "--file", str(path), check=False)
    assert proc.returncode == 2, proc.stderr
    assert str(path) in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    for fragment in fragments:
        assert fragment in proc.stderr


def test_parameters_set_of_a_huge_file_is_refused_before_any_execution(
        run, tmp_path: Path) -> None:
    """90,000 parameters (1.4 MB): refused naming [limits] parameters_max_size, exit 2,
    before an execution is recorded (they failed after tens of seconds naming [limits]
    expression_max_items, their execution recorded)."""
    templates = write_tree(tmp_path / "t", basic_tree())
    run("plan", "create", "overcloud", "--templates", str(templates))
    before = json.loads(run("execution", "list", "-f", "json").stdout)
    path = tmp_path / "params.yaml"
    path.write_text("parameter_defaults:\n" + "".join(f"  P{i}: {i}\n" for i in range(90_000)))
    proc = run("parameters", "set", "--plan", "overcloud", "--file", str(path), check=False)
    assert proc.returncode == 2, proc.stderr
    assert "[limits] parameters_max_size" in proc.stderr and "Traceback" not in proc.stderr
    assert json.loads(run("execution", "list", "-f", "json").stdout) == before
    shown = json.loads(run("parameters", "show", "--plan", "overcloud", "-f", "json").stdout)
    assert not any(row["name"] == "P0" for row in shown)


def test_300000_parameters_are_counted_before_the_file_is_built(run, tmp_path: Path) -> None:
    """A parameters file and an environment file of 300,000 parameters (5 MB) are
    refused at their 100,001st entry, before they are built into values (then refused
    by size, after most of a minute): exit 2 naming [limits] input_max_items and the
    line, no execution recorded, the plan unchanged."""
    templates = write_tree(tmp_path / "t", basic_tree())
    run("plan", "create", "overcloud", "--templates", str(templates))
    before = json.loads(run("execution", "list", "-f", "json").stdout)
    shown = run("parameters", "show", "--plan", "overcloud", "-f", "json").stdout
    environments = run("plan", "environment", "list", "overcloud", "-f", "json").stdout
    path = tmp_path / "params.yaml"
    path.write_text("parameter_defaults:\n" + "".join(f"  P{i}: {i}\n" for i in range(300_000)))
    for args in (("parameters", "set", "--plan", "overcloud", "--file", str(path)),
                 ("plan", "environment", "add", "overcloud", str(path))):
        proc = run(*args, check=False)
        assert proc.returncode == 2, proc.stderr
        assert "more than 100000 entries in one mapping or list (line 100002)" in proc.stderr
        assert "[limits] input_max_items" in proc.stderr and "Traceback" not in proc.stderr
    assert json.loads(run("execution", "list", "-f", "json").stdout) == before
    assert run("parameters", "show", "--plan", "overcloud", "-f", "json").stdout == shown
    assert run("plan", "environment", "list", "overcloud", "-f", "json").stdout == environments


def test_export_without_secrets_leaves_out_nested_and_user_environment_secrets(
        run, tmp_path: Path) -> None:
    templates = write_tree(tmp_path / "t", basic_tree())
    run("plan", "create", "overcloud", "--templates", str(templates))
    run("parameters", "set", "--plan", "overcloud",
        "Nested={inner_password: nested-secret-5e0a91, port: 5672}",
        "Servers=[{password: listed-secret-c27f40, host: db}]")
    mine = tmp_path / "mine.yaml"
    mine.write_text("parameter_defaults:\n  db_password: user-env-secret-83d1b7\n"
                    "  DbHost: db.example\n")
    run("plan", "environment", "add", "overcloud", str(mine))
    shown = {row["name"]: row["value"] for row in json.loads(
        run("parameters", "show", "--plan", "overcloud", "-f", "json").stdout)}
    assert shown["Nested"]["port"] == 5672  # the CLI's user sees the plan as it is

    lean = tmp_path / "lean.tar.gz"
    run("plan", "export", "overcloud", "-o", str(lean), "--without-secrets")
    with tarfile.open(lean) as tar:
        files = {m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
                 for m in tar.getmembers() if m.isfile()}
    env = yaml.safe_load(files["plan-environment.yaml"])["parameter_defaults"]
    assert env["Nested"] == {"port": 5672} and env["Servers"] == [{"host": "db"}]
    [user] = [data for name, data in files.items() if name.endswith("mine.yaml")]
    assert yaml.safe_load(user) == {"parameter_defaults": {"DbHost": "db.example"}}
    everything = b"".join(files.values())
    for secret in (b"nested-secret-5e0a91", b"listed-secret-c27f40", b"user-env-secret-83d1b7"):
        assert secret not in everything
