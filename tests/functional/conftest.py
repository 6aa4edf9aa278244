"""Fixtures shared by the functional tests of several directories."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
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
def podman_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One podman service (runc + ulimits, as tripleo-flow's own) for the whole session.

    Tests hand its URL to tripleo-flow as ``[heat] podman_url``: a service someone
    else runs, which tripleo-flow never restarts.  So it must not stop by itself
    after ``IDLE_SECONDS`` without requests as tripleo-flow's own service does
    (the pod tests come long after the container tests): it runs with ``--time=0``
    until the session ends.
    """
    from tripleo_flow import exceptions
    from tripleo_flow.heat import podman_api

    binary = shutil.which("podman")
    if not binary or not shutil.which("runc"):
        pytest.fail("podman/runc are missing: apt-get install podman runc")
    state = tmp_path_factory.mktemp("podman")
    conf = state / "containers.conf"
    conf.write_text(podman_api.CONTAINERS_CONF)
    url = f"unix://{state / 'podman.sock'}"
    with open(state / "podman-service.log", "ab") as log:
        service = subprocess.Popen([binary, "system", "service", "--time=0", url],
                                   env={**os.environ, "CONTAINERS_CONF": str(conf)},
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                   start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with podman_api.connect(url, state):
                    break
            except exceptions.BackendUnavailable:
                if time.monotonic() > deadline or service.poll() is not None:
                    pytest.fail(f"podman system service did not answer on {url}; see "
                                f"{state / 'podman-service.log'}")
                time.sleep(0.2)
        yield url
    finally:
        service.terminate()
        try:
            service.wait(30)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait()


@pytest.fixture(scope="session")
def heat_image(podman_url: str) -> str:
    from tests import heat_images
    from tripleo_flow.heat import podman_api

    heat_images.wait_for_images()  # built in the background by tools/run-tests.sh
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
