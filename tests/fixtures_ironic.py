"""A real all-in-one Ironic for the session (node tests, and the secrets scenarios of
the node workflows), started on first use."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tripleo_flow.ironic.client import IronicClient
from tripleo_flow.ironic.launcher import IronicLauncher
from tripleo_flow.ironic.watch import watcher

DEFAULT_IRONIC_VENV = Path.home() / ".local/share/tripleo-flow/ironic-venv"


@pytest.fixture(scope="session")
def ironic_venv() -> Path:
    venv = Path(os.environ.get("TRIPLEO_FLOW_IRONIC_VENV", DEFAULT_IRONIC_VENV))
    if not (venv / "bin" / "ironic").exists():
        pytest.fail(f"No Ironic virtualenv at {venv}: run tools/setup-ironic.sh (and set "
                    "TRIPLEO_FLOW_IRONIC_VENV).")
    return venv


@pytest.fixture(scope="session")
def ironic_endpoint(ironic_venv: Path, tmp_path_factory: pytest.TempPathFactory
                    ) -> Iterator[str]:
    """One Ironic for the session, tethered to this pytest process."""
    launcher = IronicLauncher(tmp_path_factory.mktemp("ironic"), ironic_venv)
    ready = launcher.launch(owned_by="tests")
    try:
        yield ready.endpoint
    finally:
        launcher.kill()


def remove_all_nodes(endpoint: str) -> None:
    """Delete every node of the Ironic at ``endpoint`` (a failed clean is put back first,
    a deployed node undeployed)."""
    ironic = IronicClient(endpoint)
    for node in ironic.list_nodes(("uuid", "provision_state")):
        if node["provision_state"] == "clean failed":
            ironic.set_provision_state(node["uuid"], "manage")
            watcher(endpoint).wait_for(node["uuid"], "manageable", 30)
        elif node["provision_state"] in ("active", "deploy failed"):
            ironic.set_provision_state(node["uuid"], "deleted")
            watcher(endpoint).wait_for(node["uuid"], "available", 30)
        ironic.delete_node(node["uuid"])
