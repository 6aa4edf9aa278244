"""The real tripleo-heat-templates trees, fetched from PyPI sdists by tools/fetch_tht.py."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FETCHER = ROOT / "tools" / "fetch_tht.py"


def fetch_tree_dir(version: str) -> pathlib.Path:
    """The unpacked tree of ``version`` (cached); FAILS the test when it cannot be had."""
    command = [sys.executable, str(FETCHER), version]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600,
                            env=dict(os.environ))
    if result.returncode != 0:
        pytest.fail(
            f"Could not fetch tripleo-heat-templates {version} with {' '.join(command)}: "
            f"{result.stderr.strip()}. These tests need PyPI (or a cached tree in "
            "$TRIPLEO_FLOW_THT_CACHE).",
            pytrace=False,
        )
    return pathlib.Path(result.stdout.strip().splitlines()[-1])


def fetch_tree(version: str) -> dict[str, bytes]:
    """Every file of the tree of ``version``, path -> content."""
    tree = fetch_tree_dir(version)
    return {
        path.relative_to(tree).as_posix(): path.read_bytes()
        for path in tree.rglob("*")
        if path.is_file() and not path.name.startswith(".tripleo-flow")
    }


#: THT 18.0.0 on pre-provisioned servers, ctlplane only: the shape of what the provision
#: steps generate (networks, VIP and ports already exist).
DEPLOYED_SERVERS_18: dict[str, Any] = {
    "resource_registry": {
        "OS::TripleO::DeployedServer::ControlPlanePort":
            "deployed-server/deployed-neutron-port.yaml",
        "OS::TripleO::Network::Ports::ControlPlaneVipPort":
            "network/ports/deployed_vip_ctlplane.yaml",
        "OS::TripleO::Network": "network/deployed_networks.yaml",
    },
    "parameter_defaults": {
        "ControllerCount": 1, "ComputeCount": 1,
        "DeployedNetworkEnvironment": {"net_attributes_map": {}, "net_cidr_map": {},
                                       "net_ip_version_map": {}},
    },
}
#: THT 12.1.0 (Ussuri) on pre-provisioned servers, ctlplane only.
DEPLOYED_SERVERS_12: dict[str, Any] = {
    "resource_registry": {
        "OS::TripleO::DeployedServer::ControlPlanePort":
            "deployed-server/deployed-neutron-port.yaml",
        "OS::TripleO::Network::Ports::ControlPlaneVipPort":
            "deployed-server/deployed-neutron-port.yaml",
    },
    "parameter_defaults": {"ControllerCount": 1, "ComputeCount": 1},
}
ENVIRONMENT_NAME = "deployed-servers-environment.yaml"


def plan_with_environment(client: Any, version: str, environment: dict[str, Any],
                          plan: str = "overcloud") -> tuple[dict[str, bytes], dict[str, Any]]:
    """Create ``plan`` from THT ``version`` with ``environment`` added last (a file at the
    tree's root); return its files (rendered ones included) and its plan-environment."""
    from tripleo_flow.common import safe_yaml
    from tripleo_flow.core.plan import rendering
    from tripleo_flow.plans.plan import PlanRepository

    client.plans.create(plan, fetch_tree_dir(version))
    repo = PlanRepository(client._session.store)
    repo.store.put_object(plan, ENVIRONMENT_NAME, safe_yaml.dump_yaml(environment))
    env = repo.environment(plan)
    env["environments"] = [*env["environments"], {"path": ENVIRONMENT_NAME}]
    files = dict(repo.read_all(plan))
    files.update(rendering.render_plan(files))
    return files, env
