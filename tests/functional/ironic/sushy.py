"""sushy-tools' Redfish emulator over libvirt's in-process test driver, for the redfish tests.

The test driver reads a node description (domains, a network, a storage pool)
from an XML file and keeps everything in the emulator's own process: no
libvirtd, no KVM.  The emulator's config gives each system Storage, Drives and
Volumes (without them it answers 500 to storage queries and sushy retries for
half a minute per node), so Ironic's redfish inspection finds memory, CPUs,
architecture, a disk size and the NICs' MACs.
"""

from __future__ import annotations

import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

GIB = 1 << 30


@dataclass(frozen=True)
class VirtualServer:
    name: str
    uuid: str
    mac: str
    memory_mib: int = 6144
    cpus: int = 4
    disk_gib: int = 100


def servers(count: int) -> list[VirtualServer]:
    return [VirtualServer(f"bm-{i}", f"11111111-2222-3333-4444-{i:012d}",
                          f"52:54:00:12:34:{i:02x}") for i in range(count)]


def libvirt_xml(machines: list[VirtualServer]) -> str:
    domains = "".join(f"""
  <domain type='test'>
    <name>{m.name}</name><uuid>{m.uuid}</uuid>
    <memory unit='MiB'>{m.memory_mib}</memory><vcpu>{m.cpus}</vcpu>
    <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
    <devices>
      <interface type='network'><mac address='{m.mac}'/><source network='default'/></interface>
    </devices>
  </domain>""" for m in machines)
    return f"""<node>
  <cpu><mhz>2000</mhz><model>x86_64</model><active>8</active><nodes>1</nodes>
    <sockets>1</sockets><cores>8</cores><threads>1</threads></cpu>
  <memory>67108864</memory>{domains}
  <network><name>default</name><uuid>dd8fe884-6c02-601e-7551-cca97df1c5df</uuid>
    <bridge name='virbr0'/><ip address='192.168.122.1' netmask='255.255.255.0'/></network>
  <pool type='dir'><name>default</name><uuid>dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566</uuid>
    <capacity>1099511627776</capacity><allocation>0</allocation>
    <available>1099511627776</available><target><path>/default-pool</path></target></pool>
</node>
"""


def emulator_conf(machines: list[VirtualServer], port: int, libvirt_file: Path) -> str:
    storage = {m.uuid: [{"Id": "1", "Name": "Local Storage Controller",
                         "StorageControllers": [{"MemberId": "0", "Name": "SATA",
                                                 "SpeedGbps": 6}],
                         "Drives": [f"drive-{m.name}"]}] for m in machines}
    drives = {(m.uuid, "1"): [{"Id": f"drive-{m.name}", "Name": "Drive",
                               "CapacityBytes": m.disk_gib * GIB, "Protocol": "SATA"}]
              for m in machines}
    volumes = {(m.uuid, "1"): [{"libvirtPoolName": "default", "libvirtVolName": m.name,
                                "Id": "1", "Name": "Volume", "VolumeType": "RawDevice",
                                "CapacityBytes": m.disk_gib * GIB}] for m in machines}
    return "\n".join([
        "SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'",
        f"SUSHY_EMULATOR_LISTEN_PORT = {port}",
        f"SUSHY_EMULATOR_LIBVIRT_URI = 'test://{libvirt_file}'",
        f"SUSHY_EMULATOR_STORAGE = {storage!r}",
        f"SUSHY_EMULATOR_DRIVES = {drives!r}",
        f"SUSHY_EMULATOR_VOLUMES = {volumes!r}",
        "",
    ])


def start(emulator: Path, workdir: Path, machines: list[VirtualServer],
          port: int) -> subprocess.Popen[bytes]:
    """Start the emulator; return once it lists the systems."""
    (workdir / "libvirt.xml").write_text(libvirt_xml(machines))
    conf = workdir / "emulator.conf"
    conf.write_text(emulator_conf(machines, port, workdir / "libvirt.xml"))
    log = open(workdir / "emulator.log", "wb")  # noqa: SIM115 (the child keeps it)
    proc = subprocess.Popen([str(emulator), "--config", str(conf)], stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sushy-emulator exited: {(workdir / 'emulator.log').read_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/redfish/v1/Systems",
                                        timeout=1) as resp:
                if resp.status == 200:
                    return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("sushy-emulator did not answer within 30 s")
