"""Table-driven tests of tripleo_flow.core.plan.rendering."""

from __future__ import annotations

import copy

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.core.plan import rendering

ROLES = b"""
- name: Controller
  tags: [primary, controller]
  deprecated_nic_config_name: controller-legacy.yaml
- name: Compute
"""

NETWORKS = b"""
- name: InternalApi
  name_lower: internal_api
  vlan: 20
- name: Storage
- name: Management
  enabled: false
- name: Tenant
  enabled: true
"""


def plan(**extra: bytes) -> dict[str, bytes]:
    files = {"roles_data.yaml": ROLES, "network_data.yaml": NETWORKS}
    files.update({k.replace("__", "/").replace("_DOT_", "."): v for k, v in extra.items()})
    return files


@pytest.mark.parametrize(
    ("source", "role", "expected"),
    [
        ("puppet/role.role.j2.yaml", {"name": "Controller"}, "puppet/controller-role.yaml"),
        ("common/services/role.role.j2.yaml", {"name": "CephStorage"},
         "common/services/cephstorage-role.yaml"),
        ("extra.role.j2.yaml", {"name": "Compute"}, "compute-extra.yaml"),
        ("network/config/bond/role.role.j2.yaml", {"name": "Compute"},
         "network/config/bond/compute.yaml"),
        ("network/config/bond/role.role.j2.yaml",
         {"name": "Compute", "deprecated_nic_config_name": "compute-dvr.yaml"},
         "network/config/bond/compute-dvr.yaml"),
    ],
)
def test_role_output_path(source: str, role: dict, expected: str) -> None:
    assert rendering.role_output_path(source, role) == expected


@pytest.mark.parametrize(
    ("source", "name_lower", "expected"),
    [
        ("network/network.network.j2.yaml", "internal_api", "network/internal_api.yaml"),
        ("network/network_v6.network.j2.yaml", "storage", "network/storage_v6.yaml"),
        ("network/ports/port.network.j2.yaml", "tenant", "network/ports/tenant.yaml"),
        ("network/ports/port_from_pool_v6.network.j2.yaml", "tenant",
         "network/ports/tenant_from_pool_v6.yaml"),
        ("network/ports/external_resource_port.network.j2.yaml", "storage",
         "network/ports/external_resource_storage.yaml"),
    ],
)
def test_network_output_path(source: str, name_lower: str, expected: str) -> None:
    assert rendering.network_output_path(source, {"name_lower": name_lower}) == expected


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # no roles file: TripleO renders nothing
        ({"overcloud.j2.yaml": b"a: 1\n"}, set()),
        (plan(), set()),
        (plan(overcloud_DOT_j2_DOT_yaml=b"a: 1\n"), {"overcloud.yaml"}),
        (plan(puppet__role_DOT_role_DOT_j2_DOT_yaml=b"name: {{role.name}}\n"),
         {"puppet/controller-role.yaml", "puppet/compute-role.yaml"}),
        # disabled networks are skipped; missing 'enabled' means enabled
        (plan(network__network_DOT_network_DOT_j2_DOT_yaml=b"n: {{network.name}}\n"),
         {"network/internal_api.yaml", "network/storage.yaml", "network/tenant.yaml"}),
        # a .j2 include file and plain YAML are not outputs; hidden files are skipped
        (plan(common__steps_DOT_j2=b"x", a_DOT_yaml=b"a: 1",
              _DOT_git__x_DOT_j2_DOT_yaml=b"a: 1"), set()),
        # excluded outputs are not rendered
        (plan(puppet__role_DOT_role_DOT_j2_DOT_yaml=b"name: {{role.name}}\n",
              j2_excludes_DOT_yaml=b"name:\n  - puppet/compute-role.yaml\n  - None\n"),
         {"puppet/controller-role.yaml"}),
    ],
)
def test_render_plan_outputs(files: dict[str, bytes], expected: set[str]) -> None:
    assert set(rendering.render_plan(files)) == expected


@pytest.mark.parametrize(
    ("path", "template", "expected"),
    [
        # role mapping for templates that read role attributes
        ("puppet/role.role.j2.yaml", b"n: {{ role.name }}\nt: {{ role.tags | default([]) }}\n",
         {"puppet/controller-role.yaml": {"n": "Controller", "t": ["primary", "controller"]},
          "puppet/compute-role.yaml": {"n": "Compute", "t": []}}),
        # legacy templates get the role name
        ("legacy.role.j2.yaml", b"n: {{role}}\n",
         {"controller-legacy.yaml": {"n": "Controller"}, "compute-legacy.yaml": {"n": "Compute"}}),
        # role templates also see every network
        ("r.role.j2.yaml", b"nets: {{ networks | map(attribute='name') | list }}\n"
                           b"who: {{ role['name'] }}\n",
         {"controller-r.yaml": {"nets": ["InternalApi", "Storage", "Management", "Tenant"],
                                "who": "Controller"},
          "compute-r.yaml": {"nets": ["InternalApi", "Storage", "Management", "Tenant"],
                             "who": "Compute"}}),
        # network templates get name_lower defaulted
        ("my-network.network.j2.yaml", b"x: {{ network.name_lower }}\n",
         {"my-internal_api.yaml": {"x": "internal_api"}, "my-storage.yaml": {"x": "storage"},
          "my-tenant.yaml": {"x": "tenant"}}),
        # plain templates get all roles and all networks, with idx and name_lower
        ("all.j2.yaml",
         b"roles: {{ roles | map(attribute='name') | list }}\n"
         b"nets: [{% for n in networks %}'{{n.idx}}-{{n.name_lower}}-{{n.enabled|default(true)}}'"
         b"{% if not loop.last %}, {% endif %}{% endfor %}]\n",
         {"all.yaml": {"roles": ["Controller", "Compute"],
                       "nets": ["0-internal_api-True", "1-storage-True",
                                "2-management-False", "3-tenant-True"]}}),
    ],
)
def test_render_plan_variables(path: str, template: bytes, expected: dict) -> None:
    files = plan()
    files[path] = template
    rendered = rendering.render_plan(files)
    assert {k: yaml.safe_load(v) for k, v in rendered.items()} == expected


@pytest.mark.parametrize(
    ("extra", "output", "expected"),
    [
        # the template's own directory first
        ({"d/inc.j2": b"local", "inc.j2": b"root", "d/t.j2.yaml": b"v: {% include 'inc.j2' %}"},
         "d/t.yaml", {"v": "local"}),
        # then the plan root
        ({"inc.j2": b"root", "d/t.j2.yaml": b"v: {% include 'inc.j2' %}"},
         "d/t.yaml", {"v": "root"}),
        # paths from the root work from anywhere
        ({"lib/m.j2": b"{% macro hi(n) %}hi-{{n}}{% endmacro %}",
          "d/e/t.j2.yaml": b"{% import 'lib/m.j2' as m %}v: {{ m.hi(roles[0].name) }}"},
         "d/e/t.yaml", {"v": "hi-Controller"}),
    ],
)
def test_includes_resolve_from_plan_files(extra: dict, output: str, expected: dict) -> None:
    files = plan()
    files.update(extra)
    assert yaml.safe_load(rendering.render_plan(files)[output]) == expected


@pytest.mark.parametrize(
    ("extra", "path", "fragments"),
    [
        ({"roles_data.yaml": b"- name: A\n  tags: [a\n"}, "roles_data.yaml", ["line"]),
        ({"roles_data.yaml": b"name: A\n"}, "roles_data.yaml", ["list of roles"]),
        ({"roles_data.yaml": b"- tags: []\n"}, "roles_data.yaml", ["entry 1", "'name'"]),
        ({"network_data.yaml": b"- name: [\n"}, "network_data.yaml", ["line"]),
        ({"network_data.yaml": b"- 3\n"}, "network_data.yaml", ["entry 1", "not a mapping"]),
        ({"j2_excludes.yaml": b"name: puppet/x.yaml\n"}, "j2_excludes.yaml", ["list"]),
        ({"t.j2.yaml": b"a: 1\n\n{% if %}\n"}, "t.j2.yaml", ["syntax error", "line 3"]),
        ({"t.j2.yaml": b"a: {% include 'nope.j2' %}\n"}, "t.j2.yaml", ["'nope.j2'", "not found"]),
        ({"d/t.j2.yaml": b"a: {% include 'inc.j2' %}\n", "d/inc.j2": b"{% for %}"},
         "d/t.j2.yaml", ["syntax error in d/inc.j2", "line 1"]),
        ({"t.j2.yaml": b"a: {{ raise('no way') }}\n"}, "t.j2.yaml", ["no way"]),
        ({"t.j2.yaml": b"a: {{ roles[0].name + 3 }}\n"}, "t.j2.yaml", ["TypeError"]),
        ({"t.j2.yaml": b"a: \xff\n"}, "t.j2.yaml", ["UTF-8"]),
        # rendered output that is not YAML names the output and its source
        ({"x.role.j2.yaml": b"a: [{{ role.name }}\n"}, "controller-x.yaml",
         ["rendered from x.role.j2.yaml", "YAML", "line"]),
        ({"net.network.j2.yaml": b"a: 1\n"}, "net.network.j2.yaml", ["must contain 'network'"]),
        ({"ports/p.network.j2.yaml": b"a: 1\n"}, "ports/p.network.j2.yaml",
         ["must contain 'port'"]),
        # two templates rendering the same file
        ({"a.j2.yaml": b"a: 1\n", "a.role.j2.yaml": b"{{role}}: 1\n",
          "controller-a.j2.yaml": b"b: 1\n"}, "controller-a.j2.yaml", ["controller-a.yaml"]),
    ],
)
def test_render_plan_errors(extra: dict, path: str, fragments: list[str]) -> None:
    files = plan()
    files.update(extra)
    with pytest.raises(exceptions.InvalidTemplate) as info:
        rendering.render_plan(files)
    assert info.value.path == path
    for fragment in fragments:
        assert fragment in str(info.value)


def test_templates_cannot_change_what_the_next_one_sees() -> None:
    files = plan(
        a_DOT_j2_DOT_yaml=b"{% set _ = roles.pop() %}{% set _ = networks.clear() %}a: 1\n",
        b_DOT_j2_DOT_yaml=b"r: {{ roles | length }}\nn: {{ networks | length }}\n",
    )
    before = copy.deepcopy(files)
    with pytest.raises(exceptions.InvalidTemplate, match="'pop' of a 'list'"):
        rendering.render_plan(files)
    del files["a.j2.yaml"]
    rendered = rendering.render_plan(files)
    del before["a.j2.yaml"]
    assert files == before
    assert yaml.safe_load(rendered["b.yaml"]) == {"r": 2, "n": 4}


def test_yaml_valid_only_for_pure_python_parser_is_accepted() -> None:
    # libyaml rejects this flow mapping; PyYAML (and real THT templates) accept it
    files = plan(t_DOT_j2_DOT_yaml=b"k: {get_attr:[Server, name]}\n")
    assert yaml.safe_load(rendering.render_plan(files)["t.yaml"]) == {
        "k": {"get_attr": ["Server", "name"]}
    }


@pytest.mark.parametrize(
    ("files", "roles", "networks", "enabled"),
    [
        ({}, [], [], []),
        ({"roles_data.yaml": b"", "network_data.yaml": b"# none\n"}, [], [], []),
        (plan(), ["Controller", "Compute"], ["InternalApi", "Storage", "Management", "Tenant"],
         ["InternalApi", "Storage", "Tenant"]),
    ],
)
def test_load_roles_and_networks(files: dict, roles: list, networks: list, enabled: list) -> None:
    assert [r["name"] for r in rendering.load_roles(files)] == roles
    loaded = rendering.load_networks(files)
    assert [n["name"] for n in loaded] == networks
    assert [n["name"] for n in rendering.enabled_networks(loaded)] == enabled


def test_custom_data_file_names() -> None:
    files = {
        "my_roles.yaml": b"- name: Solo\n",
        "nets/default.yaml": b"- name: Ext\n",
        "network.network.j2.yaml": b"r: {{ network.name }}\n",
        "s.role.j2.yaml": b"r: {{ role.name }}\n",
    }
    rendered = rendering.render_plan(
        files, roles_file="my_roles.yaml", networks_file="nets/default.yaml"
    )
    assert set(rendered) == {"ext.yaml", "solo-s.yaml"}
