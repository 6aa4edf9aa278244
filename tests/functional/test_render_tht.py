"""Render the real tripleo-heat-templates trees (12.1.0 and 18.0.0).

The trees come from PyPI sdists through ``tools/fetch_tht.py`` (cached in
``$TRIPLEO_FLOW_THT_CACHE`` or ``~/.cache/tripleo-flow/tht``).  Without the
network and without a cached tree these tests fail with the fetcher's message.
"""

from __future__ import annotations

import hashlib
import pathlib
import posixpath
import subprocess
import sys
from typing import Any

import pytest

from tests.tht import FETCHER, fetch_tree
from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import capabilities, planenv, rendering, roles

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def tht12() -> dict[str, bytes]:
    return fetch_tree("12.1.0")


@pytest.fixture(scope="module")
def tht18() -> dict[str, bytes]:
    return fetch_tree("18.0.0")


@pytest.fixture(scope="module")
def rendered12(tht12: dict[str, bytes]) -> dict[str, bytes]:
    return rendering.render_plan(tht12)


def expected_outputs(files: dict[str, bytes], networks_file: str) -> set[str]:
    """What TripleO renders, derived independently from the tree's own data."""
    role_list = safe_yaml.load_yaml(files["roles_data.yaml"], "roles_data.yaml")
    net_list = safe_yaml.load_yaml(files[networks_file], networks_file) or []
    enabled = [n for n in net_list if n.get("enabled", True) is not False]
    excludes = set(safe_yaml.load_yaml(files["j2_excludes.yaml"], "j2_excludes.yaml")["name"])
    expected = set()
    for path in files:
        directory, base = posixpath.split(path)
        if path.endswith(".role.j2.yaml"):
            stem = base[: -len(".role.j2.yaml")]
            for role in role_list:
                lower = role["name"].lower()
                if "network/config" in directory:
                    name = role.get("deprecated_nic_config_name") or f"{lower}.yaml"
                else:
                    name = f"{lower}-{stem}.yaml"
                expected.add(posixpath.join(directory, name))
        elif path.endswith(".network.j2.yaml"):
            stem = base[: -len(".network.j2.yaml")]
            token = "port" if directory.endswith("ports") else "network"
            for net in enabled:
                lower = net.get("name_lower") or net["name"].lower()
                expected.add(posixpath.join(directory, stem.replace(token, lower) + ".yaml"))
        elif path.endswith(".j2.yaml"):
            expected.add(path[: -len(".j2.yaml")] + ".yaml")
    return expected - excludes


def test_12_renders_every_template(tht12: dict[str, bytes], rendered12: dict[str, bytes]) -> None:
    assert set(rendered12) == expected_outputs(tht12, "network_data.yaml")
    for path, data in rendered12.items():
        safe_yaml.load_yaml(data, path)  # every output is YAML


def test_12_role_files_for_every_role(rendered12: dict[str, bytes],
                                      tht12: dict[str, bytes]) -> None:
    role_list = rendering.load_roles(tht12)
    assert [r["name"] for r in role_list] == [
        "Controller", "Compute", "BlockStorage", "ObjectStorage", "CephStorage"]
    for role in role_list:
        lower = role["name"].lower()
        template = safe_yaml.load_yaml(rendered12[f"puppet/{lower}-role.yaml"], lower)
        server = role.get("deprecated_server_resource_name", role["name"])
        assert server in template["resources"], role["name"]
        assert f"common/services/{lower}-role.yaml" in rendered12
        nic = role.get("deprecated_nic_config_name", f"{lower}.yaml")
        assert f"network/config/bond-with-vlans/{nic}" in rendered12
    assert "network/config/bond-with-vlans/compute.yaml" in rendered12
    assert "network/config/bond-with-vlans/swift-storage.yaml" in rendered12


def test_12_network_files_for_enabled_networks(rendered12: dict[str, bytes],
                                               tht12: dict[str, bytes]) -> None:
    networks = rendering.enabled_networks(rendering.load_networks(tht12))
    assert {n["name_lower"] for n in networks} == {
        "storage", "storage_mgmt", "internal_api", "tenant", "external", "management"}
    for net in networks:
        lower = net["name_lower"]
        for path in (f"network/{lower}.yaml", f"network/{lower}_v6.yaml",
                     f"network/ports/{lower}.yaml", f"network/ports/{lower}_from_pool.yaml",
                     f"network/ports/external_resource_{lower}.yaml"):
            assert path in rendered12
        template = safe_yaml.load_yaml(rendered12[f"network/{lower}.yaml"], lower)
        assert f"{net['name']}NetCidr" in template["parameters"]


def test_12_overcloud_yaml(rendered12: dict[str, bytes]) -> None:
    overcloud = safe_yaml.load_yaml(rendered12["overcloud.yaml"], "overcloud.yaml")
    assert "heat_template_version" in overcloud
    for name in ("Controller", "Compute", "BlockStorage", "ObjectStorage", "CephStorage"):
        assert f"{name}Count" in overcloud["parameters"]
        assert name in overcloud["resources"]
    registry = safe_yaml.load_yaml(rendered12["overcloud-resource-registry-puppet.yaml"], "r")
    assert registry["resource_registry"]["OS::TripleO::Controller"] == (
        "puppet/controller-role.yaml")


def test_12_disabled_network_is_not_rendered(tht12: dict[str, bytes]) -> None:
    files = dict(tht12)
    files["network_data.yaml"] = files["network_data.yaml"].replace(
        b"- name: Management\n", b"- name: Management\n  enabled: false\n", 1
    ).replace(b"  enabled: true\n", b"", 1)
    rendered = rendering.render_plan(files)
    assert "network/storage.yaml" in rendered
    assert not [p for p in rendered if "management" in p]


def test_12_roles_networks_validate(tht12: dict[str, bytes]) -> None:
    roles.validate_roles(rendering.load_roles(tht12), require_primary_tag=True)
    for path in sorted(p for p in tht12 if p.startswith("roles/") and p.endswith(".yaml")):
        roles.validate_roles(rendering.load_roles(tht12, path))
    for path in sorted(p for p in tht12 if p.startswith("network_data") and p.endswith(".yaml")):
        roles.validate_networks(rendering.load_networks(tht12, path))


def test_12_capabilities(tht12: dict[str, bytes]) -> None:
    cap_map = safe_yaml.load_yaml(tht12["capabilities-map.yaml"], "capabilities-map.yaml")
    env = planenv.parse_plan_environment(tht12["plan-environment.yaml"])
    assert env["environments"] == [{"path": "overcloud-resource-registry-puppet.yaml"}]
    caps = capabilities.get_capabilities(cap_map, env, tht12)
    assert list(caps)[0] == "General Deployment Options" and list(caps)[-1] == "Other"
    enabled = {
        e["file"]: e["enabled"]
        for topic in caps.values() for g in topic["environment_groups"] for e in g["environments"]
    }
    assert enabled["overcloud-resource-registry-puppet.yaml"] is True
    assert enabled["environments/network-isolation.yaml"] is False  # rendered from its j2
    assert sum(enabled.values()) == 1
    other = {g["title"] for g in caps["Other"]["environment_groups"]}
    assert "environments/docker-ha.yaml" not in other  # in the map
    assert "environments/disable-telemetry.yaml" in other  # not in the map
    assert not [p for p in other if p.endswith(".j2.yaml")]

    updated = capabilities.update_environments(
        env, cap_map, tht12, {"environments/net-bond-with-vlans.yaml": True})
    assert [e["path"] for e in updated["environments"]] == [
        "overcloud-resource-registry-puppet.yaml",
        "environments/network-isolation.yaml",
        "environments/net-bond-with-vlans.yaml",
    ]
    # the 12.1.0 map lists a file the tree does not ship
    with pytest.raises(exceptions.UnknownEnvironment):
        capabilities.update_environments(
            env, cap_map, tht12, {"environments/containers-default-parameters.yaml": True})


@pytest.mark.parametrize(
    "networks_file",
    ["network_data_default.yaml", "network-data-samples/default-network-isolation.yaml"],
)
def test_18_renders(tht18: dict[str, bytes], networks_file: str) -> None:
    assert "network_data.yaml" not in tht18 and "capabilities-map.yaml" not in tht18
    rendered = rendering.render_plan(tht18, networks_file=networks_file)
    assert set(rendered) == expected_outputs(tht18, networks_file)
    assert "overcloud.yaml" in rendered
    role_names = [r["name"] for r in rendering.load_roles(tht18)]
    for name in role_names:
        assert f"common/services/{name.lower()}-role.yaml" in rendered
    networks: list[Any] = rendering.load_networks(tht18, networks_file)
    roles.validate_networks(networks)
    roles.validate_roles(rendering.load_roles(tht18))
    ports = {p for p in rendered if p.startswith("network/ports/")}
    per_network = {f"network/ports/{kind}.yaml".replace("NET", net["name_lower"])
                   for net in networks
                   for kind in ("deployed_NET", "deployed_vip_NET", "NET_from_pool")}
    assert per_network <= ports
    assert len(ports - per_network) == 4 + len(networks)  # net_*map*.yaml, NET_from_pool_v6


def digest(rendered: dict[str, bytes]) -> str:
    hashed = hashlib.sha256()
    for path in sorted(rendered):
        hashed.update(path.encode() + b"\0" + rendered[path] + b"\0")
    return hashed.hexdigest()


@pytest.mark.parametrize(("version", "networks_file", "count", "expected"), [
    ("12.1.0", "network_data.yaml", 144,
     "97fc12b869252198f01d5ae1f09df9321b8f43a5fca3c56b0fdf89b96cf40331"),
    ("18.0.0", "network_data_default.yaml", 50,
     "957e4e7206a37e0cb9a2a1e6ba3d022306b84c4e143ef7b73a5c8f8d39b3f42a"),
    ("18.0.0", "network-data-samples/default-network-isolation.yaml", 70,
     "4e0eaf29f05d909e8d82b1d25a22efaaca1655e3b86622bcca3d00be6ac22169"),
])
def test_sandboxed_rendering_is_byte_identical(version: str, networks_file: str, count: int,
                                               expected: str) -> None:
    """The digests were taken with plain jinja2, before templates ran in the sandbox."""
    rendered = rendering.render_plan(fetch_tree(version), networks_file=networks_file)
    assert len(rendered) == count
    assert digest(rendered) == expected


def test_fetcher_is_idempotent(tht12: dict[str, bytes]) -> None:
    command = [sys.executable, str(FETCHER), "12.1.0"]
    first = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    tree = pathlib.Path(first.strip())
    marker = tree / ".tripleo-flow-complete"
    stamp = marker.stat().st_mtime_ns
    second = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert first == second
    assert marker.stat().st_mtime_ns == stamp  # nothing fetched or unpacked again
    assert (tree / "overcloud.j2.yaml").read_bytes() == tht12["overcloud.j2.yaml"]
