"""Plan integrity on every store: refused trees change nothing, updates keep the
environments that point to rendered files, undo records hold no secret."""

from __future__ import annotations

import base64
import contextlib
import io
import re
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml
from taskflow import task
from taskflow.patterns import linear_flow

from tests.engine_helpers import ActionTask
from tests.engine_helpers import run_linear as run_flow
from tests.fixtures_plans import snapshot
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import exceptions
from tripleo_flow.actions.plan_update import UpdatePlan
from tripleo_flow.client import Client
from tripleo_flow.plans.plan import CREATING, PLAN_ENV, Journal, PlanRepository

pytestmark = pytest.mark.functional

REGISTRY = "overcloud-resource-registry-puppet.yaml"


def _tarball(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def _env(client: Client, plan: str = "overcloud") -> dict:
    return yaml.safe_load(client._session.store.get_object(plan, PLAN_ENV))


def test_update_with_a_file_and_a_directory_of_one_name_is_refused(
        client: Client, templates: Path, tmp_path: Path) -> None:
    client.plans.create("overcloud", templates)
    client._session.store.put_object("overcloud", "user/mine.yaml", b"a: 1\n")
    before = snapshot(client._session.store, "overcloud")
    members = [(name, text.encode()) for name, text in basic_tree().items()]
    members += [("zz/b.yaml", b"b: 1\n"), ("zz", b"c: 1\n")]
    archive = _tarball(tmp_path / "clash.tar.gz", members)
    with pytest.raises(exceptions.InvalidArchive, match="'zz'.*both a file and a directory"):
        client.plans.update("overcloud", archive)
    assert snapshot(client._session.store, "overcloud") == before


def test_update_refuses_a_template_where_a_user_file_is_a_directory(
        client: Client, templates: Path, tmp_path: Path) -> None:
    client.plans.create("overcloud", templates)
    client._session.store.put_object("overcloud", "user/mine.yaml", b"a: 1\n")
    before = snapshot(client._session.store, "overcloud")
    clash = write_tree(tmp_path / "new", basic_tree() | {"user": "a: 2\n"})
    with pytest.raises(exceptions.InvalidInput, match="'user'"):
        client.plans.update("overcloud", clash)
    assert snapshot(client._session.store, "overcloud") == before


def _rendered_registry_tree() -> dict[str, str]:
    tree = basic_tree()
    del tree[REGISTRY]
    tree["overcloud-resource-registry-puppet.j2.yaml"] = (
        "resource_registry:\n{% for role in roles %}"
        "  OS::TripleO::{{role.name}}: puppet/{{role.name.lower()}}-role.yaml\n{% endfor %}")
    return tree


def test_update_with_the_same_templates_keeps_the_rendered_registry_first(
        client: Client, tmp_path: Path) -> None:
    templates = write_tree(tmp_path / "t", _rendered_registry_tree())
    client.plans.create("overcloud", templates)
    client.capabilities.update("overcloud", {"environments/storage.yaml": True})
    client._session.store.put_object("overcloud", "user/mine.yaml", b"parameter_defaults: {}\n")
    env = _env(client)
    env["environments"].append({"path": "user/mine.yaml"})
    client._session.store.put_object("overcloud", PLAN_ENV, yaml.safe_dump(env).encode())
    expected = [REGISTRY, "environments/base.yaml", "environments/storage.yaml", "user/mine.yaml"]
    assert [e["path"] for e in _env(client)["environments"]] == expected

    result = client.plans.update("overcloud", templates)
    assert result["dropped_environments"] == []
    assert [e["path"] for e in _env(client)["environments"]] == expected
    assert REGISTRY in client._session.store.list_objects("overcloud")
    # Twice: nothing moves either.
    client.plans.update("overcloud", templates)
    assert [e["path"] for e in _env(client)["environments"]] == expected


def _database(client: Client) -> bytes:
    """The executions database: its raw files (WAL included) and every row as SQL
    (a long value spans pages in the raw file)."""
    data = b""
    for path in sorted(client.data_dir.glob("executions.sqlite*")):
        data += path.read_bytes()
    with contextlib.closing(sqlite3.connect(client.data_dir / "executions.sqlite")) as db:
        data += "\n".join(db.iterdump()).encode()
    return data


def _decoded_base64(data: bytes) -> bytes:
    """Every long base64 run of ``data``, decoded (a plan-environment hides there)."""
    out = b""
    for run in re.findall(rb"[A-Za-z0-9+/]{40,}={0,2}", data):
        try:
            out += base64.b64decode(run + b"=" * (-len(run) % 4))
        except ValueError:
            continue
    return out


def test_update_undo_record_names_a_version_and_holds_no_password(
        client: Client, templates: Path, tmp_path: Path) -> None:
    client.plans.create("overcloud", templates)
    client.parameters.set("overcloud", {"Keep": "me"})
    passwords = client.passwords.get("overcloud")
    secrets = [v for v in passwords.values() if isinstance(v, str) and len(v) >= 8]
    assert len(secrets) > 10
    new = write_tree(tmp_path / "new", basic_tree() | {"environments/new.yaml": "a: 1\n"})

    execution = client.executions.create("update_deployment_plan",
                                         {"plan": "overcloud", "templates": str(new)})
    assert execution.state == "SUCCESS", execution.error
    database = _database(client)
    assert b"environments/new.yaml" in database  # the record is there, in the clear
    leaked = database + _decoded_base64(database)
    assert [s for s in secrets if s.encode() in leaked] == []

    # A failure after the update: the revert puts the plan-environment back
    # from the stored version the record names.
    before = snapshot(client._session.store, "overcloud")

    class Boom(task.Task):  # type: ignore[misc]
        def execute(self) -> None:
            raise RuntimeError("boom")

    newer = write_tree(tmp_path / "newer", basic_tree() | {"environments/x.yaml": "a: 2\n"})
    flow = linear_flow.Flow("t").add(ActionTask(UpdatePlan(client._session.context)), Boom())
    with pytest.raises(RuntimeError, match="boom"):
        run_flow(flow, {"plan": "overcloud", "templates": str(newer)})
    assert snapshot(client._session.store, "overcloud") == before
    assert client.passwords.get("overcloud") == passwords


def test_a_live_create_is_not_taken_for_a_crashed_one(client: Client, templates: Path,
                                                      tmp_path: Path) -> None:
    """A create still running in another process (its lease held) is left alone; once
    that process is gone, its incomplete plan is removed by the next create."""
    repo = PlanRepository(client._session.store)
    client._session.store.create_container("overcloud", {"usage-tripleo": "plan",
                                                         CREATING: "other"})
    client._session.store.put_object("overcloud", "half.yaml", b"a: 1\n")
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\n"
         "from tripleo_flow.plans.lock import PlanLocks\n"
         f"locks = PlanLocks({client._session.locks.url!r})\n"
         "assert locks.take_lease('create-overcloud')\n"
         "print('held', flush=True)\n"
         "time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(exceptions.PlanBeingCreated, match="being created"):
            client.plans.create("overcloud", templates)
        assert client._session.store.list_objects("overcloud") == ["half.yaml"]
        assert client.plans.list() == [] and not repo.exists("overcloud")
    finally:
        holder.kill()
        holder.wait()
    client.plans.create("overcloud", templates)
    assert "half.yaml" not in client._session.store.list_objects("overcloud")
    assert client.plans.list()[0]["name"] == "overcloud"
    assert repo.creating("overcloud") is None and len(client.passwords.get("overcloud")) > 10


def test_deploy_refuses_a_plan_whose_update_did_not_finish(
        client: Client, templates: Path, tmp_path: Path) -> None:
    client.plans.create("overcloud", templates)
    repo = PlanRepository(client._session.store)
    repo.save_journal("overcloud", Journal(written={"overcloud.yaml"}))
    before = snapshot(client._session.store, "overcloud")
    with pytest.raises(exceptions.TripleoFlowError, match="update that has not finished"):
        client.deployments.create("overcloud", work_dir=tmp_path / "work")
    assert snapshot(client._session.store, "overcloud") == before
    assert client.deployments.status("overcloud")["deployment_status"] != "DEPLOYING"
    assert not (tmp_path / "work" / "heat-launcher").exists()


def test_a_plan_a_killed_update_left_is_flagged_and_every_other_change_refused(
        client: Client, templates: Path, tmp_path: Path) -> None:
    """Its tree is part old, part new: nothing but the update (run again) may change
    or read it whole; each refusal names the update to run, and changes nothing."""
    client.plans.create("overcloud", templates)
    assert client.plans.get("overcloud")["update_unfinished"] is False
    repo = PlanRepository(client._session.store)
    repo.save_journal("overcloud", Journal(written={"overcloud.yaml"}))
    assert client.plans.get("overcloud")["update_unfinished"] is True
    before = snapshot(client._session.store, "overcloud")
    env = tmp_path / "mine.yaml"
    env.write_text("parameter_defaults: {Mine: 1}\n")
    for change in (
            lambda: client.parameters.set("overcloud", {"NtpServer": "x"}),
            lambda: client.parameters.reset("overcloud"),
            lambda: client.environments.add("overcloud", [str(env)]),
            lambda: client.capabilities.update("overcloud",
                                               {"environments/storage.yaml": True}),
            lambda: client.plans.render("overcloud"),
            lambda: client.plans.export("overcloud", tmp_path / "x.tar.gz"),
            lambda: client.parameters.schema("overcloud")):
        with pytest.raises(exceptions.PlanUpdateUnfinished, match="plan update overcloud"):
            change()
    assert snapshot(client._session.store, "overcloud") == before
    assert not (tmp_path / "x.tar.gz").exists()
    client.plans.update("overcloud", templates)  # the repair
    assert client.plans.get("overcloud")["update_unfinished"] is False
    assert client.parameters.set("overcloud", {"NtpServer": "x"}) == ["NtpServer"]


def test_an_update_adds_its_environments_before_rendering_and_ends_unflagged(
        client: Client, templates: Path, tmp_path: Path) -> None:
    """Between its upload and its rendering the plan is flagged (its rendered files are
    the old templates'), yet the update's own next task (adding the user environments)
    goes ahead; a writer of another execution is refused there, and once rendered, the
    plan is no longer flagged."""
    client.plans.create("overcloud", templates)
    env = tmp_path / "mine.yaml"
    env.write_text("parameter_defaults:\n  NtpServer: ntp.example\n")
    roles = basic_tree()["roles_data.yaml"] + "- name: Storage\n  CountDefault: 1\n"
    new = write_tree(tmp_path / "new", basic_tree() | {"roles_data.yaml": roles})
    client.plans.update("overcloud", new, environments=[str(env)])
    shown = client.plans.get("overcloud")
    assert shown["update_unfinished"] is False
    assert "puppet/storage-role.yaml" in PlanRepository(client._session.store).manifest(
        "overcloud").rendered
    assert [e["path"] for e in client.environments.list("overcloud") if e.get("user")]
    # The state a kill in that window leaves: another execution's writer is refused.
    PlanRepository(client._session.store).mark_unrendered("overcloud", "another-execution")
    before = snapshot(client._session.store, "overcloud")
    with pytest.raises(exceptions.PlanUpdateUnfinished):
        client.parameters.set("overcloud", {"NtpServer": "evil.example"})
    assert snapshot(client._session.store, "overcloud") == before
    assert client.plans.get("overcloud")["update_unfinished"] is True
    client.plans.render("overcloud")  # rendering is what the update had left to do
    assert client.plans.get("overcloud")["update_unfinished"] is False
    client.parameters.set("overcloud", {"NtpServer": "pool.example"})
