"""Fixtures for the plan stores: a real Swift for the session, both backends.

``swift_server`` FAILS (never skips) when Swift is not installed: set
``TRIPLEO_FLOW_SWIFT_BIN`` to the bin directory of a venv with
``swift==2.38.3`` (see :mod:`tests.swift_server`).  ``swift_keystone_server``
is a second Swift whose proxy authenticates with the session's Keystone; its
venv needs keystonemiddleware too (``tools/bootstrap.sh --tests`` installs it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures_keystone import Keystone
from tests.keystone_server import KeystoneStartError
from tests.swift_server import KeystoneAuth, SwiftNotInstalled, SwiftServer, SwiftStartError
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.store import PlanStore
from tripleo_flow.plans.swift import SwiftStore


@pytest.fixture(scope="session")
def swift_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SwiftServer]:
    """A one-machine Swift on 127.0.0.1, shared by the whole test session."""
    server = SwiftServer(tmp_path_factory.mktemp("swift"))
    problem = None
    try:
        server.start()
    except (SwiftNotInstalled, SwiftStartError) as exc:
        problem = f"Cannot start the test Swift: {exc}"
    if problem:
        pytest.fail(problem, pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def swift_keystone_server(tmp_path_factory: pytest.TempPathFactory,
                          keystone: Keystone) -> Iterator[SwiftServer]:
    """A one-machine Swift authenticating with the test Keystone (authtoken and
    keystoneauth in the proxy), registered in Keystone's catalog as object-store."""
    swift = keystone.swift
    server = SwiftServer(tmp_path_factory.mktemp("swift-keystone"), keystone=KeystoneAuth(
        keystone.url, swift.name, swift.password, swift.project))
    problem = None
    try:
        server.start()
        keystone.server.add_endpoint("object-store", "swift", server.endpoint_template)
    except (SwiftNotInstalled, SwiftStartError, KeystoneStartError) as exc:
        server.stop()
        problem = f"Cannot start the test Swift with Keystone: {exc}"
    if problem:
        pytest.fail(problem, pytrace=False)
    yield server
    server.stop()


def _empty_account(store: SwiftStore) -> None:
    for info in store.list_containers():
        store.delete_container(info.name)


@pytest.fixture
def swift_account(swift_server: SwiftServer) -> Iterator[tuple[str, str]]:
    """(user, key) of an empty account: one of the server's spare accounts, left as the
    test left it (the server's directory goes at the session's end), or once they are
    all used, the shared account emptied before and after the test."""
    user = swift_server.new_account()
    if user is not None:
        yield user, swift_server.key
        return
    store = SwiftStore(swift_server.auth_url, swift_server.user, swift_server.key)
    try:
        _empty_account(store)
        yield swift_server.user, swift_server.key
        _empty_account(store)
    finally:
        store.close()


@pytest.fixture
def swift_store(swift_server: SwiftServer, swift_account: tuple[str, str],
                ) -> Iterator[SwiftStore]:
    """A SwiftStore on an empty account of its own (:func:`swift_account`)."""
    user, key = swift_account
    store = SwiftStore(swift_server.auth_url, user, key)
    assert store.list_containers() == [], f"account {user} is not empty"
    yield store
    store.close()


@pytest.fixture(params=["local", "swift"])
def plan_store(request: pytest.FixtureRequest, tmp_path: Path) -> PlanStore:
    """Each PlanStore backend in turn: LocalStore in tmp_path, SwiftStore on the test Swift."""
    if request.param == "local":
        return LocalStore(tmp_path / "plans")
    store: SwiftStore = request.getfixturevalue("swift_store")
    return store
