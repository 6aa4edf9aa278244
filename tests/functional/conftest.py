"""Fixtures shared by the functional tests of several directories."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

DEFAULT_HEAT_VENV = Path.home() / ".local/share/tripleo-flow/heat-venv"


@pytest.fixture(scope="session")
def heat_venv() -> Path:
    venv = Path(os.environ.get("TRIPLEO_FLOW_HEAT_VENV", DEFAULT_HEAT_VENV))
    if not (venv / "bin" / "heat-all").exists() or not (venv / "bin" / "openstack").exists():
        pytest.fail(f"No Heat virtualenv at {venv}: run `tripleo-flow heat install` (or "
                    "tools/setup-heat.sh) and set TRIPLEO_FLOW_HEAT_VENV.")
    return venv


@pytest.fixture(scope="session")
def podman_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One podman service (tripleo-flow's own, runc + ulimits) for the whole session."""
    from tripleo_flow.heat import podman_api

    if not shutil.which("podman") or not shutil.which("runc"):
        pytest.fail("podman/runc are missing: apt-get install podman runc")
    state = tmp_path_factory.mktemp("podman")
    with podman_api.connect(None, state):
        pass
    return f"unix://{state / 'podman.sock'}"


@pytest.fixture(scope="session")
def heat_image(podman_url: str) -> str:
    from tripleo_flow.heat import podman_api

    image = os.environ.get("TRIPLEO_FLOW_HEAT_IMAGE", "localhost/tripleo-flow/heat:24.1.2")
    with podman_api.connect(podman_url, Path("/nonexistent")) as client:
        if not client.images.exists(image):
            pytest.fail(f"No Heat image {image}: run `tripleo-flow heat image build` "
                        "(or tools/setup-heat.sh).")
    return image


DEFAULT_ANSIBLE_VENV = Path.home() / ".local/share/tripleo-flow/ansible-venv"


@pytest.fixture(scope="session")
def ansible_venv() -> Path:
    """The Ansible virtualenv with tripleo-ansible (tools/setup-ansible.sh)."""
    venv = Path(os.environ.get("TRIPLEO_FLOW_ANSIBLE_VENV", DEFAULT_ANSIBLE_VENV))
    if not (venv / "bin" / "ansible-playbook").exists() or \
            not (venv / "share" / "ansible" / "roles").is_dir():
        pytest.fail(f"No Ansible virtualenv with tripleo-ansible at {venv}: run "
                    "tools/setup-ansible.sh (and set TRIPLEO_FLOW_ANSIBLE_VENV).")
    return venv
