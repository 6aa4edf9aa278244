"""Text of ironic.conf for a local all-in-one Ironic (pure: no I/O).

One ``ironic`` process (API and conductor, ``rpc_transport = none``), noauth,
SQLite, listening on 127.0.0.1 only.  Hardware types ``fake-hardware`` and
``redfish``; everything that would reach a network service (DHCP, Neutron,
Glance, a PXE server) is off, and so is automated cleaning (as on TripleO's
undercloud by default: it would boot a ramdisk).  The vendor interface is ``no-vendor``: the
default ``ipmitool`` one makes the conductor crash-loop when ``ipmitool`` is
absent and the API then never answers.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Interfaces enabled per kind (the first is the default of fake-hardware nodes).
INTERFACES = {
    "boot": "fake,redfish-virtual-media",
    "deploy": "fake,direct",
    "inspect": "fake,redfish,no-inspect",
    "management": "fake,redfish",
    "power": "fake,redfish",
    "network": "noop",
    "vendor": "no-vendor",
    "bios": "no-bios",
    "console": "no-console",
    "raid": "no-raid",
    "rescue": "no-rescue",
    "storage": "noop",
    "firmware": "no-firmware",
}


@dataclass(frozen=True)
class IronicSettings:
    """What differs between two local Ironics: port, database and paths."""

    port: int
    database_url: str
    log_file: str
    lock_path: str
    host: str = "127.0.0.1"


def ironic_conf(settings: IronicSettings) -> str:
    """ironic.conf for ``settings``."""
    lines = [
        "[DEFAULT]",
        "auth_strategy = noauth",
        "rpc_transport = none",
        "host = tripleo-flow",
        "enabled_hardware_types = fake-hardware,redfish",
        *(f"enabled_{kind}_interfaces = {names}" for kind, names in INTERFACES.items()),
        "default_network_interface = noop",
        f"log_file = {settings.log_file}",
        "use_stderr = false",
        "",
        "[api]",
        f"host_ip = {settings.host}",
        f"port = {settings.port}",
        "",
        "[database]",
        f"connection = {settings.database_url}",
        "",
        "[conductor]",
        "automated_clean = false",
        "",
        "[dhcp]",
        "dhcp_provider = none",
        "",
        "[oslo_concurrency]",
        f"lock_path = {settings.lock_path}",
        "",
    ]
    return "\n".join(lines)
