"""The sample plan shipped in tripleo_flow/sample_plan renders and validates."""

from __future__ import annotations

import pathlib
import posixpath
from typing import Any

import pytest
import yaml

from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import capabilities, planenv, rendering, roles

SAMPLE = pathlib.Path(__file__).resolve().parents[3] / "tripleo_flow" / "sample_plan"

#: Resource types that work in a Heat with no other OpenStack service.
STANDALONE_TYPES = {
    "OS::Heat::None", "OS::Heat::Value", "OS::Heat::ResourceGroup",
    "OS::Heat::StructuredConfig", "OS::Heat::StructuredDeployment",
    "OS::Heat::SoftwareConfig", "OS::Heat::SoftwareDeployment", "OS::Heat::RandomString",
}


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return {
        path.relative_to(SAMPLE).as_posix(): path.read_bytes()
        for path in SAMPLE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.fixture(scope="module")
def rendered(files: dict[str, bytes]) -> dict[str, Any]:
    return {path: yaml.safe_load(data) for path, data in rendering.render_plan(files).items()}


def test_sample_is_small(files: dict[str, bytes]) -> None:
    assert len(files) < 20


def test_rendered_files(rendered: dict[str, Any]) -> None:
    assert set(rendered) == {
        "overcloud.yaml",
        "overcloud-resource-registry-puppet.yaml",
        "puppet/controller-role.yaml",
        "puppet/compute-role.yaml",
        "network/internal_api.yaml",
        "network/storage.yaml",
        "environments/network-isolation.yaml",
    }


def test_roles_and_networks_validate(files: dict[str, bytes]) -> None:
    role_list = rendering.load_roles(files)
    roles.validate_roles(role_list, require_primary_tag=True)
    assert [r["name"] for r in role_list] == ["Controller", "Compute"]
    assert roles.primary_role(role_list)["name"] == "Controller"
    network_list = rendering.load_networks(files)
    roles.validate_networks(network_list)
    assert [n["name"] for n in rendering.enabled_networks(network_list)] == [
        "InternalApi", "Storage"]


def test_plan_environment_and_capabilities(files: dict[str, bytes]) -> None:
    env = planenv.parse_plan_environment(files["plan-environment.yaml"])
    assert env["template"] == "overcloud.yaml"
    cap_map = safe_yaml.load_yaml(files["capabilities-map.yaml"], "capabilities-map.yaml")
    caps = capabilities.get_capabilities(cap_map, env, files)
    enabled = {
        e["file"]: e["enabled"]
        for topic in caps.values() for g in topic["environment_groups"] for e in g["environments"]
    }
    assert enabled == {
        "overcloud-resource-registry-puppet.yaml": True,
        "environments/network-isolation.yaml": False,
        "environments/network-environment.yaml": False,
        "environments/debug.yaml": False,
    }
    updated = capabilities.update_environments(
        env, cap_map, files, {"environments/network-environment.yaml": True})
    assert [e["path"] for e in updated["environments"]] == [
        "overcloud-resource-registry-puppet.yaml",
        "environments/network-isolation.yaml",
        "environments/network-environment.yaml",
    ]
    assert env == planenv.default_plan_environment(
        "overcloud", env["description"], plan_files=files
    ) | {"parameter_defaults": env["parameter_defaults"]}


def _registry(rendered: dict[str, Any], env_path: str) -> dict[str, str]:
    base = posixpath.dirname(env_path)
    mapping = {}
    for key, target in rendered[env_path]["resource_registry"].items():
        if target.endswith(".yaml"):
            target = posixpath.normpath(posixpath.join(base, target))
        mapping[key] = target
    return mapping


@pytest.mark.parametrize("isolated", [False, True])
def test_every_resource_type_resolves(
    files: dict[str, bytes], rendered: dict[str, Any], isolated: bool
) -> None:
    registry = _registry(rendered, "overcloud-resource-registry-puppet.yaml")
    if isolated:
        registry.update(_registry(rendered, "environments/network-isolation.yaml"))
    templates = {p: yaml.safe_load(d) for p, d in files.items()
                 if p.endswith(".yaml") and not p.endswith(".j2.yaml")}
    templates.update(rendered)
    seen: set[str] = set()

    def walk(path: str) -> None:
        if path in seen:
            return
        seen.add(path)
        template = templates[path]
        assert template["heat_template_version"] == "wallaby", path
        for name, resource in template.get("resources", {}).items():
            kinds = [resource["type"]]
            if resource["type"] == "OS::Heat::ResourceGroup":
                kinds.append(resource["properties"]["resource_def"]["type"])
            for kind in kinds:
                while kind in registry:
                    kind = registry[kind]
                if kind.endswith(".yaml"):
                    assert kind in templates, f"{path}: {name} -> {kind}"
                    walk(kind)
                else:
                    assert kind in STANDALONE_TYPES, f"{path}: {name} has type {kind}"

    walk("overcloud.yaml")
    expected = {"overcloud.yaml", "puppet/controller-role.yaml", "puppet/compute-role.yaml",
                "deployed-server/node.yaml", "deployed-server/deployed-server.yaml"}
    if isolated:
        expected |= {"network/internal_api.yaml", "network/storage.yaml"}
    assert seen == expected


def test_deployments_do_not_wait_for_signals(rendered: dict[str, Any],
                                             files: dict[str, bytes]) -> None:
    node = yaml.safe_load(files["deployed-server/node.yaml"])
    deployment = node["resources"]["Deployment"]
    assert deployment["type"] == "OS::Heat::StructuredDeployment"
    assert deployment["properties"]["signal_transport"] == "NO_SIGNAL"
    outputs = rendered["overcloud.yaml"]["outputs"]
    assert {"RoleData", "ServerIdData", "RoleNames"} <= set(outputs)
    assert outputs["RoleNames"]["value"] == ["Controller", "Compute"]
    role_data = rendered["puppet/controller-role.yaml"]["outputs"]["role_data"]["value"]
    assert role_data["role_name"] == "Controller"


def test_enabled_services_are_named_as_tht_names_them(rendered: dict[str, Any]) -> None:
    """The inventory's service groups come from EnabledServices: THT's service names."""
    services = rendered["overcloud.yaml"]["outputs"]["EnabledServices"]["value"]
    assert services == {"Controller": ["keystone", "mysql", "nova_api"],
                        "Compute": ["nova_compute", "nova_libvirt"]}
