"""bench/config_download.py grows a real deploy's outputs: grown servers keep the first
compute's software deployments and network config (the per-node cost would be
understated without them).  Table-driven, no mocks."""

from __future__ import annotations

from typing import Any

import pytest

from bench.config_download import grown
from tripleo_flow.core.deploy import config_download as cd


def saved() -> dict[str, Any]:
    return {
        "outputs": {
            "RoleNames": ["Controller", "Compute"],
            "RoleData": {"Controller": {}, "Compute": {}},
            "RoleNetHostnameMap": {
                "Controller": {"ctlplane": ["controller-0.ctlplane.localdomain"]},
                "Compute": {"ctlplane": ["compute-0.ctlplane.localdomain"]}},
            "RoleNetIpMap": {"Controller": {"ctlplane": ["192.168.24.10"]},
                             "Compute": {"ctlplane": ["192.168.24.20"]}},
            "ServerIdData": {"server_ids": {"Controller": ["c-00000000"],
                                            "Compute": ["n-00000000"]}},
            "AnsibleHostVarsMap": {"Controller": {"controller-0": {}},
                                   "Compute": {"compute-0": {"fqdn": "compute-0.local"}}},
            "HostnameNetworkConfigMap": {"controller-0": "cfg-c", "compute-0": "cfg-n"},
        },
        "deployments": {
            "controller-0": [],
            "compute-0": [{"name": "ComputeExtraDeployment", "id": "d-1", "config": "#!/bin/sh",
                           "group": "script", "inputs": {"hostname": "compute-0", "n": 1}}]},
        "network_configs": {"cfg-c": "#!/bin/sh\n", "cfg-n": "#!/bin/bash\n"},
    }


@pytest.mark.parametrize("nodes,computes", [(10, 9), (100, 99)])
def test_grown_servers_have_the_first_compute_s_deployments(nodes: int, computes: int) -> None:
    outputs, deployments = grown(saved(), nodes)
    grown_names = [f"compute-{i}" for i in range(computes)]
    assert sorted(deployments) == sorted(["controller-0", *grown_names])
    for index, name in enumerate(grown_names):
        (dep,) = deployments[name]
        assert (dep.name, dep.id) == ("ComputeExtraDeployment", f"d-1-{index}")
        assert dict(dep.inputs) == {"hostname": name, "n": 1}
    files = cd.render("oc", outputs, deployments, network_configs=saved()["network_configs"])
    assert sum(1 for f in files if f.endswith("/ComputeExtraDeployment")) == computes
    assert sum(1 for f in files if f.startswith("Compute/compute-")
               and f.endswith("/NetworkConfig")) == computes
