"""Table-driven tests of tripleo_flow.core.plan.capabilities."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.core.plan import capabilities

REGISTRY = "overcloud-resource-registry-puppet.yaml"
ISOLATION = "environments/network-isolation.yaml"
NETENV = "environments/network-environment.yaml"
BONDS = "environments/net-bond-with-vlans.yaml"
DEBUG = "environments/debug.yaml"
TLS = "environments/ssl/enable-tls.yaml"

CAP_MAP: dict[str, Any] = {
    "topics": [
        {"title": "General", "description": "Base",
         "environment_groups": [
             {"title": "Base", "environments": [{"file": REGISTRY, "title": "Registry"}]}]},
        {"title": "Network",
         "environment_groups": [
             {"title": "Isolation", "mutually_exclusive": True, "environments": [
                 {"file": ISOLATION, "title": "Isolation", "description": "Isolate",
                  "requires": [REGISTRY]},
                 {"file": NETENV, "title": "Net env", "requires": [ISOLATION]},
                 {"file": BONDS, "title": "Bonds", "requires": [NETENV, ISOLATION]}]}]},
    ]
}

FILES = [
    "overcloud.j2.yaml",
    "overcloud-resource-registry-puppet.j2.yaml",  # renders the registry
    "environments/network-isolation.j2.yaml",  # renders ISOLATION
    NETENV,
    BONDS,
    DEBUG,
    TLS,
    "user-environment.yaml",
    "puppet/role.role.j2.yaml",
    "ci/environments/scenario001.yaml",  # not the plan's environments/ tree
]


def plan_env(*entries: Any) -> dict[str, Any]:
    return {"name": "overcloud", "template": "overcloud.yaml",
            "environments": [e if isinstance(e, dict) else {"path": e} for e in entries]}


def flatten(caps: dict[str, Any]) -> dict[str, bool]:
    return {
        env["file"]: env["enabled"]
        for topic in caps.values()
        for group in topic["environment_groups"]
        for env in group["environments"]
    }


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (plan_env(), {REGISTRY: False, ISOLATION: False, NETENV: False, BONDS: False,
                      DEBUG: False, TLS: False, "user-environment.yaml": False}),
        (plan_env(REGISTRY, DEBUG, {"data": {"parameter_defaults": {}}}),
         {REGISTRY: True, ISOLATION: False, NETENV: False, BONDS: False,
          DEBUG: True, TLS: False, "user-environment.yaml": False}),
        # an enabled file the map does not know and that is not under environments/
        (plan_env("custom.yaml"),
         {REGISTRY: False, ISOLATION: False, NETENV: False, BONDS: False,
          DEBUG: False, TLS: False, "user-environment.yaml": False, "custom.yaml": True}),
    ],
)
def test_get_capabilities_enabled(env: dict, expected: dict[str, bool]) -> None:
    assert flatten(capabilities.get_capabilities(CAP_MAP, env, FILES)) == expected


def test_get_capabilities_shape() -> None:
    before = copy.deepcopy(CAP_MAP)
    caps = capabilities.get_capabilities(CAP_MAP, plan_env(ISOLATION), FILES)
    assert CAP_MAP == before
    assert list(caps) == ["General", "Network", "Other"]
    group = caps["Network"]["environment_groups"][0]
    assert group["title"] == "Isolation" and group["mutually_exclusive"] is True
    assert group["environments"][0] == {
        "file": ISOLATION, "title": "Isolation", "description": "Isolate",
        "requires": [REGISTRY], "enabled": True,
    }
    other = caps["Other"]["environment_groups"]
    assert [g["title"] for g in other] == [DEBUG, TLS, "user-environment.yaml"]
    assert other[0]["environments"][0] == {
        "file": DEBUG, "title": DEBUG, "description": f"Enable {DEBUG} environment",
        "requires": [], "enabled": False,
    }


GONE = "environments/containers-default-parameters.yaml"
MAP_WITH_GONE: dict[str, Any] = {"topics": [
    *CAP_MAP["topics"],
    {"title": "Containers", "environment_groups": [
        {"title": "Defaults", "environments": [{"file": GONE, "title": "Gone"}]}]}]}


@pytest.mark.parametrize(("env", "offered"), [
    (plan_env(), False),        # the map names it, the tree does not ship it: not offered
    (plan_env(GONE), True),     # unless it is selected (so it can be disabled)
])
def test_map_environments_that_do_not_exist(env: dict, offered: bool) -> None:
    caps = capabilities.get_capabilities(MAP_WITH_GONE, env, FILES)
    assert (GONE in flatten(caps)) is offered
    assert ("Containers" in caps and bool(caps["Containers"]["environment_groups"])) is offered
    assert flatten(caps)[ISOLATION] is False


def test_get_capabilities_without_map() -> None:
    caps = capabilities.get_capabilities(None, plan_env(DEBUG), FILES)
    assert list(caps) == ["Other"]
    assert flatten(caps)[DEBUG] is True


@pytest.mark.parametrize(
    ("start", "selections", "purge", "expected"),
    [
        # add one: its requirements come first
        (plan_env(), {ISOLATION: True}, False, [REGISTRY, ISOLATION]),
        # transitive requirements, each once, in dependency order
        (plan_env(), {BONDS: True}, False, [REGISTRY, ISOLATION, NETENV, BONDS]),
        # already-enabled requirements stay where they are
        (plan_env(REGISTRY, DEBUG), {NETENV: True}, False, [REGISTRY, DEBUG, ISOLATION, NETENV]),
        # a requirement listed after its dependant is moved before it
        (plan_env(NETENV, ISOLATION, REGISTRY), {}, False, [REGISTRY, ISOLATION, NETENV]),
        # remove one, keep the rest in order
        (plan_env(REGISTRY, DEBUG, TLS), {DEBUG: False}, False, [REGISTRY, TLS]),
        # removing something not enabled is a no-op
        (plan_env(REGISTRY), {DEBUG: False}, False, [REGISTRY]),
        # adding something already enabled does not duplicate it
        (plan_env(REGISTRY, DEBUG), {DEBUG: True}, False, [REGISTRY, DEBUG]),
        # purge: exactly the selection (and requirements); data entries stay
        (plan_env(REGISTRY, DEBUG, {"data": {"a": 1}}, TLS), {ISOLATION: True}, True,
         [REGISTRY, {"data": {"a": 1}}, ISOLATION]),
        (plan_env(REGISTRY, DEBUG), {}, True, []),
        # files under environments/ not in the map, and rendered files, can be selected
        (plan_env(), {TLS: True, "environments/network-isolation.yaml": True}, False,
         [TLS, REGISTRY, ISOLATION]),
        # an entry no longer in the plan files can still be removed
        (plan_env(REGISTRY, "gone.yaml"), {"gone.yaml": False}, False, [REGISTRY]),
    ],
)
def test_update_environments(
    start: dict, selections: dict[str, bool], purge: bool, expected: list[Any]
) -> None:
    before = copy.deepcopy(start)
    result = capabilities.update_environments(start, CAP_MAP, FILES, selections, purge=purge)
    assert start == before
    assert result is not start
    got = [e["path"] if "path" in e else e for e in result["environments"]]
    assert got == expected
    assert result["name"] == "overcloud" and result["template"] == "overcloud.yaml"


def test_update_keeps_data_entries_untouched() -> None:
    data = {"data": {"parameter_defaults": {"X": [1, 2]}}}
    start = plan_env(data, DEBUG)
    result = capabilities.update_environments(start, CAP_MAP, FILES, {DEBUG: False})
    assert result["environments"] == [data]
    assert result["environments"][0] is not start["environments"][0]


@pytest.mark.parametrize(
    ("cap_map", "start", "selections", "error", "fragments"),
    [
        (CAP_MAP, plan_env(), {"environments/nope.yaml": True}, exceptions.UnknownEnvironment,
         ["environments/nope.yaml", "overcloud"]),
        (CAP_MAP, plan_env(), {"environments/nope.yaml": False}, exceptions.UnknownEnvironment,
         ["environments/nope.yaml"]),
        # a requirement missing from the plan
        ({"topics": [{"title": "T", "environment_groups": [{"environments": [
            {"file": DEBUG, "requires": ["environments/missing.yaml"]}]}]}]},
         plan_env(), {DEBUG: True}, exceptions.UnknownEnvironment, ["environments/missing.yaml"]),
        # removing a requirement of something that stays enabled
        (CAP_MAP, plan_env(REGISTRY, ISOLATION, NETENV), {ISOLATION: False},
         exceptions.InvalidParameter, [ISOLATION, NETENV]),
        (CAP_MAP, plan_env(), {NETENV: True, ISOLATION: False},
         exceptions.InvalidParameter, [ISOLATION]),
        # a requires loop in the map
        ({"topics": [{"title": "T", "environment_groups": [{"environments": [
            {"file": DEBUG, "requires": [TLS]}, {"file": TLS, "requires": [DEBUG]}]}]}]},
         plan_env(), {DEBUG: True}, exceptions.InvalidTemplate, ["loop", DEBUG, TLS]),
    ],
)
def test_update_errors(
    cap_map: dict, start: dict, selections: dict, error: type[Exception], fragments: list[str]
) -> None:
    with pytest.raises(error) as info:
        capabilities.update_environments(start, cap_map, FILES, selections)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_requirements() -> None:
    assert capabilities.requirements(CAP_MAP) == {
        REGISTRY: [], ISOLATION: [REGISTRY], NETENV: [ISOLATION], BONDS: [NETENV, ISOLATION],
    }
    assert capabilities.requirements(None) == {}
