"""``kill -9`` of ``tripleo-flow plan create`` and ``plan update`` at several points,
on both plan stores: no visible half plan, the retry succeeds, the plan is complete.
The killed command is the CLI (a process to kill); the retry and the checks use the
Python API in the test's process (the CLI's start-up, seconds of CPU a run, proves
nothing more there).

The processes kill themselves with SIGKILL at a crash point named by
``TRIPLEO_FLOW_TEST_CRASH_AT`` (:mod:`tripleo_flow.common.crashpoints`), so each
run stops at the same place.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.fixtures_plans import make_client
from tests.plan_state import md5, object_digests
from tests.plan_trees import basic_tree, write_tree
from tests.swift_server import SwiftServer
from tests.tht import fetch_tree_dir
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.common.crashpoints import ENV as CRASH_ENV
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.plan import JOURNAL, MANIFEST, PLAN_ENV, Manifest, digest
from tripleo_flow.plans.store import PlanStore

pytestmark = pytest.mark.functional

PLAN = "overcloud"


@dataclass
class Cli:
    """The installed command against one store; that store and a Python API client
    on it (same locks) for the checks."""

    run: Callable[..., subprocess.CompletedProcess[str]]
    store: PlanStore
    client: Client
    #: starts the command without waiting (to kill it from outside)
    popen: Callable[..., subprocess.Popen[str]]
    #: a scratch directory of the test
    home: Path


def _cli(request: pytest.FixtureRequest, tmp_path: Path, kind: str) -> Iterator[Cli]:
    exe = shutil.which("tripleo-flow", path=os.path.dirname(sys.executable))
    assert exe, "tripleo-flow is not installed in this virtualenv (pip install -e .)"
    conf = tmp_path / "tripleo-flow.conf"
    text = f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
    store: PlanStore
    if kind == "local":
        store = LocalStore(tmp_path / "data" / "plans")
    else:
        store = request.getfixturevalue("swift_store")
        server: SwiftServer = request.getfixturevalue("swift_server")
        user, key = request.getfixturevalue("swift_account")  # the store's
        text += (f"[plan_store]\nbackend = swift\n[swift]\nauth_url = {server.auth_url}\n"
                 f"user = {user}\nkey = {key}\n")
    conf.write_text(text)
    client = make_client(tmp_path, store, lock_url=f"file://{tmp_path / 'data' / 'locks'}")
    env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
    env.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "xdg"))

    def run(*args: str, crash: str | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([exe, "--config-file", str(conf), *args], capture_output=True,
                              text=True, timeout=300,
                              env=env | ({CRASH_ENV: crash} if crash else {}))
        if crash:
            assert proc.returncode == -signal.SIGKILL, (
                f"{args} was meant to die at {crash}: exit {proc.returncode}, {proc.stderr}")
        elif check and proc.returncode != 0:
            raise AssertionError(f"{args} exited {proc.returncode}: {proc.stderr}")
        return proc

    def popen(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([exe, "--config-file", str(conf), *args], text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    yield Cli(run, store, client, popen, tmp_path)
    client.close()


@pytest.fixture(params=["local", "swift"])
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cli]:
    yield from _cli(request, tmp_path, request.param)


@pytest.fixture
def swift_cli(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cli]:
    yield from _cli(request, tmp_path, "swift")


def _tree(version: str, count: int = 120) -> dict[str, str]:
    """A mid-size tree: the basic tree and ``count`` generated environments.

    Version "b" changes half of them, drops a quarter, adds new ones and a role.
    """
    tree = basic_tree()
    for i in range(count):
        if version == "b" and i % 4 == 3:
            continue
        changed = version == "b" and i % 2 == 0
        tree[f"environments/gen/env-{i:03d}.yaml"] = (
            f"# {'b' if changed else 'a'}\nparameter_defaults:\n  Gen{i}: {'x' * 2000}\n")
    if version == "b":
        for i in range(count // 4):
            tree[f"environments/added/new-{i:03d}.yaml"] = f"parameter_defaults: {{New{i}: 1}}\n"
        tree["roles_data.yaml"] += "- name: Storage\n  CountDefault: 1\n"
    return tree


def _assert_complete(cli: Cli, tree: dict[str, str], user: dict[str, bytes]) -> None:
    """The plan holds exactly ``tree`` (plus rendered and user files), complete."""
    store = cli.store
    assert [p["name"] for p in cli.client.plans.list()] == [PLAN]
    # Each object's MD5 (on Swift from one listing, not a GET per object).
    held = object_digests(store, PLAN)
    names = set(held)
    manifest = Manifest.from_bytes(store.get_object(PLAN, MANIFEST))
    assert JOURNAL not in names
    assert set(manifest.templates) == set(tree)
    assert {p for p in tree if held.get(p) != md5(tree[p].encode())} == set()
    assert {p: digest(d.encode()) for p, d in tree.items()} == manifest.templates
    rendered = set(manifest.rendered)
    assert "puppet/controller-role.yaml" in rendered and rendered <= names
    if "- name: Storage" in tree["roles_data.yaml"]:
        assert "puppet/storage-role.yaml" in rendered
    assert names == set(tree) | rendered | set(user) | {PLAN_ENV, MANIFEST}
    for name, data in user.items():
        assert store.get_object(PLAN, name) == data
    shown = cli.client.plans.get(PLAN)
    assert shown["passwords"] > 10 and shown["rendered_files"] == len(rendered)
    env = yaml.safe_load(store.get_object(PLAN, PLAN_ENV))
    assert env["environments"][0] == {"path": "overcloud-resource-registry-puppet.yaml"}


def _settled(store: PlanStore, plan: str) -> list[str]:
    """The objects of ``plan`` once they stop changing (their names and digests, a
    second apart): Swift goes on storing what it received of a killed upload for a
    moment, overwrites of existing objects included."""
    last: dict[str, str] | None = None
    for _ in range(60):
        held = object_digests(store, plan) if store.container_exists(plan) else {}
        if held == last:
            return sorted(held)
        last = held
        time.sleep(1)
    raise AssertionError(f"The objects of {plan!r} kept changing for a minute")


def _assert_invisible(cli: Cli) -> None:
    assert cli.client.plans.list() == []
    for call in (lambda: cli.client.plans.get(PLAN),
                 lambda: cli.client.parameters.set(PLAN, {"A": 1}),
                 lambda: cli.client.plans.update(PLAN, str(sample_plan_dir()))):
        with pytest.raises(exceptions.PlanNotFound):
            call()


@pytest.mark.parametrize("point", ["upload:0.3", "plan.create:done"])
def test_killed_create_leaves_no_visible_plan_and_a_retry_succeeds(
        cli: Cli, tmp_path: Path, point: str) -> None:
    tree = _tree("a")
    templates = write_tree(tmp_path / "a", tree)
    cli.run("plan", "create", PLAN, "--templates", str(templates), crash=point)
    left = _settled(cli.store, PLAN)
    if point.startswith("upload:") and isinstance(cli.store, LocalStore):
        assert 0 < len(left) < len(tree)  # killed half-way through the upload
    assert len(left) <= len(tree) + 2  # the templates, plan-environment and manifest
    _assert_invisible(cli)

    cli.client.plans.create(PLAN, templates)
    _assert_complete(cli, tree, {})


@pytest.mark.parametrize("point, rerun", [
    ("upload:0.5", "a"), ("plan.update:uploaded", "b"), ("plan.update:done", "b"),
])
def test_killed_update_is_repaired_by_the_next_update(
        cli: Cli, tmp_path: Path, point: str, rerun: str) -> None:
    trees = {"a": _tree("a"), "b": _tree("b")}
    dirs = {k: write_tree(tmp_path / k, t) for k, t in trees.items()}
    cli.client.plans.create(PLAN, dirs["a"])
    user = {"user/mine.yaml": b"parameter_defaults: {Mine: 1}\n"}
    for name, data in user.items():
        cli.store.put_object(PLAN, name, data)
    cli.client.parameters.set(PLAN, {"NtpServer": "pool.ntp.org"})
    passwords = yaml.safe_load(cli.store.get_object(PLAN, PLAN_ENV))["passwords"]

    cli.run("plan", "update", PLAN, "--templates", str(dirs["b"]), crash=point)
    _settled(cli.store, PLAN)
    if point == "upload:0.5" and isinstance(cli.store, LocalStore):
        stored = {p: cli.store.get_object(PLAN, p) for p in trees["b"]
                  if p in set(cli.store.list_objects(PLAN))}
        mixed = {p for p, d in stored.items() if d == trees["b"][p].encode()
                 and trees["a"].get(p) != trees["b"][p]}
        assert mixed and len(mixed) < len(trees["b"])  # killed half-way: a mixed tree

    cli.client.plans.update(PLAN, dirs[rerun])
    _assert_complete(cli, trees[rerun], user)
    env = yaml.safe_load(cli.store.get_object(PLAN, PLAN_ENV))
    assert env["parameter_defaults"] == {"NtpServer": "pool.ntp.org"}
    assert {k: env["passwords"][k] for k in passwords} == passwords


def test_killed_create_of_tht_18_on_swift(swift_cli: Cli) -> None:
    cli = swift_cli
    tree = fetch_tree_dir("18.0.0")
    cli.run("plan", "create", PLAN, "--templates", str(tree), crash="upload:0.5")
    assert 0 < len(_settled(cli.store, PLAN)) < 1700  # hundreds of files left behind
    _assert_invisible(cli)
    cli.client.plans.create(PLAN, tree)
    shown = cli.client.plans.get(PLAN)
    assert shown["files"] > 1700
    assert shown["rendered_files"] >= 50
    assert shown["passwords"] > 10
    env = yaml.safe_load(cli.store.get_object(PLAN, PLAN_ENV))
    assert {"path": "overcloud-resource-registry-puppet.yaml"} in env["environments"]
