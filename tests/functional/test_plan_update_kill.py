"""``kill -9`` of ``tripleo-flow plan update`` (the CLI process) at instrumented points
and at moments taken from outside, on both plan stores (real Swift): what is left is
the old tree or the new one, each file hashed, with its j2 templates' rendered files
(rendered again by the test); a tree left part old, part new, or new with the old
tree's rendered files (killed after the upload, before rendering ended), is
flagged (``show_plan``) and every other change or read of it (parameters set, plan
export) is refused with exit 4, changing nothing; a retry of the update or
``execution resume`` of the killed one ends with exactly the new tree (issue 29).
"""

from __future__ import annotations

import hashlib
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures_plans import snapshot
from tests.functional.test_plan_crash import (
    PLAN,
    Cli,
    _assert_complete,
    _cli,
    _settled,
    _tree,
)
from tests.plan_trees import write_tree
from tripleo_flow.core import rendering
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.plan import JOURNAL, PLAN_ENV, RESERVED_PREFIX, PlanRepository
from tripleo_flow.plans.store import PlanStore

pytestmark = pytest.mark.functional

#: Generated environments per tree (each ~2 KB): an upload long enough to be cut.
COUNT = 600
USER = {"user/mine.yaml": b"parameter_defaults: {Mine: 1}\n"}


@pytest.fixture
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cli]:
    yield from _cli(request, tmp_path, request.param)


@pytest.fixture
def local_cli(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cli]:
    yield from _cli(request, tmp_path, "local")


def _state(store: PlanStore, trees: dict[str, dict[str, str]]) -> str:
    """"a" or "b" when the plan's template files are exactly that tree (by SHA-256,
    no file of the other tree left), else "mixed"."""
    names = set(store.list_objects(PLAN))
    stored = {n: hashlib.sha256(store.get_object(PLAN, n)).hexdigest()
              for n in names if any(n in tree for tree in trees.values())}
    for key, tree in trees.items():
        if stored == {p: hashlib.sha256(d.encode()).hexdigest() for p, d in tree.items()}:
            return key
    return "mixed"


def _setup(cli: Cli, tmp_path: Path) -> tuple[dict[str, dict[str, str]], dict[str, Path]]:
    trees = {"a": _tree("a", COUNT), "b": _tree("b", COUNT)}
    dirs = {k: write_tree(tmp_path / k, t) for k, t in trees.items()}
    cli.client.create_plan(PLAN, dirs["a"])
    for name, data in USER.items():
        cli.store.put_object(PLAN, name, data)
    cli.client.set_parameters(PLAN, {"NtpServer": "pool.ntp.org"})
    return trees, dirs


def _kill_after_journal(cli: Cli, templates: Path, delay: float) -> None:
    """Start the CLI update and SIGKILL it ``delay`` s after its journal appears."""
    proc = cli.popen("plan", "update", PLAN, "--templates", str(templates))
    deadline = time.monotonic() + 120
    while JOURNAL not in cli.store.list_objects(PLAN):
        assert proc.poll() is None, f"the update ended first: {proc.communicate()}"
        assert time.monotonic() < deadline, "the update never wrote its journal"
        time.sleep(0.01)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()


def _rendered_current(store: PlanStore) -> bool:
    """Whether the plan's rendered files are exactly its templates' rendering now
    (every output there with that content, none of the manifest's others left)."""
    repo = PlanRepository(store)
    files = {n: store.get_object(PLAN, n) for n in store.list_objects(PLAN)
             if not n.startswith(RESERVED_PREFIX)}
    wanted = rendering.render_plan(files)
    listed = set(repo.manifest(PLAN).rendered)
    return (all(files.get(p) == d for p, d in wanted.items())
            and listed == set(wanted) and "puppet/controller-role.yaml" in wanted)


def _check_left(cli: Cli, trees: dict[str, dict[str, str]]) -> str:
    """The old tree or the new one with its rendered files, or a flagged tree (mixed,
    or not rendered yet) that refuses changes."""
    _settled(cli.store, PLAN)
    state = _state(cli.store, trees)
    unfinished = cli.client.show_plan(PLAN)["update_unfinished"]
    if JOURNAL in cli.store.list_objects(PLAN):
        assert unfinished, "a journal is left, yet the plan is not flagged"
    if not unfinished:
        assert state in ("a", "b"), "not flagged, yet the tree is part old, part new"
        assert _rendered_current(cli.store), (
            "not flagged, yet the rendered files are not the templates' rendering")
        return state
    before = snapshot(cli.store, PLAN)
    for args in (("parameters", "set", "--plan", PLAN, "NtpServer=evil.example.org"),
                 ("plan", "export", PLAN, "--output", str(cli.home / "x.tar.gz"))):
        proc = cli.run(*args, check=False)
        assert proc.returncode == 4, (args, proc.returncode, proc.stderr)
        assert "has a template update that has not finished" in proc.stderr, proc.stderr
        assert f"plan update {PLAN} --templates DIR" in proc.stderr
    assert snapshot(cli.store, PLAN) == before
    assert not (cli.home / "x.tar.gz").exists()
    return state


def _interrupted_update(cli: Cli) -> str:
    listed = json.loads(cli.run("execution", "list", "-f", "json").stdout)
    [killed] = [e for e in listed if "update" in e["Workflow"] and e["State"] == "INTERRUPTED"]
    return str(killed["ID"])


def _repair(cli: Cli, how: str, templates: Path) -> None:
    if how == "retry":
        cli.run("plan", "update", PLAN, "--templates", str(templates))
    else:
        shown = json.loads(cli.run("execution", "resume", _interrupted_update(cli),
                                   "-f", "json").stdout)
        assert shown["State"] == "SUCCESS", shown


#: Every kill point on the local store (after the upload, before the rendering ended:
#: plan.update:done and templates.process:written); on Swift (~70 s a case, 600
#: objects each way) the one that cuts the upload itself and is repaired by resuming
#: the execution.
@pytest.mark.parametrize("cli, point, how", [
    ("local", "upload:0.5", "retry"), ("local", "upload:0.5", "resume"),
    ("local", "plan.update:uploaded", "retry"), ("local", "plan.update:done", "retry"),
    ("local", "plan.update:done", "resume"), ("local", "templates.process:written", "resume"),
    ("swift", "upload:0.5", "resume"),
], indirect=["cli"])
def test_update_killed_at_a_crash_point(cli: Cli, tmp_path: Path, point: str,
                                        how: str) -> None:
    trees, dirs = _setup(cli, tmp_path)
    cli.run("plan", "update", PLAN, "--templates", str(dirs["b"]), crash=point)
    state = _check_left(cli, trees)
    if point == "upload:0.5" and not isinstance(cli.store, LocalStore):
        assert state in ("a", "mixed")  # Swift may not have stored any of the batch
    elif point.startswith("upload:") or point == "plan.update:uploaded":
        assert state == "mixed"
    else:  # the new tree, not (wholly) rendered yet: flagged
        assert state == "b"
        assert cli.client.show_plan(PLAN)["update_unfinished"]
    _repair(cli, how, dirs["b"])
    _assert_complete(cli, trees["b"], USER)
    env = cli.store.get_object(PLAN, PLAN_ENV)
    assert b"NtpServer: pool.ntp.org" in env


@pytest.mark.parametrize("delay", [0.0, 0.2, 1.0])
def test_update_killed_from_outside(local_cli: Cli, tmp_path: Path, delay: float) -> None:
    cli = local_cli
    trees, dirs = _setup(cli, tmp_path)
    _kill_after_journal(cli, dirs["b"], delay)
    _check_left(cli, trees)
    _repair(cli, "retry" if delay else "resume", dirs["b"])
    _assert_complete(cli, trees["b"], USER)
