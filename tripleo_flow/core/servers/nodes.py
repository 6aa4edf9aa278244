"""Node import files (TripleO's ``instackenv.json``, nodes YAML) to Ironic node specs.

Pure functions, no I/O.  :func:`parse_nodes` checks every entry before anything
is registered, so a bad file changes nothing, and names the bad entry (its
position and name).  An entry becomes a :data:`NodeSpec` mapping::

    {"entry": "node 2 ('ctrl-0')", "name": "ctrl-0", "driver": "ipmi",
     "driver_info": {"ipmi_address": ..., "ipmi_password": ...},
     "properties": {"capabilities": "profile:control,boot_option:local", ...},
     "macs": ["52:54:00:aa:bb:01"], "resource_class": "baremetal"}

``driver_info`` holds the BMC password under the driver's own key
(``ipmi_password``, ``redfish_password``), a secret name for
:mod:`tripleo_flow.common.secret_masking`, so execution records mask it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

NodeSpec = dict[str, Any]

#: pm_type (and its old names) -> (Ironic hardware type, driver_info key prefix).
DRIVERS = {
    "ipmi": ("ipmi", "ipmi"), "pxe_ipmitool": ("ipmi", "ipmi"),
    "redfish": ("redfish", "redfish"), "pxe_redfish": ("redfish", "redfish"),
    "fake-hardware": ("fake-hardware", "fake"), "fake": ("fake-hardware", "fake"),
    "manual-management": ("manual-management", "fake"),
}
KNOWN_KEYS = frozenset({
    "name", "pm_type", "driver", "pm_addr", "pm_user", "pm_password", "pm_port",
    "pm_system_id", "mac", "ports", "capabilities", "root_device", "cpu", "memory", "disk",
    "arch", "driver_info", "properties", "resource_class", "kernel_id", "ramdisk_id",
})
_MAC = re.compile(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$")
_NAME = re.compile(r"^[a-zA-Z0-9]([a-zA-Z0-9._~-]{0,61}[a-zA-Z0-9])?$")
NODES_MAX = 1000
#: Where an import leaves the nodes it finds in ``enroll`` (new ones): TripleO's choices,
#: ``manageable`` its default (BMC credentials checked, ready for introspection).
INITIAL_STATES = ("enroll", "manageable", "available")


class NodeFileError(ValueError):
    """An entry of a node file is wrong: ``entry`` names it, ``reason`` says why."""

    def __init__(self, entry: str, reason: str) -> None:
        super().__init__(f"{entry} {reason}")
        self.entry = entry
        self.reason = reason


def parse_nodes(document: Any, max_nodes: int = NODES_MAX) -> list[NodeSpec]:
    """The node specs of a parsed instackenv.json / nodes YAML document.

    :raises NodeFileError: the document or one entry is wrong (the first found).
    """
    entries = document.get("nodes") if isinstance(document, Mapping) else document
    if not isinstance(entries, list):
        raise NodeFileError("the file", "must be a list of nodes or a mapping with 'nodes'")
    if not entries:
        raise NodeFileError("the file", "describes no node")
    if len(entries) > max_nodes:
        raise NodeFileError("the file", f"describes {len(entries)} nodes, more than "
                            f"[limits] nodes_max ({max_nodes})")
    specs = [node_spec(entry, index) for index, entry in enumerate(entries, 1)]
    _check_unique(specs)
    return specs


def check_import_options(initial_state: Any, introspect: Any = False,
                         provide: Any = False) -> None:
    """Check what an import does after registering: the state it leaves the nodes found
    in ``enroll`` in, and whether it introspects and provides every imported node.

    :raises ValueError: an unknown state, a flag that is not a boolean, or ``enroll``
        with introspect or provide (both need the nodes manageable first).
    """
    if initial_state not in INITIAL_STATES:
        raise ValueError(f"The initial state must be one of {', '.join(INITIAL_STATES)}, "
                         f"not {initial_state!r}.")
    for name, flag in (("introspect", introspect), ("provide", provide)):
        if not isinstance(flag, bool):
            raise ValueError(f"{name} must be true or false, not {flag!r}.")
    if initial_state == "enroll" and (introspect or provide):
        raise ValueError("Nodes left in enroll cannot be introspected nor provided: "
                         "import them to manageable (the default) to do so.")


def state_counts(nodes: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many ``nodes`` are in each provision state (those in maintenance apart),
    most first: what a message about an empty selection shows."""
    counts: dict[str, int] = {}
    for node in nodes:
        label = str(node.get("provision_state"))
        if node.get("maintenance"):
            label += " in maintenance"
        counts[label] = counts.get(label, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def node_spec(entry: Any, index: int) -> NodeSpec:
    """One entry as a node spec (``index`` counts from 1, for messages)."""
    if not isinstance(entry, Mapping):
        raise NodeFileError(f"node {index}", "is not a mapping")
    name = entry.get("name")
    label = f"node {index}" + (f" ({name!r})" if isinstance(name, str) else "")
    unknown = sorted(str(k) for k in entry if k not in KNOWN_KEYS)
    if unknown:
        raise NodeFileError(label, f"has unknown keys: {', '.join(unknown)}")
    if name is not None and (not isinstance(name, str) or not _NAME.match(name)):
        raise NodeFileError(label, "has a name that is not a valid host name")
    macs = _macs(entry, label)
    if name is None and not macs:
        raise NodeFileError(label, "needs a name or a MAC address (what makes imports "
                            "idempotent)")
    pm_type = str(entry.get("pm_type") or entry.get("driver") or "ipmi")
    if pm_type not in DRIVERS:
        raise NodeFileError(label, f"has an unknown pm_type {pm_type!r} (one of "
                            f"{', '.join(sorted(DRIVERS))})")
    driver, prefix = DRIVERS[pm_type]
    driver_info = _driver_info(entry, prefix, label)
    return {"entry": label, "name": name, "driver": driver, "driver_info": driver_info,
            "properties": _properties(entry, label), "macs": macs,
            "resource_class": str(entry.get("resource_class") or "baremetal")}


def _macs(entry: Mapping[str, Any], label: str) -> list[str]:
    raw: list[Any] = list(entry.get("mac") or [])
    for port in entry.get("ports") or []:
        raw.append(port.get("address") if isinstance(port, Mapping) else port)
    macs = []
    for value in raw:
        mac = str(value).strip().lower().replace("-", ":")
        if not _MAC.match(mac):
            raise NodeFileError(label, f"has an invalid MAC address {value!r}")
        if mac not in macs:
            macs.append(mac)
    return macs


def _driver_info(entry: Mapping[str, Any], prefix: str, label: str) -> dict[str, Any]:
    info: dict[str, Any] = {}
    given = entry.get("driver_info") or {}
    if not isinstance(given, Mapping):
        raise NodeFileError(label, "has a driver_info that is not a mapping")
    if prefix == "ipmi":
        pairs = {"pm_addr": "ipmi_address", "pm_user": "ipmi_username",
                 "pm_password": "ipmi_password", "pm_port": "ipmi_port"}
    elif prefix == "redfish":
        pairs = {"pm_addr": "redfish_address", "pm_user": "redfish_username",
                 "pm_password": "redfish_password", "pm_system_id": "redfish_system_id"}
        if not entry.get("pm_system_id") and "redfish_system_id" not in given:
            raise NodeFileError(label, "is a redfish node without pm_system_id")
    else:
        pairs = {}
    for key, target in pairs.items():
        if entry.get(key) not in (None, ""):
            info[target] = entry[key] if key == "pm_port" else str(entry[key])
    if prefix == "ipmi" and "ipmi_address" not in info and "ipmi_address" not in given:
        raise NodeFileError(label, "is an ipmi node without pm_addr")
    if prefix == "redfish" and "redfish_address" in info:
        address = info["redfish_address"]
        info["redfish_address"] = address if "://" in address else f"https://{address}"
    info.update({str(k): v for k, v in given.items()})
    return info


def _properties(entry: Mapping[str, Any], label: str) -> dict[str, Any]:
    given = entry.get("properties") or {}
    if not isinstance(given, Mapping):
        raise NodeFileError(label, "has properties that are not a mapping")
    props: dict[str, Any] = {}
    for key, target in (("cpu", "cpus"), ("memory", "memory_mb"), ("disk", "local_gb")):
        if entry.get(key) not in (None, ""):
            try:
                props[target] = int(entry[key])
            except (TypeError, ValueError):
                raise NodeFileError(label, f"has a {key} that is not a number: "
                                    f"{entry[key]!r}") from None
    if entry.get("arch"):
        props["cpu_arch"] = str(entry["arch"])
    capabilities = entry.get("capabilities")
    if isinstance(capabilities, Mapping):
        capabilities = ",".join(f"{k}:{v}" for k, v in capabilities.items())
    if capabilities:
        if not isinstance(capabilities, str) or any(
                ":" not in part for part in capabilities.split(",")):
            raise NodeFileError(label, "has capabilities that are not 'key:value,...'")
        props["capabilities"] = capabilities
    if entry.get("root_device") is not None:
        if not isinstance(entry["root_device"], Mapping):
            raise NodeFileError(label, "has a root_device hint that is not a mapping")
        props["root_device"] = dict(entry["root_device"])
    props.update({str(k): v for k, v in given.items()})
    return props


def _check_unique(specs: list[NodeSpec]) -> None:
    names: dict[str, str] = {}
    macs: dict[str, str] = {}
    for spec in specs:
        if spec["name"] is not None:
            if spec["name"] in names:
                raise NodeFileError(spec["entry"], f"has the same name as {names[spec['name']]}")
            names[spec["name"]] = spec["entry"]
        for mac in spec["macs"]:
            if mac in macs:
                raise NodeFileError(spec["entry"], f"has MAC {mac} already given to "
                                    f"{macs[mac]}")
            macs[mac] = spec["entry"]


def capabilities(properties: Mapping[str, Any]) -> dict[str, str]:
    """A node's ``capabilities`` property (``'k:v,k:v'``) as a mapping."""
    text = properties.get("capabilities") or ""
    if isinstance(text, Mapping):
        return {str(k): str(v) for k, v in text.items()}
    pairs = (part.split(":", 1) for part in str(text).split(",") if ":" in part)
    return {k.strip(): v.strip() for k, v in pairs}
