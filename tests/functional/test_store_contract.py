"""The PlanStore contract, run against every backend (LocalStore and a real Swift)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.plans.store import ContainerInfo, PlanStore

pytestmark = pytest.mark.functional


# -- containers ----------------------------------------------------------------


def test_create_and_exists(plan_store: PlanStore) -> None:
    assert not plan_store.container_exists("overcloud")
    plan_store.create_container("overcloud")
    assert plan_store.container_exists("overcloud")
    assert plan_store.list_objects("overcloud") == []


def test_duplicate_container_is_refused(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud", {"owner": "first"})
    with pytest.raises(exceptions.ContainerExists, match="'overcloud' already exists"):
        plan_store.create_container("overcloud", {"owner": "second"})
    assert plan_store.get_container_metadata("overcloud") == {"owner": "first"}


def test_list_containers_sorted_with_metadata(plan_store: PlanStore) -> None:
    assert plan_store.list_containers() == []
    plan_store.create_container("zeta", {"Kind": "Plan"})
    plan_store.create_container("alpha")
    assert plan_store.list_containers() == [
        ContainerInfo("alpha", {}),
        ContainerInfo("zeta", {"kind": "Plan"}),
    ]


def test_metadata_merge_and_removal(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud", {"a": "1", "b": "2", "c": "3"})
    plan_store.set_container_metadata("overcloud", {"B": "two", "a": None, "c": "", "d": "4"})
    assert plan_store.get_container_metadata("overcloud") == {"b": "two", "d": "4"}
    plan_store.set_container_metadata("overcloud", {"missing": None})
    assert plan_store.get_container_metadata("overcloud") == {"b": "two", "d": "4"}


def test_metadata_values_keep_unicode(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud", {"description": "héllo ✓ wörld"})
    assert plan_store.get_container_metadata("overcloud") == {"description": "héllo ✓ wörld"}


@pytest.mark.parametrize("key, value", [
    ("under_score", "x"),  # Swift drops header names with '_'
    ("with space", "x"),
    ("", "x"),
    ("k" * 129, "x"),
    ("ok", "line\nbreak"),
    ("ok", "v" * 257),
])
def test_metadata_that_cannot_be_stored_is_refused(plan_store: PlanStore, key: str,
                                                   value: str) -> None:
    plan_store.create_container("overcloud")
    with pytest.raises(exceptions.InvalidInput):
        plan_store.set_container_metadata("overcloud", {key: value})
    with pytest.raises(exceptions.InvalidInput):
        plan_store.create_container("other", {key: value})
    assert plan_store.get_container_metadata("overcloud") == {}
    assert not plan_store.container_exists("other")


def test_delete_container_with_objects(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud")
    plan_store.put_objects("overcloud", {f"dir/{i}.yaml": b"x" for i in range(20)})
    plan_store.delete_container("overcloud")
    assert not plan_store.container_exists("overcloud")
    assert plan_store.list_containers() == []
    plan_store.create_container("overcloud")
    assert plan_store.list_objects("overcloud") == []


def test_delete_versioned_container_with_versions(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud", versioned=True)
    for content in (b"1", b"2", b"3"):
        plan_store.put_object("overcloud", "plan-environment.yaml", content)
    plan_store.put_object("overcloud", "gone.yaml", b"old")
    plan_store.delete_object("overcloud", "gone.yaml")
    plan_store.delete_container("overcloud")
    assert not plan_store.container_exists("overcloud")
    plan_store.create_container("overcloud", versioned=True)
    assert plan_store.list_objects("overcloud") == []
    assert plan_store.list_versions("overcloud", "plan-environment.yaml") == []
    assert plan_store.list_versions("overcloud", "gone.yaml") == []


# -- objects -------------------------------------------------------------------


def test_put_get_overwrite(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud")
    plan_store.put_object("overcloud", "overcloud.yaml", b"heat_template_version: 1")
    assert plan_store.get_object("overcloud", "overcloud.yaml") == b"heat_template_version: 1"
    plan_store.put_object("overcloud", "overcloud.yaml", b"\x00binary\xff")
    assert plan_store.get_object("overcloud", "overcloud.yaml") == b"\x00binary\xff"
    plan_store.put_object("overcloud", "empty", b"")
    assert plan_store.get_object("overcloud", "empty") == b""


def test_names_with_slashes_and_prefix_listing(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud")
    names = ["roles/Compute.yaml", "roles/Controller.yaml", "roles_data.yaml",
             "environments/network/ipv6.yaml", "überall.yaml"]
    for name in names:
        plan_store.put_object("overcloud", name, name.encode())
    assert plan_store.list_objects("overcloud") == sorted(names)
    assert plan_store.list_objects("overcloud", prefix="roles/") == [
        "roles/Compute.yaml", "roles/Controller.yaml"]
    assert plan_store.list_objects("overcloud", prefix="roles") == [
        "roles/Compute.yaml", "roles/Controller.yaml", "roles_data.yaml"]
    assert plan_store.list_objects("overcloud", prefix="nothing") == []
    assert plan_store.get_object("overcloud", "environments/network/ipv6.yaml") == (
        b"environments/network/ipv6.yaml")


def test_delete_object_and_missing_is_fine(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud")
    plan_store.put_object("overcloud", "a/b.yaml", b"x")
    plan_store.put_object("overcloud", "a/c.yaml", b"y")
    plan_store.delete_object("overcloud", "a/b.yaml")
    plan_store.delete_object("overcloud", "a/b.yaml")
    plan_store.delete_object("overcloud", "never/there.yaml")
    assert plan_store.list_objects("overcloud") == ["a/c.yaml"]


def test_delete_objects_ignores_missing(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud")
    plan_store.put_objects("overcloud", {f"f{i:03d}": b"x" for i in range(30)})
    plan_store.delete_objects("overcloud", [f"f{i:03d}" for i in range(0, 40, 2)])
    assert plan_store.list_objects("overcloud") == [f"f{i:03d}" for i in range(1, 30, 2)]
    plan_store.delete_objects("overcloud", [])


def test_get_missing_object_raises_object_not_found(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud")
    with pytest.raises(exceptions.ObjectNotFound) as info:
        plan_store.get_object("overcloud", "missing.yaml")
    assert info.value.container == "overcloud"
    assert "'missing.yaml'" in str(info.value)


def test_get_objects_reads_many_and_leaves_out_missing_ones(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud")
    stored = {f"dir{i % 3}/f{i:02d}.yaml": f"content {i}".encode() for i in range(20)}
    plan_store.put_objects("overcloud", stored)
    wanted = [*stored, "missing.yaml", "dir0/missing.yaml"]
    assert plan_store.get_objects("overcloud", wanted) == stored
    assert plan_store.get_objects("overcloud", []) == {}
    assert plan_store.get_objects("nope", ["x"]) == {}  # its own read reports it


_ON_MISSING_CONTAINER: list[tuple[str, Callable[[PlanStore], Any]]] = [
    ("get_container_metadata", lambda s: s.get_container_metadata("nope")),
    ("set_container_metadata", lambda s: s.set_container_metadata("nope", {"a": "b"})),
    ("delete_container", lambda s: s.delete_container("nope")),
    ("list_objects", lambda s: s.list_objects("nope")),
    ("get_object", lambda s: s.get_object("nope", "x")),
    ("get_object version", lambda s: s.get_object("nope", "x", version_id="1")),
    ("put_object", lambda s: s.put_object("nope", "x", b"1")),
    ("put_objects", lambda s: s.put_objects("nope", {"x": b"1", "y/z": b"2"})),
    ("delete_object", lambda s: s.delete_object("nope", "x")),
    ("delete_objects", lambda s: s.delete_objects("nope", ["x"])),
    ("list_versions", lambda s: s.list_versions("nope", "x")),
]


@pytest.mark.parametrize("operation", [op for _, op in _ON_MISSING_CONTAINER],
                         ids=[name for name, _ in _ON_MISSING_CONTAINER])
def test_missing_container_raises_container_not_found(
        plan_store: PlanStore, operation: Callable[[PlanStore], Any]) -> None:
    with pytest.raises(exceptions.ContainerNotFound, match="'nope' does not exist"):
        operation(plan_store)
    assert not plan_store.container_exists("nope")


@pytest.mark.parametrize("operation", [
    lambda s: s.create_container("a/b"),
    lambda s: s.container_exists(".."),
    lambda s: s.put_object("overcloud", "../escape", b"x"),
    lambda s: s.put_object("overcloud", "/abs", b"x"),
    lambda s: s.put_object("overcloud", "a//b", b"x"),
    lambda s: s.put_objects("overcloud", {"ok": b"x", "a/./b": b"x"}),
    lambda s: s.get_object("overcloud", ""),
])
def test_invalid_names_are_refused(plan_store: PlanStore,
                                   operation: Callable[[PlanStore], Any]) -> None:
    plan_store.create_container("overcloud")
    with pytest.raises(exceptions.InvalidInput):
        operation(plan_store)
    assert plan_store.list_objects("overcloud") == []


def test_put_objects_few_hundred_files(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud")
    objects = {f"deployment/service-{i:03d}/{name}": f"{i}-{name}\n".encode() * (i % 7)
               for i in range(150) for name in ("main.yaml", "vars.j2.yaml")}
    objects["plan-environment.yaml"] = b"name: overcloud\n"
    plan_store.put_objects("overcloud", objects)
    assert plan_store.list_objects("overcloud") == sorted(objects)
    for name in ("deployment/service-000/main.yaml", "deployment/service-149/vars.j2.yaml",
                 "deployment/service-075/main.yaml", "plan-environment.yaml"):
        assert plan_store.get_object("overcloud", name) == objects[name]
    # A second upload overwrites.
    plan_store.put_objects("overcloud", {"plan-environment.yaml": b"name: changed\n"})
    assert plan_store.get_object("overcloud", "plan-environment.yaml") == b"name: changed\n"
    plan_store.put_objects("overcloud", {})


def test_put_objects_reports_bytes_until_all_are_stored(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud")
    objects = {f"roles/role-{i:02d}.yaml": b"x" * (1000 + 97 * i) for i in range(40)}
    seen: list[tuple[int, int]] = []
    plan_store.put_objects("overcloud", objects, lambda done, total: seen.append((done, total)))
    assert plan_store.list_objects("overcloud") == sorted(objects)
    payload = sum(len(d) for d in objects.values())
    totals = {total for _, total in seen}
    assert len(totals) == 1 and totals.pop() >= payload  # Swift counts tar headers too
    assert seen[-1][0] == seen[-1][1]
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert len(seen) > 1  # not only a final report


# -- versions ------------------------------------------------------------------


def test_versions_newest_first_and_readable(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud", versioned=True)
    for content in (b"first", b"second!", b"third"):
        plan_store.put_object("overcloud", "plan-environment.yaml", content)
    plan_store.put_object("overcloud", "plan-environment.yaml.bak", b"other object")
    versions = plan_store.list_versions("overcloud", "plan-environment.yaml")
    assert [plan_store.get_object("overcloud", "plan-environment.yaml", v.version_id)
            for v in versions] == [b"third", b"second!", b"first"]
    assert [v.is_latest for v in versions] == [True, False, False]
    assert [v.size for v in versions] == [5, 7, 5]
    assert len({v.version_id for v in versions}) == 3
    stamps = [v.last_modified for v in versions]
    assert stamps == sorted(stamps, reverse=True)
    assert plan_store.get_object("overcloud", "plan-environment.yaml") == b"third"


def test_deleted_object_keeps_its_versions(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud", versioned=True)
    plan_store.put_object("overcloud", "roles_data.yaml", b"v1")
    plan_store.put_object("overcloud", "roles_data.yaml", b"v2")
    plan_store.delete_object("overcloud", "roles_data.yaml")
    assert plan_store.list_objects("overcloud") == []
    versions = plan_store.list_versions("overcloud", "roles_data.yaml")
    assert not any(v.is_latest for v in versions)
    assert [plan_store.get_object("overcloud", "roles_data.yaml", v.version_id)
            for v in versions] == [b"v2", b"v1"]
    with pytest.raises(exceptions.ObjectNotFound):
        plan_store.get_object("overcloud", "roles_data.yaml")


def test_put_objects_keeps_versions(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud", versioned=True)
    plan_store.put_objects("overcloud", {"a.yaml": b"1", "b.yaml": b"1"})
    plan_store.put_objects("overcloud", {"a.yaml": b"2"})
    versions = plan_store.list_versions("overcloud", "a.yaml")
    assert [plan_store.get_object("overcloud", "a.yaml", v.version_id)
            for v in versions] == [b"2", b"1"]


def test_unknown_version_raises_object_not_found(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud", versioned=True)
    plan_store.put_object("overcloud", "a.yaml", b"1")
    for version_id in ("1234567890.12345", "not-a-version"):
        with pytest.raises(exceptions.ObjectNotFound):
            plan_store.get_object("overcloud", "a.yaml", version_id=version_id)


def test_unversioned_container_lists_no_old_versions(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud")
    plan_store.put_object("overcloud", "a.yaml", b"1")
    plan_store.put_object("overcloud", "a.yaml", b"2")
    versions = plan_store.list_versions("overcloud", "a.yaml")
    assert [v.is_latest for v in versions] == [True]
    assert plan_store.get_object("overcloud", "a.yaml", versions[0].version_id) == b"2"
    plan_store.delete_object("overcloud", "a.yaml")
    assert plan_store.list_versions("overcloud", "a.yaml") == []
    assert plan_store.list_versions("overcloud", "never.yaml") == []


def test_versioning_turned_on_after_upload(plan_store: PlanStore) -> None:
    """Objects written before versioning was on still reach the history."""
    plan_store.create_container("overcloud")
    plan_store.put_objects("overcloud", {"plan-environment.yaml": b"v1", "a.yaml": b"a"})
    plan_store.set_versioning("overcloud", True)
    plan_store.put_object("overcloud", "plan-environment.yaml", b"v2")
    plan_store.put_object("overcloud", "plan-environment.yaml", b"v3")
    versions = plan_store.list_versions("overcloud", "plan-environment.yaml")
    assert [plan_store.get_object("overcloud", "plan-environment.yaml", v.version_id)
            for v in versions] == [b"v3", b"v2", b"v1"]
    plan_store.set_versioning("overcloud", False)
    plan_store.put_object("overcloud", "a.yaml", b"b")
    assert [v.is_latest for v in plan_store.list_versions("overcloud", "a.yaml")] == [True]
    plan_store.delete_container("overcloud")
    assert not plan_store.container_exists("overcloud")


# -- version ids, history length, names (issue 10) -------------------------------------


def _two_versions(plan_store: PlanStore) -> None:
    plan_store.create_container("overcloud", versioned=True)
    plan_store.put_object("overcloud", "plan-environment.yaml", b"v1")
    plan_store.put_object("overcloud", "plan-environment.yaml", b"v2")
    plan_store.put_object("overcloud", "roles/a.yaml", b"role")


@pytest.mark.parametrize("version_id", [
    "../../objects/plan-environment.yaml",   # an object that exists (local layout)
    "../../../../outside.yaml",              # a file outside the store (local layout)
    "../../objects/roles/a.yaml",
    "..", ".", "", " ", "/", "a/b", "%2e%2e%2foutside.yaml", "current/..",
    "00000000000000000001",                  # the local store's format, never issued
    "1234567890.12345",                      # Swift's format, never issued
    "1" * 21, "null\x00", "null\n", "00000000000000000001\n", "\ud800",
])
def test_version_ids_the_store_did_not_issue_are_not_found(
        plan_store: PlanStore, tmp_path: Any, version_id: str) -> None:
    (tmp_path / "outside.yaml").write_bytes(b"secret: outside\n")
    _two_versions(plan_store)
    with pytest.raises(exceptions.ObjectNotFound) as info:
        plan_store.get_object("overcloud", "plan-environment.yaml", version_id=version_id)
    assert info.value.container == "overcloud"
    assert [plan_store.get_object("overcloud", "plan-environment.yaml", v.version_id)
            for v in plan_store.list_versions("overcloud", "plan-environment.yaml")] == [
        b"v2", b"v1"]


def test_the_latest_version_id_of_a_deleted_object_is_not_found(plan_store: PlanStore) -> None:
    _two_versions(plan_store)
    latest = plan_store.list_versions("overcloud", "plan-environment.yaml")[0].version_id
    plan_store.delete_object("overcloud", "plan-environment.yaml")
    ids = [v.version_id for v in plan_store.list_versions("overcloud", "plan-environment.yaml")]
    if latest not in ids:  # the local store names the current object "current"
        with pytest.raises(exceptions.ObjectNotFound):
            plan_store.get_object("overcloud", "plan-environment.yaml", version_id=latest)
    assert [plan_store.get_object("overcloud", "plan-environment.yaml", v)
            for v in ids] == [b"v2", b"v1"]


def test_history_keeps_at_most_history_max_versions(plan_store: PlanStore) -> None:
    plan_store.history_max = 3
    plan_store.create_container("overcloud")
    plan_store.put_objects("overcloud", {"plan-environment.yaml": b"v0", "other.yaml": b"o"})
    plan_store.set_versioning("overcloud", True)  # v0 predates versioning
    for i in range(1, 6):
        plan_store.put_object("overcloud", "plan-environment.yaml", f"v{i}".encode())

    def history() -> list[bytes]:
        return [plan_store.get_object("overcloud", "plan-environment.yaml", v.version_id)
                for v in plan_store.list_versions("overcloud", "plan-environment.yaml")]

    assert history() == [b"v5", b"v4", b"v3"]
    plan_store.put_objects("overcloud", {"plan-environment.yaml": b"v6", "other.yaml": b"p"})
    assert history() == [b"v6", b"v5", b"v4"]
    assert plan_store.get_object("overcloud", "other.yaml") == b"p"
    assert len(plan_store.list_versions("overcloud", "other.yaml")) == 2


def test_any_file_name_is_kept(plan_store: PlanStore) -> None:
    """Names the local store once used for its temporary files are plain names."""
    plan_store.create_container("overcloud", versioned=True)
    objects = {".tmp-user.yaml": b"1", "environments/.tmp-x": b"2", ".hidden.yaml": b"3"}
    plan_store.put_objects("overcloud", objects)
    plan_store.put_object("overcloud", "a/.tmp-b.yaml", b"4")
    assert plan_store.list_objects("overcloud") == sorted([*objects, "a/.tmp-b.yaml"])
    assert plan_store.get_object("overcloud", "environments/.tmp-x") == b"2"


@pytest.mark.parametrize("operation", [
    lambda s: s.create_container("c" * 256),
    lambda s: s.container_exists("c" * 300),
    lambda s: s.list_objects("c" * 300),
    lambda s: s.create_container("bad\x00name"),
    lambda s: s.create_container("bad\ud800"),
    lambda s: s.put_object("overcloud", "o" * 256, b"x"),
    lambda s: s.put_object("overcloud", "d/" * 520 + "x", b"x"),
    lambda s: s.put_object("overcloud", "a\x00b", b"x"),
    lambda s: s.put_object("overcloud", "a\nb", b"x"),
    lambda s: s.put_object("overcloud", "\ud800.yaml", b"x"),
    lambda s: s.put_objects("overcloud", {"ok": b"x", "o" * 256: b"x"}),
    lambda s: s.get_object("overcloud", "o" * 256),
    lambda s: s.get_object("overcloud", "o" * 256, version_id="current"),
    lambda s: s.list_versions("overcloud", "o" * 256),
    lambda s: s.delete_object("overcloud", "o" * 256),
], ids=["container-256", "exists-300", "list-300", "container-nul", "container-surrogate",
        "object-256", "object-1040", "object-nul", "object-newline", "object-surrogate",
        "put-objects-256", "get-256", "get-version-256", "versions-256", "delete-256"])
def test_names_too_long_or_unstorable_are_invalid_input(
        plan_store: PlanStore, operation: Callable[[PlanStore], Any]) -> None:
    plan_store.create_container("overcloud")
    with pytest.raises(exceptions.InvalidInput):
        operation(plan_store)
    assert plan_store.list_objects("overcloud") == []
    assert [c.name for c in plan_store.list_containers()] == ["overcloud"]


def test_longest_names_are_stored(plan_store: PlanStore) -> None:
    container = "c" * 255
    plan_store.create_container(container)
    name = "/".join(["d" * 255] * 4)[:1024]
    plan_store.put_object(container, name, b"x")
    assert plan_store.list_objects(container) == [name]
    assert plan_store.get_object(container, name) == b"x"
