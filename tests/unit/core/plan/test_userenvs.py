"""User environments (``-e``), the data files of plan create/update: pure logic."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import capabilities, planmerge, roles, userenvs

REG = "overcloud-resource-registry-puppet.yaml"


@pytest.mark.parametrize(("referrer", "ref", "expected"), [
    ("env.yaml", "nic/ctl.yaml", "nic/ctl.yaml"),
    ("env.yaml", "./a.yaml", "a.yaml"),
    ("nic/ctl.yaml", "../scripts/a.sh", "scripts/a.sh"),
    ("a/b/c.yaml", "../../x.yaml", "x.yaml"),
])
def test_references_inside_the_environment_directory_resolve(referrer: str, ref: str,
                                                              expected: str) -> None:
    assert userenvs.resolve("env.yaml", referrer, ref) == expected


@pytest.mark.parametrize(("referrer", "ref", "why"), [
    ("env.yaml", "../t.yaml", "outside the environment's directory"),
    ("nic/a.yaml", "../../t.yaml", "outside the environment's directory"),
    ("env.yaml", "/usr/share/openstack-tripleo-heat-templates/x.yaml", "an absolute path"),
    ("env.yaml", "file:///etc/passwd.yaml", "a URL"),
    ("env.yaml", "http://example.com/t.yaml", "a URL"),
    ("env.yaml", "..", "outside the environment's directory"),
])
def test_references_leaving_the_environment_directory_are_refused(referrer: str, ref: str,
                                                                   why: str) -> None:
    with pytest.raises(exceptions.InvalidTemplate) as caught:
        userenvs.resolve("my-env.yaml", referrer, ref)
    message = str(caught.value)
    assert "'my-env.yaml'" in message and repr(ref) in message and why in message
    assert "copy the file there" in message


def _reader(files: dict[str, str]) -> Any:
    return lambda path: files[path].encode() if path in files else None


def test_gather_collects_the_registry_templates_their_nested_ones_and_get_file() -> None:
    files = {
        "env.yaml": "resource_registry:\n  OS::A: nic/a.yaml\n  OS::B: OS::Heat::None\n"
                    "  resources:\n    r1:\n      OS::C: c.yaml\n"
                    "parameter_defaults: {X: 1}\n",
        "nic/a.yaml": "resources:\n  n: {type: ../nested/n.yaml}\n"
                      "  v: {type: OS::Heat::Value, properties: {value: {get_file: s.sh}}}\n",
        "nested/n.yaml": "resources: {}\n",
        "nic/s.sh": "echo hi\n",
        "c.yaml": "resources: {}\n",
        "unused.yaml": "resources: {}\n",
    }
    env = userenvs.gather("env.yaml", _reader(files))
    assert env.name == "env.yaml"
    assert sorted(env.files) == ["c.yaml", "env.yaml", "nested/n.yaml", "nic/a.yaml",
                                 "nic/s.sh"]
    assert userenvs.EnvironmentFile.from_json(env.to_json()) == env


@pytest.mark.parametrize(("files", "expected"), [
    ({}, "the file does not exist"),
    ({"env.yaml": "a: [\n"}, "YAML error at line 2"),
    ({"env.yaml": "- a\n"}, "must be a mapping, not list"),
    ({"env.yaml": "heat_template_version: rocky\nresources: {}\n"},
     "heat_template_version, resources is not a section of an environment file"),
    ({"env.yaml": "resource_registry: {OS::A: a.yaml}\n"}, "which does not exist at 'a.yaml'"),
    ({"env.yaml": "resource_registry: {OS::A: a.yaml}\n", "a.yaml": "x: [\n"},
     "a.yaml (referenced by env.yaml)"),
    ({"env.yaml": "resource_registry: {OS::A: a.yaml}\n",
      "a.yaml": "resources: {r: {type: ../../b.yaml}}\n"}, "(in 'a.yaml')"),
])
def test_gather_refuses_a_bad_environment(files: dict[str, str], expected: str) -> None:
    with pytest.raises(exceptions.InvalidTemplate, match=None) as caught:
        userenvs.gather("env.yaml", _reader(files))
    assert expected in str(caught.value)


def test_from_json_needs_every_referenced_file_among_the_given_ones() -> None:
    with pytest.raises(exceptions.InvalidTemplate, match="does not exist"):
        userenvs.EnvironmentFile.from_json(
            {"name": "e.yaml", "files": {"e.yaml": "resource_registry: {OS::A: a.yaml}\n"}})
    for bad in [None, [], {"name": "e.yaml"}, {"name": 1, "files": {}},
                {"name": "e.yaml", "files": {"e.yaml": 3}}]:
        with pytest.raises(exceptions.InvalidInput, match="An environment is"):
            userenvs.EnvironmentFile.from_json(bad)


def _entries(*paths: str) -> list[dict[str, str]]:
    return [{"path": p} for p in paths]


U1, U2, U3 = (f"user-environments/{n}/e{n}.yaml" for n in (1, 2, 3))


@pytest.mark.parametrize(("position", "expected"), [
    (None, [REG, "environments/a.yaml", U1, U2, U3]),
    (1, [REG, "environments/a.yaml", U3, U1, U2]),
    (2, [REG, "environments/a.yaml", U1, U3, U2]),
    (3, [REG, "environments/a.yaml", U1, U2, U3]),
])
def test_insert_places_user_environments_among_the_user_ones(position: int | None,
                                                             expected: list[str]) -> None:
    entries = _entries(REG, U1, "environments/a.yaml", U2)
    assert userenvs.insert(entries, [U3], position) == _entries(*expected)


@pytest.mark.parametrize("position", [0, 4, -1, True, "2"])
def test_insert_refuses_a_position_outside_the_user_environments(position: Any) -> None:
    with pytest.raises(exceptions.InvalidInput, match="give a number from 1 to 3"):
        userenvs.insert(_entries(REG, U1, U2), [U3], position, "oc")


def test_listing_numbers_the_environments_and_marks_the_user_ones() -> None:
    entries = [*_entries(REG), {"data": {"parameter_defaults": {}}}, *_entries(U1)]
    assert userenvs.listing(entries) == [
        {"order": 1, "path": REG, "user": False},
        {"order": 2, "path": "(inline data)", "user": False},
        {"order": 3, "path": U1, "user": True}]


def test_numbers_are_never_reused_and_stored_paths_keep_relative_references() -> None:
    assert userenvs.next_number([]) == 1
    assert userenvs.next_number(["user-environments/3/a.yaml", "user-environments/10/b/c",
                                 "user-environments.yaml", "x/user-environments/99/a"]) == 11
    env = userenvs.EnvironmentFile("e.yaml", {"e.yaml": b"a", "nic/x.yaml": b"b"})
    assert userenvs.stored(4, env) == ("user-environments/4/e.yaml", {
        "user-environments/4/e.yaml": b"a", "user-environments/4/nic/x.yaml": b"b"})
    assert userenvs.directory("user-environments/4/nic/x.yaml") == "user-environments/4/"
    assert userenvs.directory("environments/x.yaml") is None


def test_enabling_a_capability_keeps_the_user_environments_last() -> None:
    files = [REG, "environments/a.yaml", "environments/b.yaml", U1, U2]
    env = {"name": "oc", "environments": _entries(REG, U1, U2)}
    new = capabilities.update_environments(env, None, files, {"environments/a.yaml": True})
    assert new["environments"] == _entries(REG, "environments/a.yaml", U1, U2)
    purged = capabilities.update_environments(env, None, files, {"environments/b.yaml": True},
                                              purge=True)
    assert purged["environments"] == _entries("environments/b.yaml", U1, U2)


def test_plan_update_keeps_the_user_environments_last() -> None:
    old = {"name": "oc", "environments": _entries(REG, U1, "environments/a.yaml")}
    new_env = safe_yaml.dump_yaml({"environments": _entries(REG, "environments/n.yaml")})
    env, dropped = planmerge.merge_for_update(
        old, new_env, "oc", {REG, "environments/n.yaml", "environments/a.yaml", U1})
    assert env["environments"] == _entries(REG, "environments/n.yaml", "environments/a.yaml",
                                           U1)
    assert dropped == []


@pytest.mark.parametrize(("tree", "given", "expected"), [
    ({"network_data_default.yaml": b"n", "vip_data_default.yaml": b"v"}, {},
     {"network_data.yaml": b"n", "vip_data.yaml": b"v"}),
    ({"network_data.yaml": b"own", "network_data_default.yaml": b"n"}, {},
     {"network_data.yaml": b"own"}),
    ({"network_data_default.yaml": b"n"}, {"network_data.yaml": b"mine"},
     {"network_data.yaml": b"mine"}),
    ({"roles_data.yaml": b"r"}, {"roles_data.yaml": b"mine", "vip_data.yaml": b"v"},
     {"roles_data.yaml": b"mine", "vip_data.yaml": b"v"}),
    ({}, {}, {}),
])
def test_data_files_come_from_the_command_line_then_the_tree_then_its_defaults(
        tree: dict[str, bytes], given: dict[str, bytes], expected: dict[str, bytes]) -> None:
    result = roles.with_data_files(tree, given)
    assert {k: result[k] for k in ("roles_data.yaml", "network_data.yaml", "vip_data.yaml")
            if k in result} == expected


def test_only_the_three_data_files_can_be_given() -> None:
    with pytest.raises(exceptions.InvalidInput, match="'overcloud.yaml' is not a data file"):
        roles.with_data_files({}, {"overcloud.yaml": b""})


@pytest.mark.parametrize(("vips", "expected"), [
    ({"network": "ctlplane"}, "must be a list"),
    ([{"name": "x"}], "VIP entry 1 needs 'network'"),
    ([{"network": "ctlplane"}, {"network": "external", "ip": "1.2.3.4"}],
     "VIP entry 2: unknown key 'ip'"),
    ([{"network": "ctlplane", "ip_address": "10.0.0.300"}], "is not an IP address"),
    ([{"network": "ctlplane", "dns_name": 3}], "dns_name must be a string"),
])
def test_bad_vip_data_is_refused(vips: Any, expected: str) -> None:
    with pytest.raises(exceptions.InvalidNetworks) as caught:
        roles.validate_vips(vips)
    assert expected in str(caught.value) and "vip_data.yaml" in str(caught.value)


def test_tht_18_vip_data_default_is_valid() -> None:
    roles.validate_vips([{"network": "ctlplane", "dns_name": "overcloud"},
                         {"network": "internal_api", "ip_address": "172.17.0.5",
                          "subnet": "internal_api_subnet"}])
