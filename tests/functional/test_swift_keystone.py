"""The Swift plan store with Keystone v3 authentication (``[swift] auth_version = 3``),
against a real Keystone and a Swift proxy running authtoken + keystoneauth."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures_keystone import Keystone
from tests.fixtures_plans import make_client
from tests.keystone_server import User
from tests.swift_server import SwiftServer
from tripleo_flow import config, exceptions
from tripleo_flow.plans.swift import SwiftStore

pytestmark = pytest.mark.functional


def store_for(tmp_path: Path, keystone: Keystone, user: User) -> SwiftStore:
    """A SwiftStore built as the CLI builds it: from a configuration file's [swift]."""
    path = tmp_path / f"{user.name}.conf"
    path.write_text(
        "[swift]\n"
        f"auth_url = {keystone.url}\n"
        "auth_version = 3\n"
        f"user = {user.name}\n"
        f"key = {user.password}\n"
        f"project_name = {user.project}\n"
        "user_domain_name = Default\n"
        "project_domain_name = Default\n")
    path.chmod(0o600)
    return SwiftStore.from_conf(config.load([str(path)]))


@pytest.fixture
def operator_store(tmp_path: Path, keystone: Keystone,
                   swift_keystone_server: SwiftServer) -> Iterator[SwiftStore]:
    store = store_for(tmp_path, keystone, keystone.operator)
    yield store
    for info in store.list_containers():
        store.delete_container(info.name)
    store.close()


def test_objects_round_trip_in_the_projects_account(
        operator_store: SwiftStore, keystone: Keystone,
        swift_keystone_server: SwiftServer) -> None:
    operator_store.create_container("overcloud")
    operator_store.put_objects("overcloud", {"overcloud.yaml": b"heat_template_version: x\n",
                                             "roles/controller.yaml": b"- name: Controller\n"})
    operator_store.put_object("overcloud", "plan-environment.yaml", b"name: overcloud\n")
    assert operator_store.get_object("overcloud", "roles/controller.yaml") == \
        b"- name: Controller\n"
    assert operator_store.list_objects("overcloud") == [
        "overcloud.yaml", "plan-environment.yaml", "roles/controller.yaml"]
    assert [c.name for c in operator_store.list_containers()] == ["overcloud"]
    # The token came from Keystone and the storage URL from its catalog: the project's account.
    project_id = keystone.server.project_id(keystone.operator.project)
    with operator_store.session._connection() as conn:
        assert conn.url == swift_keystone_server.endpoint_template % {"project_id": project_id}
    operator_store.delete_container("overcloud")
    assert not operator_store.container_exists("overcloud")


def test_plan_create_on_swift_with_keystone(tmp_path: Path, operator_store: SwiftStore,
                                            templates: Path) -> None:
    client = make_client(tmp_path, operator_store)
    try:
        summary = client.plans.create("overcloud", templates)
        assert summary["name"] == "overcloud"
        assert [plan["name"] for plan in client.plans.list()] == ["overcloud"]
        assert b"name: overcloud" in operator_store.get_object("overcloud",
                                                               "plan-environment.yaml")
    finally:
        client.close()


def test_a_wrong_password_says_what_to_check(tmp_path: Path, keystone: Keystone,
                                             swift_keystone_server: SwiftServer) -> None:
    operator = keystone.operator
    wrong = User(operator.name, "wrong-password", operator.project, operator.role)
    store = store_for(tmp_path, keystone, wrong)
    with pytest.raises(exceptions.PlanStoreError) as info:
        store.create_container("overcloud")
    message = str(info.value)
    assert "not authorized" in message
    assert "[swift]" in message and "project_name" in message
    assert keystone.url in message
    assert "Check that Swift is running" not in message


def test_a_user_without_an_operator_role_is_refused(tmp_path: Path, keystone: Keystone,
                                                    swift_keystone_server: SwiftServer) -> None:
    # A valid token, but a reader is no owner of the project's account (keystoneauth: 403).
    store = store_for(tmp_path, keystone, keystone.outsider)
    with pytest.raises(exceptions.PlanStoreError, match=r"not authorized \(403\)") as info:
        store.create_container("overcloud")
    assert "operator roles" in str(info.value)


def test_keystone_unreachable_is_named(tmp_path: Path, keystone: Keystone) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v3"
    store = SwiftStore(closed, "operator", "pw", auth_version="3", project_name="tripleo")
    with pytest.raises(exceptions.PlanStoreError) as info:
        store.list_objects("overcloud")
    message = str(info.value)
    assert f"Keystone at {closed}" in message
    assert "Check that Keystone is running and reachable" in message
