"""Redfish nodes on a real Redfish server: inspection fills properties and ports."""

from __future__ import annotations

import json
from pathlib import Path

from tripleo_flow.client import Client

from .sushy import VirtualServer


def _instackenv(url: str, machines: list[VirtualServer]) -> dict[str, object]:
    return {"nodes": [{"name": m.name, "pm_type": "redfish", "pm_addr": url,
                       "pm_user": "admin", "pm_password": "password",
                       "pm_system_id": f"/redfish/v1/Systems/{m.uuid}",
                       "capabilities": "profile:control"} for m in machines]}


def test_redfish_inspection_finds_memory_cpus_disk_and_macs(
        node_client: Client, tmp_path: Path,
        redfish_servers: tuple[str, list[VirtualServer]]) -> None:
    url, machines = redfish_servers
    path = tmp_path / "instackenv.json"
    path.write_text(json.dumps(_instackenv(url, machines)))
    imported = node_client.nodes.register(path)
    # Manageable: Ironic reached each BMC (and noted its vendor), nothing more is known.
    assert {n["provision_state"] for n in imported} == {"manageable"}
    assert {n["name"]: n["properties"] for n in node_client.nodes.list()}["bm-0"] == {
        "capabilities": "profile:control", "vendor": "Sushy Emulator"}
    done = node_client.nodes.introspect([m.name for m in machines], provide=True)
    by_name = {n["name"]: n for n in done}
    for machine in machines:
        props = by_name[machine.name]["properties"]
        assert props["memory_mb"] == machine.memory_mib
        assert props["cpus"] == machine.cpus
        assert props["cpu_arch"] == "x86_64"
        assert int(props["local_gb"]) == machine.disk_gib - 1  # Ironic keeps 1 GiB back
        assert props["capabilities"] == "profile:control"  # kept by inspection
        assert by_name[machine.name]["provision_state"] == "available"
        shown = node_client.nodes.get(machine.name)
        assert shown["ports"] == [machine.mac]
        assert shown["power_state"] == "power on"
