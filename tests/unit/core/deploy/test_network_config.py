"""config-download's NetworkConfig files, per THT release's outputs: table-driven, no mocks."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.core.deploy import config_download as cd
from tripleo_flow.core.deploy import network_config as nc

SCRIPT = "#!/bin/bash\nos-net-config -c /etc/os-net-config/config.json\n"
SERVERS = [("controller-0", "Controller"), ("controller-1", "Controller"),
           ("compute-0", "Compute")]
CONFIGS = {"cfg-c0": SCRIPT, "cfg-c1": SCRIPT + "# c1\n", "cfg-n0": "#!/bin/sh\n",
           "cfg-noop": {}, "cfg-map": {"network_config": [{"type": "interface"}]}}


@pytest.mark.parametrize("outputs,expected", [
    # Ussuri (12.1.0): per server and per role (the role's holds its last server's).
    ({nc.HOSTNAME_MAP: {"controller-0": "cfg-c0", "controller-1": "cfg-c1",
                        "compute-0": "cfg-n0"}},
     {"Controller/controller-0/NetworkConfig": SCRIPT,
      "Controller/controller-1/NetworkConfig": SCRIPT + "# c1\n",
      "Controller/NetworkConfig": SCRIPT + "# c1\n",
      "Compute/compute-0/NetworkConfig": "#!/bin/sh\n", "Compute/NetworkConfig": "#!/bin/sh\n"}),
    # Host names as the server's name attribute: FQDN or capitals still match.
    ({nc.HOSTNAME_MAP: {"Compute-0.localdomain": "cfg-n0"}},
     {"Compute/compute-0/NetworkConfig": "#!/bin/sh\n", "Compute/NetworkConfig": "#!/bin/sh\n"}),
    # net-config-noop's empty StructuredConfig, an unknown id, a blacklisted host: nothing.
    ({nc.HOSTNAME_MAP: {"controller-0": "cfg-noop", "compute-0": "missing",
                        "blacklisted-9": "cfg-c0"}}, {}),
    # A structured config is written as JSON.
    ({nc.HOSTNAME_MAP: {"compute-0": "cfg-map"}},
     {"Compute/compute-0/NetworkConfig": '{"network_config": [{"type": "interface"}]}',
      "Compute/NetworkConfig": '{"network_config": [{"type": "interface"}]}'}),
    # Victoria..Yoga: per role only; ids or inline maps; null skipped; wins over Ussuri's.
    ({nc.ROLE_MAP: {"Controller": "cfg-c0", "Compute": {"network_config": []},
                    "CephStorage": None},
      nc.HOSTNAME_MAP: {"controller-0": "cfg-c1"}},
     {"Controller/NetworkConfig": SCRIPT, "Compute/NetworkConfig": '{"network_config": []}'}),
    # Zed and later (THT 18.0.0): no such output, no file (tripleo_network_config role).
    ({"RoleGroupVars": {"Controller": {"tripleo_network_config_template": "x.j2"}}}, {}),
])
def test_files(outputs: dict[str, Any], expected: dict[str, str]) -> None:
    written = nc.files(outputs, CONFIGS, SERVERS)
    assert {path: data.decode() for path, data in written.items()} == expected


@pytest.mark.parametrize("outputs,ids", [
    ({nc.HOSTNAME_MAP: {"a": "x", "b": "y", "c": "x"}}, ["x", "y"]),
    ({nc.ROLE_MAP: {"A": "x", "B": {"network_config": []}, "C": None},
      nc.HOSTNAME_MAP: {"a": "z"}}, ["x"]),
    ({}, []),
])
def test_config_ids(outputs: dict[str, Any], ids: list[str]) -> None:
    assert nc.config_ids(outputs) == ids


def test_render_writes_the_network_configs_of_the_stack_servers() -> None:
    outputs = {
        "RoleNames": ["Controller"], "RoleData": {"Controller": {}},
        "RoleNetHostnameMap": {"Controller": {"ctlplane": [
            "controller-0.ctlplane.localdomain"]}},
        "RoleNetIpMap": {"Controller": {"ctlplane": ["192.168.24.10"]}},
        "ServerIdData": {"server_ids": {"Controller": ["id-0"]}},
        nc.HOSTNAME_MAP: {"controller-0": "cfg-c0"}}
    files = cd.render("oc", outputs, network_configs=CONFIGS)
    assert files["Controller/controller-0/NetworkConfig"] == SCRIPT.encode()
    assert files["Controller/NetworkConfig"] == SCRIPT.encode()
    assert "Controller/NetworkConfig" not in cd.render("oc", outputs)
