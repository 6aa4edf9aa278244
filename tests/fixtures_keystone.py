"""A real Keystone for the session, with the identities the keystone tests use.

``keystone`` FAILS (never skips) when Keystone is not installed: build its
virtualenv with ``tools/setup-keystone.sh`` (see :mod:`tests.keystone_server`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.keystone_server import KeystoneNotInstalled, KeystoneServer, KeystoneStartError, User

SERVICE_PROJECT = "service"


@dataclass(frozen=True)
class Keystone:
    """The running Keystone and its users.

    :ivar operator: a ``member`` of project ``tripleo`` (an API caller, a Swift account owner).
    :ivar outsider: a ``reader`` of another project (a valid token, never a Swift operator).
    :ivar service: ``tripleo-flow``'s service user (``service`` role in project ``service``),
        which keystonemiddleware validates tokens with.
    :ivar swift: the Swift proxy's service user.
    """

    server: KeystoneServer
    operator: User
    outsider: User
    service: User
    swift: User

    @property
    def url(self) -> str:
        return self.server.url

    def token(self, user: User) -> str:
        return self.server.token(user)


@pytest.fixture(scope="session")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keystone]:
    """A private Keystone on 127.0.0.1 (SQLite in a tmp dir), shared by the session."""
    server = KeystoneServer(tmp_path_factory.mktemp("keystone"))
    problem = None
    try:
        server.start()
        identities = Keystone(
            server,
            operator=server.add_user("operator", "tripleo", "member"),
            outsider=server.add_user("outsider", "elsewhere", "reader"),
            service=server.add_user("tripleo-flow", SERVICE_PROJECT, "service"),
            swift=server.add_user("swift", SERVICE_PROJECT, "service"),
        )
    except (KeystoneNotInstalled, KeystoneStartError) as exc:
        server.stop()
        problem = f"Cannot start the test Keystone: {exc}"
    if problem:
        pytest.fail(problem, pytrace=False)
    yield identities
    server.stop()
