"""The stevedore action registry: names, inputs, broken entry points."""

from __future__ import annotations

import pytest
from stevedore import extension

from tripleo_flow import exceptions
from tripleo_flow.actions import std
from tripleo_flow.actions.registry import ActionRegistry, BrokenAction


def test_from_classes_names_and_inputs() -> None:
    registry = ActionRegistry.from_classes({"std.echo": std.Echo, "std.http": std.Http})
    assert registry.names() == ["std.echo", "std.http"]
    assert registry.get("std.echo") is std.Echo
    assert std.Echo.action_name == "std.echo"
    info = registry.info("std.http")
    assert info.description == "Send an HTTP request and return its status, headers and content."
    by_name = {i.name: i for i in info.inputs}
    assert by_name["url"].required and by_name["url"].type == "str"
    assert not by_name["method"].required and by_name["method"].default == "GET"


def test_unknown_action() -> None:
    registry = ActionRegistry.from_classes({"std.noop": std.Noop})
    with pytest.raises(exceptions.ActionNotFound, match="tripleo-flow action list"):
        registry.get("plan.nothing")


def test_broken_entry_point_only_breaks_that_action() -> None:
    manager = extension.ExtensionManager.make_test_instance(
        [extension.Extension("std.noop", None, std.Noop, None)])
    registry = ActionRegistry(manager, {"plan.create": ("tripleo_flow.actions.plan:CreatePlan",
                                                        "ModuleNotFoundError: no plan")})
    assert registry.names() == ["plan.create", "std.noop"]
    assert registry.get("std.noop") is std.Noop
    with pytest.raises(BrokenAction) as info:
        registry.get("plan.create")
    assert "cannot be loaded: ModuleNotFoundError: no plan" in str(info.value)
    assert isinstance(info.value, exceptions.NotFound)
    assert [i.error for i in registry.infos()] == ["ModuleNotFoundError: no plan", None]


def test_plugin_that_is_not_an_action_is_broken() -> None:
    manager = extension.ExtensionManager.make_test_instance(
        [extension.Extension("odd.thing", None, dict, None)])
    registry = ActionRegistry(manager)
    assert "not an Action subclass" in registry.broken()["odd.thing"]


def test_installed_entry_points_load_without_crashing() -> None:
    registry = ActionRegistry.load()
    for name in ("std.noop", "std.echo", "std.fail", "std.sleep", "std.http"):
        assert name in registry.classes()
    assert set(registry.names()) == set(registry.classes()) | set(registry.broken())
    assert "plan.create" in registry.names()  # loadable or reported broken, never lost
