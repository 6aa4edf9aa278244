"""Small template trees written by tests (path -> text)."""

from __future__ import annotations

import textwrap
from pathlib import Path

ROLES = textwrap.dedent("""\
    - name: Controller
      tags: [primary, controller]
      CountDefault: 1
      ServicesDefault: [OS::TripleO::Services::Keystone]
    - name: Compute
      CountDefault: 2
      ServicesDefault: [OS::TripleO::Services::NovaCompute]
    """)

NETWORKS = textwrap.dedent("""\
    - name: InternalApi
      name_lower: internal_api
      vip: true
      ip_subnet: 172.16.2.0/24
    - name: Storage
      ip_subnet: 172.16.1.0/24
    """)

OVERCLOUD_J2 = textwrap.dedent("""\
    heat_template_version: wallaby
    description: test overcloud
    resources:
    {% for role in roles %}
      {{role.name}}:
        type: OS::Heat::None
    {% endfor %}
    """)

ROLE_J2 = textwrap.dedent("""\
    heat_template_version: wallaby
    description: role {{role.name}}
    parameters:
      {{role.name}}Count:
        type: number
        default: {{role.CountDefault|default(0)}}
    resources: {}
    """)

NETWORK_J2 = textwrap.dedent("""\
    heat_template_version: wallaby
    description: network {{network.name}}
    resources: {}
    """)

CAPABILITIES = textwrap.dedent("""\
    topics:
      - title: Basic
        description: basic things
        environment_groups:
          - title: Storage
            description: storage backends
            environments:
              - file: environments/storage.yaml
                title: Storage
                description: enables storage
                requires: [environments/base.yaml]
    """)


def basic_tree() -> dict[str, str]:
    return {
        "overcloud.j2.yaml": OVERCLOUD_J2,
        "puppet/role.role.j2.yaml": ROLE_J2,
        "network/network.network.j2.yaml": NETWORK_J2,
        "roles_data.yaml": ROLES,
        "network_data.yaml": NETWORKS,
        "capabilities-map.yaml": CAPABILITIES,
        "overcloud-resource-registry-puppet.yaml": "resource_registry: {}\n",
        "environments/base.yaml": "parameter_defaults: {}\n",
        "environments/storage.yaml": "parameter_defaults: {StorageThing: 1}\n",
        "environments/other.yaml": "parameter_defaults: {Other: 1}\n",
        "README.txt": "not yaml: [\n",
    }


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
