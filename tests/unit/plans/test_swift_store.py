"""SwiftStore pieces that need no server: configuration, validation, bulk answers."""

from __future__ import annotations

import importlib.util
import io
import json
import tarfile

import pytest

from tripleo_flow import config, exceptions
from tripleo_flow.plans import swift_bulk
from tripleo_flow.plans.store import PlanStore, check_metadata
from tripleo_flow.plans.swift import SwiftStore


def _conf(**swift: object) -> object:
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    for key, value in swift.items():
        conf.set_override(key, value, group="swift")
    return conf


def test_from_conf_tempauth() -> None:
    store = SwiftStore.from_conf(_conf(auth_url="http://127.0.0.1:1/auth/v1.0",
                                       user="test:tester", key="secret", upload_threads=3))
    kwargs = store.connection_kwargs()
    assert kwargs["authurl"] == "http://127.0.0.1:1/auth/v1.0"
    assert (kwargs["user"], kwargs["key"], kwargs["auth_version"]) == (
        "test:tester", "secret", "1")
    assert kwargs["os_options"] == {}
    assert store.upload_threads == 3
    assert "secret" not in repr(store)
    assert isinstance(store, PlanStore)


def test_from_conf_keystone_v3() -> None:
    store = SwiftStore.from_conf(_conf(auth_url="http://keystone:5000/v3", user="admin",
                                       key="pw", auth_version="3", project_name="admin",
                                       user_domain_name="Users"))
    kwargs = store.connection_kwargs()
    assert kwargs["auth_version"] == "3"
    assert kwargs["os_options"] == {"project_name": "admin", "user_domain_name": "Users",
                                    "project_domain_name": "Default"}


@pytest.mark.parametrize("missing", ["auth_url", "user", "key"])
def test_from_conf_names_missing_options(missing: str) -> None:
    values = {"auth_url": "http://127.0.0.1:1/auth/v1.0", "user": "u", "key": "k"}
    del values[missing]
    with pytest.raises(exceptions.InvalidInput, match=f"needs {missing} in the \\[swift\\]"):
        SwiftStore.from_conf(_conf(**values))


def test_unknown_auth_version_is_refused() -> None:
    with pytest.raises(exceptions.InvalidInput, match="auth_version '2'"):
        SwiftStore("http://127.0.0.1:1/", "u", "k", auth_version="2")


@pytest.mark.parametrize("key, value, expected", [
    ("Deployment-Status", "DEPLOY_SUCCESS", "deployment-status"),
    ("x", None, "x"),
    ("a1-b2", "", "a1-b2"),
    ("k" * 128, "v" * 256, "k" * 128),
    ("unicode", "é" * 128, "unicode"),
])
def test_check_metadata_accepts(key: str, value: str | None, expected: str) -> None:
    assert check_metadata(key, value) == expected


@pytest.mark.parametrize("key, value", [
    ("under_score", "x"), ("-lead", "x"), ("sp ace", "x"), ("", "x"), ("k" * 129, "x"),
    ("ok", "a\nb"), ("ok", "tab\t"), ("ok", "é" * 129), ("ok", 5),
])
def test_check_metadata_refuses(key: str, value: object) -> None:
    with pytest.raises(exceptions.InvalidInput):
        check_metadata(key, value)  # type: ignore[arg-type]


@pytest.mark.parametrize("body, count_key, expected", [
    (json.dumps({"Response Status": "201 Created", "Errors": [],
                 "Number Files Created": 2}), "Number Files Created", []),
    (json.dumps({"Response Status": "400 Bad Request",
                 "Errors": [["c/dir/a%20b.yaml", "400 Bad Request"]],
                 "Number Files Created": 1}), "Number Files Created",
     [("dir/a b.yaml", "400 Bad Request")]),
    (json.dumps({"Response Status": "200 OK", "Errors": [["/c/x", "409 Conflict"]],
                 "Number Deleted": 1}), None, [("x", "409 Conflict")]),
    (json.dumps({"Response Status": "503 Service Unavailable", "Errors": [],
                 "Response Body": "busy"}), None,
     [("2 objects", "503 Service Unavailable busy")]),
    (json.dumps({"Response Status": "201 Created", "Errors": [],
                 "Number Files Created": 1}), "Number Files Created",
     [("2 objects", "only 1 stored")]),
    ("   <html>", None, [("2 objects", "unreadable bulk answer '   <html>'")]),
])
def test_bulk_failures(body: str, count_key: str | None,
                       expected: list[tuple[str, str]]) -> None:
    assert swift_bulk.bulk_failures(body.encode(), "c", count_key, 2) == expected


def test_split_balances_and_keeps_everything() -> None:
    objects = {f"o{i}": b"x" * (i * 100) for i in range(50)}
    chunks = swift_bulk.split_evenly(objects, 4)
    assert len(chunks) == 4
    assert sorted(name for chunk in chunks for name in chunk) == sorted(objects)
    sizes = [sum(map(len, chunk.values())) for chunk in chunks]
    assert max(sizes) - min(sizes) <= 5000
    assert len(swift_bulk.split_evenly({"a": b""}, 8)) == 1


def test_tar_holds_every_object() -> None:
    objects = {"a/" + "long-name-" * 20 + ".yaml": b"long", "ü/é.yaml": b"", "x": b"\x00\xff"}
    with tarfile.open(fileobj=io.BytesIO(swift_bulk.make_tar(objects))) as archive:
        found = {m.name: archive.extractfile(m).read() for m in archive.getmembers()}  # type: ignore[union-attr]
    assert found == objects


@pytest.mark.parametrize("failures, expected", [
    ([("a", "400 Bad Request")],
     "Could not upload 1 object(s) in container 'c': 'a' (400 Bad Request)."),
    ([(f"f{i}", "timeout") for i in range(7)] + [("x", "409 Conflict")],
     "Could not upload 8 object(s) in container 'c': 'f0', 'f1', 'f2', 'f3', 'f4' and 2 more "
     "(timeout); 'x' (409 Conflict)."),
])
def test_raise_failures_names_objects(failures: list[tuple[str, str]], expected: str) -> None:
    with pytest.raises(exceptions.PlanStoreError) as info:
        swift_bulk.raise_failures("upload", "c", failures)
    assert str(info.value).startswith(expected)
    assert "try again" in str(info.value)
    swift_bulk.raise_failures("upload", "c", [])


def test_keystone_v3_without_keystoneclient_says_what_to_install() -> None:
    store = SwiftStore("http://127.0.0.1:9/v3", "admin", "pw", auth_version="3",
                       project_name="admin", retries=0)
    with pytest.raises(exceptions.PlanStoreError) as info:
        store.container_exists("overcloud")
    if importlib.util.find_spec("keystoneclient") is None:
        assert "pip install python-keystoneclient" in str(info.value)
