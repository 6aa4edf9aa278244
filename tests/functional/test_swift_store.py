"""Swift-only behaviour of SwiftStore and of the test Swift server itself."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.fixtures_plans import make_client
from tests.plan_trees import basic_tree, write_tree
from tests.swift_server import SwiftNotInstalled, SwiftServer, find_bin_dir
from tripleo_flow import exceptions
from tripleo_flow.plans.plan import PlanRepository
from tripleo_flow.plans.swift import SwiftStore

pytestmark = pytest.mark.functional

# Over the container's quota (set below): Swift refuses it, the store's checks accept it.
_OVER_QUOTA = "too/large.bin"


@pytest.mark.parametrize("method", ["put_objects", "put_objects_single"])
def test_failed_upload_names_the_failing_object(swift_store: SwiftStore, method: str) -> None:
    swift_store.create_container("overcloud", {"quota-bytes": "1000"})
    objects = {f"ok/{i}.yaml": b"x" for i in range(20)}
    objects[_OVER_QUOTA] = b"r" * 2000
    with pytest.raises(exceptions.PlanStoreError) as info:
        getattr(swift_store, method)("overcloud", objects)
    message = str(info.value)
    assert "Could not upload 1 object(s) in container 'overcloud'" in message
    assert _OVER_QUOTA[:50] in message
    assert swift_store.list_objects("overcloud") == sorted(n for n in objects if n != _OVER_QUOTA)


def test_put_objects_does_not_create_a_missing_container(swift_store: SwiftStore) -> None:
    with pytest.raises(exceptions.ContainerNotFound):
        swift_store.put_objects("absent", {"a/b.yaml": b"x"})
    assert not swift_store.container_exists("absent")


def test_store_is_usable_from_many_threads(swift_store: SwiftStore) -> None:
    swift_store.create_container("overcloud")
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            for j in range(10):
                name = f"t{index}/{j}"
                swift_store.put_object("overcloud", name, name.encode())
                assert swift_store.get_object("overcloud", name) == name.encode()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(swift_store.list_objects("overcloud")) == 60


def test_delete_large_versioned_container(swift_store: SwiftStore) -> None:
    swift_store.create_container("overcloud", versioned=True)
    objects = {f"templates/{i}.yaml": b"v1" for i in range(30)}
    swift_store.put_objects("overcloud", objects)
    swift_store.put_objects("overcloud", {name: b"v2" for name in list(objects)[:15]})
    swift_store.delete_objects("overcloud", list(objects)[25:])
    assert len(swift_store.list_versions("overcloud", "templates/0.yaml")) == 2
    swift_store.delete_container("overcloud")
    assert swift_store.list_containers() == []


def test_wrong_key_is_reported(swift_server: SwiftServer) -> None:
    store = SwiftStore(swift_server.auth_url, swift_server.user, "wrong-key", retries=0)
    with pytest.raises(exceptions.PlanStoreError) as info:
        store.list_containers()
    assert "wrong-key" not in str(info.value)
    assert "[swift]" in str(info.value)


def test_unreachable_swift_is_reported() -> None:
    store = SwiftStore("http://127.0.0.1:9/auth/v1.0", "test:tester", "testing", retries=0)
    with pytest.raises(exceptions.PlanStoreError, match="Check that Swift is running"):
        store.container_exists("overcloud")


def test_server_stops_every_process(tmp_path: Path) -> None:
    server = SwiftServer(tmp_path / "swift")
    server.start()
    pids = server.pids
    assert len(pids) == 4
    store = SwiftStore(server.auth_url, server.user, server.key)
    store.create_container("probe")
    assert store.container_exists("probe")
    store.close()
    server.stop()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_missing_binaries_say_how_to_install(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.setenv("TRIPLEO_FLOW_SWIFT_BIN", str(tmp_path))
    with pytest.raises(SwiftNotInstalled, match="pip install swift==2.38.3"):
        find_bin_dir()
    with pytest.raises(SwiftNotInstalled, match="TRIPLEO_FLOW_SWIFT_BIN"):
        SwiftServer(tmp_path / "state").start()
    assert not (tmp_path / "state").exists()


@pytest.fixture
def asked(swift_store: SwiftStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The operation of every request the store makes meanwhile (the real requests)."""
    seen: list[str] = []
    real = swift_store.session.call

    def spy(what: str, *args: object, **kwargs: object) -> object:
        seen.append(what)
        return real(what, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(swift_store.session, "call", spy)
    return seen


@pytest.mark.parametrize("method", ["put_objects", "put_objects_single"])
def test_an_upload_to_a_container_never_versioned_lists_no_versions(
        swift_store: SwiftStore, asked: list[str], method: str) -> None:
    """Its objects have one version each: nothing to prune, no listing of a whole
    tree's versions (what a plan create's upload asked for), the same objects stored."""
    swift_store.history_max = 1
    swift_store.create_container("overcloud")
    objects = {f"templates/{i}.yaml": b"v1" for i in range(12)}
    upload = getattr(swift_store, method)
    upload("overcloud", objects)
    upload("overcloud", {name: b"v2" for name in objects})
    assert "list versions in container" not in asked
    for name in objects:
        versions = swift_store.list_versions("overcloud", name)
        assert [(v.version_id, v.is_latest) for v in versions] == [("null", True)]
        assert swift_store.get_object("overcloud", name) == b"v2"
    # Versioned once (now off): its objects may hold versions, so they are pruned.
    swift_store.set_versioning("overcloud", True)
    swift_store.set_versioning("overcloud", False)
    asked.clear()
    upload("overcloud", {name: b"v3" for name in objects})
    assert "list versions in container" in asked


def test_whether_a_plan_exists_is_one_request(swift_store: SwiftStore, asked: list[str]) -> None:
    """Asked by every plan task (require): one HEAD of the container, not two."""
    repo = PlanRepository(swift_store)
    repo.begin_create("overcloud", "c1")
    assert repo.publish("overcloud", "c1")
    swift_store.create_container("other")  # not a plan
    asked.clear()
    assert [repo.exists("overcloud"), repo.exists("other"), repo.exists("absent")] == [
        True, False, False]
    assert asked == ["read container"] * 3


def test_a_plan_create_turns_versioning_on_after_rendering(swift_store: SwiftStore,
                                                           tmp_path: Path) -> None:
    """The templates and their rendered files are written before versioning (on Swift
    a versioned write stores the object twice); the plan-environment's history still
    holds the plan-environment as uploaded, and later writes keep history."""
    client = make_client(tmp_path, swift_store)
    try:
        client.plans.create("overcloud", write_tree(tmp_path / "templates", basic_tree()))
    finally:
        client.close()
    rendered = PlanRepository(swift_store).manifest("overcloud").rendered
    assert rendered
    for name in rendered:
        assert [(v.version_id, v.is_latest)
                for v in swift_store.list_versions("overcloud", name)] == [("null", True)]
    assert len(swift_store.list_versions("overcloud", "plan-environment.yaml")) == 2
    swift_store.put_object("overcloud", rendered[0], b"changed")
    assert len(swift_store.list_versions("overcloud", rendered[0])) == 2
