"""deploy.check takes the rendered files a plan holds when its last render's record
says they are the render of its files, and renders again when anything that render
read or wrote changed: the stack request is the same either way."""

from __future__ import annotations

import shutil
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_plans import make_client
from tripleo_flow.actions import deploy_stack
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.core.plan import rendering
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.plan import PlanRepository

REGISTRY = ActionRegistry.load()
PLAN = "oc"
ROLE = "puppet/role.role.j2.yaml"


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    """The sample plan, its role template including ``note.txt`` (looked for in
    ``puppet/`` first, then at the root, where it is)."""
    monkeypatch.setattr(deploy_stack, "time", types.SimpleNamespace(
        time=lambda: 1_800_000_000.0))  # the same DeployIdentifier in every request
    templates = Path(shutil.copytree(sample_plan_dir(), tmp_path / "templates"))
    role = templates / ROLE
    role.write_text(role.read_text().replace(
        "Rendered from puppet/role.role.j2.yaml.",
        "Rendered from puppet/role.role.j2.yaml. {% include 'note.txt' %}", 1))
    (templates / "note.txt").write_text("A note.")
    c = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    c.plans.create(PLAN, templates)
    yield c
    c.close()


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item per render of a plan from now on."""
    counted: list[int] = []
    render = rendering.render_plan

    def counting(*args: Any, **kwargs: Any) -> dict[str, bytes]:
        counted.append(1)
        return render(*args, **kwargs)

    monkeypatch.setattr(rendering, "render_plan", counting)
    return counted


def _check(client: Client, tmp_path: Path) -> bytes:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    REGISTRY.get("deploy.check")(client._session.context).execute(plan=PLAN,
                                                                  work_dir=str(work))
    return (work / "stack-request.json").read_bytes()


def _fresh(client: Client, tmp_path: Path) -> bytes:
    """The request of a check that renders (the plan's record of its render removed)."""
    repo = PlanRepository(client._session.store)
    manifest = repo.manifest(PLAN)
    manifest.render = None
    repo.save_manifest(PLAN, manifest)
    return _check(client, tmp_path)


def _put(name: str, edit: Callable[[bytes], bytes]) -> Callable[[Client], None]:
    def change(client: Client) -> None:
        store = client._session.store
        old = store.get_object(PLAN, name) if name in store.list_objects(PLAN) else b""
        store.put_object(PLAN, name, edit(old))
    return change


def _limit(client: Client) -> None:
    client._session.conf.set_override("render_max_size", 1 << 20, group="limits")


def test_the_stored_render_is_taken_when_nothing_changed(client: Client, tmp_path: Path,
                                                         renders: list[int]) -> None:
    request = _check(client, tmp_path)
    assert renders == []
    assert b"A note." in request
    assert _fresh(client, tmp_path) == request
    assert renders == [1]


CHANGES = {
    "an included file": (_put("note.txt", lambda _: b"Another note."), b"Another note."),
    "a file where an include looked first": (
        _put("puppet/note.txt", lambda _: b"A nearer note."), b"A nearer note."),
    "roles_data": (_put("roles_data.yaml", lambda d: d.replace(
        b"name: Compute", b"name: Compute\n  description: Edited compute.", 1)), None),
    "a template": (_put(ROLE, lambda d: d.replace(b"servers.", b"servers, edited.", 1)),
                   b"servers, edited."),
    "a rendered file": (_put("puppet/controller-role.yaml",
                             lambda d: d + b"\n# Edited by hand.\n"), None),
    "a new template": (_put("extra.j2.yaml", lambda _: b"heat_template_version: wallaby\n"),
                       None),
    "render_max_size": (_limit, None),
}


@pytest.mark.parametrize("what", sorted(CHANGES))
def test_a_change_the_render_depends_on_renders_again(client: Client, tmp_path: Path,
                                                      renders: list[int], what: str) -> None:
    before = _check(client, tmp_path)
    assert renders == []
    change, seen = CHANGES[what]
    change(client)
    request = _check(client, tmp_path)
    assert renders == [1]
    assert b"Edited by hand." not in request
    if seen is not None:
        assert seen in request and seen not in before
    assert _fresh(client, tmp_path) == request


def test_a_render_that_reads_what_it_writes_is_not_recorded(tmp_path: Path,
                                                            renders: list[int]) -> None:
    """``a.j2.yaml`` includes ``b.yaml``, which ``b.j2.yaml`` renders: the create
    rendered ``a.yaml`` before ``b.yaml`` was written, so a check's render differs from
    it (no record); rendered again, the plan's files render as they are (a record)."""
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "roles_data.yaml").write_text("- name: Controller\n")
    (templates / "overcloud.yaml").write_text("heat_template_version: wallaby\n")
    (templates / "a.j2.yaml").write_text(
        "heat_template_version: wallaby\ndescription: >\n  {% include 'b.yaml' ignore missing %}"
        " end\n")
    (templates / "b.j2.yaml").write_text("rendered")
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    try:
        client.plans.create(PLAN, templates)
        store, repo = client._session.store, PlanRepository(client._session.store)
        assert b"rendered" not in store.get_object(PLAN, "a.yaml")
        assert repo.manifest(PLAN).render is None
        renders.clear()
        _check(client, tmp_path)
        assert renders == [1]
        REGISTRY.get("templates.process")(client._session.context).execute(plan=PLAN)
        assert b"rendered" in store.get_object(PLAN, "a.yaml")
        renders.clear()
        _check(client, tmp_path)
        assert renders == []
    finally:
        client.close()
