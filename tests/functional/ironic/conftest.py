"""A real all-in-one Ironic (fake-hardware and redfish) for the node tests."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_ironic import remove_all_nodes
from tests.fixtures_services import free_port
from tripleo_flow.client import Client

from . import sushy


@pytest.fixture
def node_client(ironic_endpoint: str, tmp_path: Path) -> Iterator[Client]:
    """A Client on the session's Ironic; every node is deleted afterwards."""
    client = Client.from_config_files([], data_dir=str(tmp_path / "data"),
                                      ironic__endpoint=ironic_endpoint)
    try:
        yield client
    finally:
        client.close()
        remove_all_nodes(ironic_endpoint)


def fake_nodes(count: int, prefix: str = "node", **extra: Any) -> dict[str, Any]:
    """An instackenv.json document of ``count`` fake-hardware nodes."""
    tag = zlib.crc32(prefix.encode()) % 256
    return {"nodes": [{"name": f"{prefix}-{i}", "pm_type": "fake-hardware",
                       "mac": [f"52:54:00:{tag:02x}:{i // 256:02x}:{i % 256:02x}"],
                       "cpu": 4, "memory": 8192, "disk": 40, "arch": "x86_64",
                       "capabilities": "profile:compute,boot_option:local", **extra}
                      for i in range(count)]}


@pytest.fixture(scope="session")
def redfish_servers(ironic_venv: Path, tmp_path_factory: pytest.TempPathFactory
                    ) -> Iterator[tuple[str, list[sushy.VirtualServer]]]:
    """sushy-tools' Redfish emulator over libvirt's test driver: (URL, its servers)."""
    emulator = ironic_venv / "bin" / "sushy-emulator"
    if not emulator.exists():
        pytest.fail(f"No sushy-emulator in {ironic_venv}: run tools/setup-ironic.sh.")
    machines = sushy.servers(3)
    port = free_port()
    proc = sushy.start(emulator, tmp_path_factory.mktemp("sushy"), machines, port)
    try:
        yield f"http://127.0.0.1:{port}", machines
    finally:
        proc.kill()
        proc.wait(timeout=10)
