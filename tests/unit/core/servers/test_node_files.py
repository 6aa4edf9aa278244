"""Node import files to node specs (pure, table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.core.servers.nodes import (
    NodeFileError,
    capabilities,
    check_import_options,
    parse_nodes,
    state_counts,
)

IPMI = {"name": "ctrl-0", "pm_type": "ipmi", "pm_addr": "10.0.0.1", "pm_user": "admin",
        "pm_password": "pw", "mac": ["52:54:00:AA:BB:01"]}


@pytest.mark.parametrize("entry, key, expected", [
    (IPMI, "driver", "ipmi"),
    (IPMI, "driver_info", {"ipmi_address": "10.0.0.1", "ipmi_username": "admin",
                           "ipmi_password": "pw"}),
    (IPMI, "macs", ["52:54:00:aa:bb:01"]),
    ({**IPMI, "pm_type": "pxe_ipmitool", "pm_port": 6230}, "driver_info",
     {"ipmi_address": "10.0.0.1", "ipmi_username": "admin", "ipmi_password": "pw",
      "ipmi_port": 6230}),
    ({"name": "r", "pm_type": "redfish", "pm_addr": "127.0.0.1:8000",
      "pm_system_id": "/redfish/v1/Systems/1"}, "driver_info",
     {"redfish_address": "https://127.0.0.1:8000", "redfish_system_id": "/redfish/v1/Systems/1"}),
    ({"name": "f", "pm_type": "fake-hardware"}, "driver", "fake-hardware"),
    ({"name": "f", "pm_type": "fake", "ports": [{"address": "52-54-00-00-00-01"}]}, "macs",
     ["52:54:00:00:00:01"]),
    ({**IPMI, "cpu": "4", "memory": 8192, "disk": 40, "arch": "x86_64",
      "capabilities": "profile:control,boot_option:local",
      "root_device": {"serial": "s1"}}, "properties",
     {"cpus": 4, "memory_mb": 8192, "local_gb": 40, "cpu_arch": "x86_64",
      "capabilities": "profile:control,boot_option:local", "root_device": {"serial": "s1"}}),
    ({**IPMI, "capabilities": {"profile": "compute"}}, "properties",
     {"capabilities": "profile:compute"}),
    ({"mac": ["52:54:00:00:00:09"], "pm_type": "fake"}, "name", None),
    (IPMI, "resource_class", "baremetal"),
])
def test_entry_to_spec(entry: dict[str, Any], key: str, expected: Any) -> None:
    assert parse_nodes([entry])[0][key] == expected


@pytest.mark.parametrize("document, entry, reason", [
    ({"nodes": {}}, "the file", "must be a list"),
    ([], "the file", "describes no node"),
    (["x"], "node 1", "is not a mapping"),
    ([{**IPMI, "pm_adr": "typo"}], "node 1 ('ctrl-0')", "unknown keys: pm_adr"),
    ([{**IPMI, "name": "bad name"}], "node 1 ('bad name')", "not a valid host name"),
    ([{"pm_type": "fake"}], "node 1", "needs a name or a MAC"),
    ([{**IPMI, "pm_type": "ilo"}], "node 1 ('ctrl-0')", "unknown pm_type 'ilo'"),
    ([{**IPMI, "mac": ["zz"]}], "node 1 ('ctrl-0')", "invalid MAC address 'zz'"),
    ([{k: v for k, v in IPMI.items() if k != "pm_addr"}], "node 1 ('ctrl-0')",
     "without pm_addr"),
    ([{"name": "r", "pm_type": "redfish", "pm_addr": "h"}], "node 1 ('r')",
     "without pm_system_id"),
    ([{**IPMI, "memory": "lots"}], "node 1 ('ctrl-0')", "memory that is not a number"),
    ([{**IPMI, "capabilities": "profile"}], "node 1 ('ctrl-0')", "not 'key:value"),
    ([IPMI, {**IPMI, "mac": []}], "node 2 ('ctrl-0')", "same name as node 1"),
    ([IPMI, {**IPMI, "name": "ctrl-1"}], "node 2 ('ctrl-1')",
     "MAC 52:54:00:aa:bb:01 already given to node 1"),
])
def test_bad_documents_name_the_entry(document: Any, entry: str, reason: str) -> None:
    with pytest.raises(NodeFileError) as caught:
        parse_nodes(document)
    assert caught.value.entry == entry
    assert reason in caught.value.reason


def test_the_node_count_is_limited() -> None:
    document = [{"name": f"n{i}", "pm_type": "fake"} for i in range(3)]
    assert len(parse_nodes(document, max_nodes=3)) == 3
    with pytest.raises(NodeFileError, match="more than \\[limits\\] nodes_max \\(2\\)"):
        parse_nodes(document, max_nodes=2)


@pytest.mark.parametrize("properties, expected", [
    ({}, {}),
    ({"capabilities": "profile:control, boot_option:local"},
     {"profile": "control", "boot_option": "local"}),
    ({"capabilities": {"profile": "compute"}}, {"profile": "compute"}),
])
def test_capabilities(properties: dict[str, Any], expected: dict[str, str]) -> None:
    assert capabilities(properties) == expected


@pytest.mark.parametrize("initial_state, introspect, provide", [
    ("manageable", False, False), ("manageable", True, True), ("available", False, False),
    ("available", True, False), ("enroll", False, False),
])
def test_import_options_accepted(initial_state: str, introspect: bool, provide: bool) -> None:
    check_import_options(initial_state, introspect, provide)


@pytest.mark.parametrize("initial_state, introspect, provide, message", [
    ("active", False, False, "one of enroll, manageable, available, not 'active'"),
    (None, False, False, "not None"),
    ("manageable", "yes", False, "introspect must be true or false"),
    ("manageable", False, 1, "provide must be true or false"),
    ("enroll", True, False, "cannot be introspected nor provided"),
    ("enroll", False, True, "cannot be introspected nor provided"),
])
def test_import_options_refused(initial_state: Any, introspect: Any, provide: Any,
                                message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_import_options(initial_state, introspect, provide)


@pytest.mark.parametrize("nodes, expected", [
    ([], {}),
    ([{"provision_state": "enroll"}, {"provision_state": "available"},
      {"provision_state": "enroll"}], {"enroll": 2, "available": 1}),
    ([{"provision_state": "manageable", "maintenance": True},
      {"provision_state": "active", "maintenance": False}],
     {"active": 1, "manageable in maintenance": 1}),
])
def test_state_counts(nodes: list[dict[str, Any]], expected: dict[str, int]) -> None:
    counts = state_counts(nodes)
    assert counts == expected and list(counts) == list(expected)
