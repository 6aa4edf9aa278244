"""Plan management through the Python API, on every plan store (local and real Swift).

Each failure case checks the plan is left exactly as it was (or absent)."""

from __future__ import annotations

import io
import tarfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fixtures_plans import make_client, snapshot
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.plan import PLAN_ENV, PlanRepository


def _env(client: Client, plan: str) -> dict:
    return yaml.safe_load(client._session.store.get_object(plan, PLAN_ENV))


def _tarball(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return path


def test_create_renders_and_generates_passwords(client: Client, templates: Path) -> None:
    summary = client.plans.create("overcloud", templates, description="test plan")
    assert summary["name"] == "overcloud"
    assert summary["files"] == len(basic_tree()) + 1  # + the default plan-environment
    names = set(client._session.store.list_objects("overcloud"))
    assert {"overcloud.yaml", "puppet/controller-role.yaml", "puppet/compute-role.yaml",
            "network/internal_api.yaml", "network/storage.yaml"} <= names
    env = _env(client, "overcloud")
    assert env["name"] == "overcloud"
    assert env["description"] == "test plan"
    assert {"path": "overcloud-resource-registry-puppet.yaml"} in env["environments"]
    assert len(env["passwords"]["AdminPassword"]) == 25
    assert [p["name"] for p in client.plans.list()] == ["overcloud"]
    assert client.plans.get("overcloud")["rendered_files"] == summary["rendered"]


def test_create_from_tarball_with_top_directory(client: Client, tmp_path: Path) -> None:
    files = [(f"tht-1.0/{n}", t.encode()) for n, t in basic_tree().items()]
    archive = _tarball(tmp_path / "plan.tar.gz", files)
    client.plans.create("from-tar", archive)
    assert "roles_data.yaml" in client._session.store.list_objects("from-tar")


@pytest.mark.parametrize("member, reason", [
    (("../escape.yaml", b"a: 1\n"), "outside the archive"),
    (("/etc/abs.yaml", b"a: 1\n"), "absolute path"),
    ("symlink", "is a link"),
    ("device", "device or FIFO"),
])
def test_unsafe_archive_is_refused_and_creates_nothing(
        client: Client, tmp_path: Path, member: object, reason: str) -> None:
    if member == "symlink":
        info = tarfile.TarInfo("link.yaml")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        member = info
    elif member == "device":
        info = tarfile.TarInfo("dev")
        info.type = tarfile.CHRTYPE
        member = info
    archive = _tarball(tmp_path / "bad.tar.gz", [("roles_data.yaml", b"[]\n"), member])  # type: ignore[list-item]
    with pytest.raises(exceptions.InvalidArchive, match=reason):
        client.plans.create("bad", archive)
    assert not client._session.store.container_exists("bad")


def test_malformed_yaml_names_the_file_and_creates_nothing(client: Client, tmp_path: Path) -> None:
    files = basic_tree() | {"environments/broken.yaml": "a: [1, 2\n"}
    with pytest.raises(exceptions.InvalidTemplate, match="environments/broken.yaml.*line"):
        client.plans.create("broken", write_tree(tmp_path / "t", files))
    assert not client._session.store.container_exists("broken")


def test_render_failure_reverts_the_create(client: Client, tmp_path: Path) -> None:
    files = basic_tree() | {"bad.j2.yaml": "{% for x in %}\n"}
    with pytest.raises(exceptions.InvalidTemplate, match="bad.j2.yaml"):
        client.plans.create("halfway", write_tree(tmp_path / "t", files))
    assert not client._session.store.container_exists("halfway")
    assert client.plans.list() == []


def test_duplicate_roles_refused(client: Client, tmp_path: Path) -> None:
    files = basic_tree() | {"roles_data.yaml": "- name: A\n  tags: [primary]\n- name: A\n"}
    with pytest.raises(exceptions.InvalidRoles, match="A"):
        client.plans.create("dup", write_tree(tmp_path / "t", files))
    assert not client._session.store.container_exists("dup")


@pytest.mark.parametrize("name", ["bad_name", "has space", "", "dot.name", "../x"])
def test_invalid_plan_names(client: Client, templates: Path, name: str) -> None:
    with pytest.raises(exceptions.InvalidPlanName):
        client.plans.create(name, templates)


def test_existing_plan_is_refused_and_unchanged(client: Client, templates: Path) -> None:
    client.plans.create("overcloud", templates)
    before = snapshot(client._session.store, "overcloud")
    with pytest.raises(exceptions.PlanExists, match="plan update"):
        client.plans.create("overcloud", templates)
    assert snapshot(client._session.store, "overcloud") == before


def test_update_keeps_user_values_and_files(client: Client, templates: Path,
                                            tmp_path: Path) -> None:
    client.plans.create("overcloud", templates)
    client.parameters.set("overcloud", {"NtpServer": ["pool.ntp.org"], "ComputeCount": 5})
    client.capabilities.update("overcloud", {"environments/storage.yaml": True})
    client._session.store.put_object("overcloud", "user-environments/mine.yaml",
                                     b"parameter_defaults: {}\n")
    passwords = client.passwords.get("overcloud")

    new = basic_tree()
    del new["environments/other.yaml"]
    new["environments/new.yaml"] = "parameter_defaults: {New: 1}\n"
    new["roles_data.yaml"] += "- name: Storage\n  CountDefault: 1\n"
    result = client.plans.update("overcloud", write_tree(tmp_path / "new", new))

    names = set(client._session.store.list_objects("overcloud"))
    assert "environments/other.yaml" not in names
    assert "environments/new.yaml" in names
    assert "user-environments/mine.yaml" in names
    assert "puppet/storage-role.yaml" in names  # rendered for the new role
    env = _env(client, "overcloud")
    assert env["parameter_defaults"] == {"NtpServer": ["pool.ntp.org"], "ComputeCount": 5}
    assert env["passwords"] == passwords
    assert {"path": "environments/storage.yaml"} in env["environments"]
    assert result["dropped_environments"] == []


@pytest.mark.parametrize("bad_file, content, error", [
    ("environments/base.yaml", "a: [\n", exceptions.InvalidTemplate),
    ("bad.j2.yaml", "{% if %}\n", exceptions.InvalidTemplate),
    ("roles_data.yaml", "- name: A\n- name: A\n", exceptions.InvalidRoles),
])
def test_failed_update_leaves_plan_exactly_as_it_was(
        client: Client, templates: Path, tmp_path: Path,
        bad_file: str, content: str, error: type[Exception]) -> None:
    client.plans.create("overcloud", templates)
    client.parameters.set("overcloud", {"Foo": "bar"})
    before = snapshot(client._session.store, "overcloud")
    new = basic_tree() | {bad_file: content, "environments/added.yaml": "a: 1\n"}
    del new["environments/other.yaml"]
    with pytest.raises(error):
        client.plans.update("overcloud", write_tree(tmp_path / "new", new))
    assert snapshot(client._session.store, "overcloud") == before


def test_parameters_set_show_reset(client: Client, templates: Path) -> None:
    client.plans.create("overcloud", templates)
    assert client.parameters.set("overcloud", {"A": 1, "B": [1, 2]}) == ["A", "B"]
    assert client.parameters.get("overcloud") == {"A": 1, "B": [1, 2]}
    assert client.parameters.reset("overcloud", ["A"]) == ["A"]
    assert client.parameters.get("overcloud") == {"B": [1, 2]}
    with pytest.raises(exceptions.InvalidParameter, match="Missing"):
        client.parameters.reset("overcloud", ["Missing"])
    assert client.parameters.reset("overcloud") == ["B"]
    assert client.parameters.get("overcloud") == {}


def test_parameter_change_reverts_when_a_later_task_fails(client: Client, templates: Path) -> None:
    from taskflow import task
    from taskflow.patterns import linear_flow

    from tests.engine_helpers import ActionTask
    from tests.engine_helpers import run_linear as run_flow
    from tripleo_flow.actions.parameters import UpdateParameters

    class Boom(task.Task):  # type: ignore[misc]
        def execute(self) -> None:
            raise RuntimeError("boom")

    client.plans.create("overcloud", templates)
    client.parameters.set("overcloud", {"Keep": 1, "Change": "old"})
    before = snapshot(client._session.store, "overcloud")[PLAN_ENV]
    flow = linear_flow.Flow("t").add(ActionTask(UpdateParameters(client._session.context)), Boom())
    with pytest.raises(RuntimeError, match="boom"):
        run_flow(flow, {"plan": "overcloud", "parameters": {"Change": "new", "Added": 2},
                        "key": "parameter_defaults"})
    assert yaml.safe_load(client._session.store.get_object("overcloud",
                                                           PLAN_ENV)) == yaml.safe_load(before)


@pytest.mark.parametrize("lock_service", ["file", "redis", "mysql"])
def test_concurrent_writers_lose_no_update(client: Client, templates: Path, tmp_path: Path,
                                           lock_service: str,
                                           request: pytest.FixtureRequest) -> None:
    """Writers with lock clients of their own (as separate hosts would have) lose nothing.

    ``file`` is tooz's file driver (one host); ``redis`` a real Redis and ``mysql`` a
    real MariaDB (``GET_LOCK``) shared by hosts.
    """
    fixtures = {"redis": "redis_url", "mysql": "mysql_lock_url"}
    lock_url = (request.getfixturevalue(fixtures[lock_service])
                if lock_service in fixtures else None)
    client.plans.create("overcloud", templates)
    errors: list[BaseException] = []

    def writer(i: int) -> None:
        own = make_client(tmp_path, client._session.store, lock_url=lock_url)
        try:
            for j in range(5):
                own.parameters.set("overcloud", {f"P{i}_{j}": j})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            own.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(client.parameters.get("overcloud")) == 25


def test_history_and_restore(client: Client, templates: Path) -> None:
    client.plans.create("overcloud", templates)
    client.parameters.set("overcloud", {"A": 1})
    client.parameters.set("overcloud", {"A": 2})
    history = client.plans.history("overcloud")
    assert history[0]["current"] is True
    assert len(history) >= 3
    # Find the version that had A == 1 and roll back to it.
    target = next(v["version"] for v in history[1:]
                  if yaml.safe_load(client._session.store.get_object(
                      "overcloud", PLAN_ENV, version_id=v["version"]))
                  .get("parameter_defaults") == {"A": 1})
    client.plans.restore("overcloud", target)
    assert client.parameters.get("overcloud") == {"A": 1}
    with pytest.raises(exceptions.VersionNotFound):
        client.plans.restore("overcloud", "no-such-version")


def test_export_then_create_from_export(client: Client, templates: Path, tmp_path: Path) -> None:
    client.plans.create("overcloud", templates)
    client.parameters.set("overcloud", {"A": 1})
    archive = client.plans.export("overcloud", tmp_path / "export.tar.gz")
    with pytest.raises(exceptions.InvalidInput, match="already exists"):
        client.plans.export("overcloud", archive)
    client.plans.create("copy", archive)
    original = PlanRepository(client._session.store).read_all("overcloud")
    copy = PlanRepository(client._session.store).read_all("copy")
    assert set(copy) == set(original)
    assert _env(client, "copy")["parameter_defaults"] == {"A": 1}


def test_delete_refused_while_deployment_recorded(client: Client, templates: Path) -> None:
    client.plans.create("overcloud", templates)
    PlanRepository(client._session.store).set_deployment_status(
        "overcloud", {"deployment_status": "DEPLOYING"})
    with pytest.raises(exceptions.PlanBusy, match="DEPLOYING.*--force"):
        client.plans.delete("overcloud")
    assert client._session.store.container_exists("overcloud")
    client.plans.delete("overcloud", force=True)
    assert not client._session.store.container_exists("overcloud")
    assert not client._session.store.container_exists("overcloud-messages")
    with pytest.raises(exceptions.PlanNotFound, match="plan create overcloud"):
        client.plans.delete("overcloud")


def test_capabilities(client: Client, templates: Path) -> None:
    client.plans.create("overcloud", templates)
    caps = client.capabilities.get("overcloud")
    titles = list(caps)
    assert "Basic" in titles and "Other" in titles
    envs = client.capabilities.update("overcloud", {"environments/storage.yaml": True})
    paths = [e["path"] for e in envs]
    assert paths.index("environments/base.yaml") < paths.index("environments/storage.yaml")
    before = snapshot(client._session.store, "overcloud")
    with pytest.raises(exceptions.UnknownEnvironment, match="environments/nope.yaml"):
        client.capabilities.update("overcloud", {"environments/nope.yaml": True})
    assert snapshot(client._session.store, "overcloud") == before
    envs = client.capabilities.update("overcloud", {"environments/other.yaml": True}, purge=True)
    assert [e["path"] for e in envs] == ["environments/other.yaml"]


def test_roles_and_networks(client: Client, templates: Path) -> None:
    client.plans.create("overcloud", templates)
    assert client.roles.list("overcloud") == ["Controller", "Compute"]
    client.roles.set("overcloud", [{"name": "Controller", "tags": ["primary", "controller"]},
                                   {"name": "Edge"}])
    names = set(client._session.store.list_objects("overcloud"))
    assert "puppet/edge-role.yaml" in names
    assert "puppet/compute-role.yaml" not in names  # stale rendering removed
    before = snapshot(client._session.store, "overcloud")
    with pytest.raises(exceptions.InvalidRoles):
        client.roles.set("overcloud", [{"name": "X", "tags": ["primary"]}, {"name": "X"}])
    with pytest.raises(exceptions.InvalidNetworks):
        client.networks.set("overcloud", [{"name": "N", "ip_subnet": "not-a-subnet"}])
    assert snapshot(client._session.store, "overcloud") == before
    assert client.networks.list("overcloud") == ["InternalApi", "Storage"]


def test_passwords_rotate(client: Client, templates: Path) -> None:
    client.plans.create("overcloud", templates)
    before = client.passwords.get("overcloud")
    assert client.passwords.rotate("overcloud", rotate=["AdminPassword"]) == ["AdminPassword"]
    after = client.passwords.get("overcloud")
    assert after["AdminPassword"] != before["AdminPassword"]
    assert {k: v for k, v in after.items() if k != "AdminPassword"} == {
        k: v for k, v in before.items() if k != "AdminPassword"}
    # A name both to rotate and not to rotate is refused, and nothing changes.
    with pytest.raises(exceptions.InvalidParameter, match="NovaPassword"):
        client.passwords.rotate("overcloud", rotate=["NovaPassword"],
                                do_not_rotate=["NovaPassword"])
    assert client.passwords.get("overcloud") == after
    # Rotating everything keeps the default do-not-rotate names (cluster identity).
    rotated = client.passwords.rotate("overcloud")
    assert "CephClusterFSID" not in rotated and "AdminPassword" in rotated
    assert client.passwords.get("overcloud")["CephClusterFSID"] == before["CephClusterFSID"]


def test_rotation_reverts_from_the_stored_version_and_persists_no_secret(
        client: Client, templates: Path, tmp_path: Path) -> None:
    from taskflow import task
    from taskflow.patterns import linear_flow

    from tests.engine_helpers import ActionTask
    from tests.engine_helpers import run_linear as run_flow
    from tripleo_flow.actions.passwords import RotatePasswords

    class Boom(task.Task):  # type: ignore[misc]
        def execute(self) -> None:
            raise RuntimeError("boom")

    client.plans.create("overcloud", templates)
    client.parameters.set("overcloud", {"Keep": 1})   # a writer's change before the rotation
    before = client.passwords.get("overcloud")
    flow = linear_flow.Flow("t").add(ActionTask(RotatePasswords(client._session.context)), Boom())
    with pytest.raises(RuntimeError, match="boom"):
        run_flow(flow, {"plan": "overcloud", "rotate": None, "do_not_rotate": None})
    assert client.passwords.get("overcloud") == before
    assert client.parameters.get("overcloud") == {"Keep": 1}

    # Through a persisted workflow: the executions database never sees a password.
    execution = client.executions.create("rotate_passwords", {"plan": "overcloud"})
    assert execution.state == "SUCCESS"
    after = client.passwords.get("overcloud")
    changed = [k for k in before if after[k] != before[k]]
    assert "AdminPassword" in changed
    database = (tmp_path / "data" / "executions.sqlite").read_bytes()
    for wal in (tmp_path / "data").glob("executions.sqlite-*"):
        database += wal.read_bytes()
    assert b"AdminPassword" in database   # the names of what changed are kept
    secrets = [before[k] for k in changed if isinstance(before[k], str) and len(before[k]) >= 8]
    assert len(secrets) > 10
    assert not [v for v in secrets if v.encode() in database]


def test_secret_parameter_and_restore_revert_from_stored_versions(
        client: Client, templates: Path) -> None:
    """Undo records of parameter edits and restores name a plan-environment version:
    a revert reads the old secret from there, and no undo record holds it."""
    import json

    from taskflow import task
    from taskflow.patterns import linear_flow

    from tests.engine_helpers import ActionTask
    from tests.engine_helpers import run_linear as run_flow
    from tripleo_flow.actions.base import Action
    from tripleo_flow.actions.parameters import ResetParameters, UpdateParameters
    from tripleo_flow.actions.plan_versions import RestorePlan

    undo: list[Any] = []

    class Boom(task.Task):  # type: ignore[misc]
        def execute(self) -> None:
            raise RuntimeError("boom")

    class Keep(task.Task):  # type: ignore[misc]
        def execute(self, record: Any) -> None:
            undo.append(record)

    def fails(action: Action, inputs: dict[str, Any]) -> None:
        flow = linear_flow.Flow("t").add(ActionTask(action, provides="record"), Keep(),
                                         Boom())
        with pytest.raises(RuntimeError, match="boom"):
            run_flow(flow, {"plan": "overcloud", **inputs})

    client.plans.create("overcloud", templates)
    client.parameters.set("overcloud", {"DbSecret": "old-secret-0a1b2c", "Count": 1})
    before = _env(client, "overcloud")

    fails(UpdateParameters(client._session.context),
          {"parameters": {"DbSecret": "new-secret-3d4e5f", "Count": 2}})
    fails(ResetParameters(client._session.context), {"names": ["DbSecret"]})
    client.parameters.set("overcloud", {"DbSecret": "new-secret-3d4e5f"})
    # The id of the version that held the old secret (on the local store the newest
    # is named 'current', which now holds the new one: restoring it changes nothing).
    store = client._session.context.store
    with_old = next(v["version"] for v in client.plans.history("overcloud")
                    if not v["current"] and b"old-secret-0a1b2c" in store.get_object(
                        "overcloud", "plan-environment.yaml", version_id=v["version"]))
    fails(RestorePlan(client._session.context), {"version": with_old})
    assert _env(client, "overcloud")["parameter_defaults"]["DbSecret"] == "new-secret-3d4e5f"
    client.parameters.set("overcloud", {"DbSecret": "old-secret-0a1b2c"})
    assert _env(client, "overcloud")["parameter_defaults"] == before["parameter_defaults"]

    assert len(undo) == 3
    assert undo[0]["previous"] == {"Count": 1} and undo[0]["sealed"] == ["DbSecret"]
    assert undo[1]["sealed"] == ["DbSecret"] and undo[2]["previous_version"]
    assert "secret-" not in json.dumps(undo)


def test_missing_plan_errors(client: Client) -> None:
    for call in (lambda: client.plans.get("ghost"), lambda: client.parameters.get("ghost"),
                 lambda: client.parameters.set("ghost", {"A": 1}),
                 lambda: client.capabilities.get("ghost"), lambda: client.roles.list("ghost")):
        with pytest.raises(exceptions.PlanNotFound, match="'ghost' does not exist"):
            call()



class _CountingStore(LocalStore):
    """A LocalStore that records which objects are read one by one and which at once."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.singles: list[str] = []
        self.batched: set[str] = set()
        self._in_batch = False

    def get_object(self, container: str, name: str, version_id: str | None = None) -> bytes:
        if not self._in_batch:
            self.singles.append(name)
        return super().get_object(container, name, version_id)

    def get_objects(self, container: str, names: Iterable[str]) -> dict[str, bytes]:
        names = list(names)
        self.batched.update(names)
        self._in_batch = True
        try:
            return super().get_objects(container, names)
        finally:
            self._in_batch = False


def test_render_reads_its_templates_at_once(templates: Path, tmp_path: Path) -> None:
    """One request per template, one after the other, is what made a render on Swift
    wait: the templates and data files are read in one batch (parallel on Swift)."""
    store = _CountingStore(tmp_path / "plans")
    counted = make_client(tmp_path, store)
    try:
        counted.plans.create("overcloud", templates)
        store.singles.clear()
        store.batched.clear()
        counted.plans.render("overcloud")
    finally:
        counted.close()
    read = {n for n in store.list_objects("overcloud")
            if n.endswith(".j2.yaml") or n in ("roles_data.yaml", "network_data.yaml")}
    assert read and read <= store.batched
    assert not read & set(store.singles)
