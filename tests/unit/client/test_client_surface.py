"""The Client's public surface is its managers and a few deliberate members: the
configuration, plan store, locks, runner and executions database stay in its private
session (``client._session``), so infrastructure cannot creep back onto it."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from tripleo_flow import config
from tripleo_flow.client import TOP_LEVEL, Client
from tripleo_flow.client.base import Manager

MANAGERS = {
    "action_executions", "actions", "backups", "capabilities", "conductors", "deployments",
    "environments", "executions", "heat", "ironic", "networks", "nodes", "parameters",
    "passwords", "plans", "roles", "tasks", "updates", "upgrades", "validations",
    "workbooks", "workflows",
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    conf = config.new_conf()
    conf([], default_config_files=[], default_config_dirs=[])
    conf.set_override("data_dir", str(tmp_path))
    made = Client(conf)
    yield made
    made.close()


def _public(obj: object) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def test_the_public_surface_is_the_managers_and_the_deliberate_members(
        client: Client) -> None:
    assert _public(client) == MANAGERS | set(TOP_LEVEL)
    assert {name for name in _public(client)
            if isinstance(getattr(client, name), Manager)} == MANAGERS


def test_a_manager_shows_its_operations_only(client: Client) -> None:
    for name in MANAGERS:
        manager = getattr(client, name)
        assert _public(manager), name
        for member in _public(manager):  # no session, store, runner, conf ...
            assert inspect.ismethod(getattr(manager, member)), f"{name}.{member}"


def test_the_deliberate_members_are_read_only_or_methods(client: Client) -> None:
    for name in TOP_LEVEL:
        member = inspect.getattr_static(Client, name)
        assert isinstance(member, property | classmethod) or inspect.isfunction(member), name
    with pytest.raises(AttributeError):
        client.data_dir = Path("/elsewhere")  # type: ignore[misc]
