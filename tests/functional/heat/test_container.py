"""Real heat-all in a real podman container (runc, host network)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.heat.conftest import OpenStack, make_conf
from tripleo_flow import exceptions
from tripleo_flow.api import Client
from tripleo_flow.heat import podman_api
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional
TEMPLATE = str(Path(__file__).with_name("small-stack.yaml"))


@pytest.fixture
def container_client(tmp_path: Path, heat_venv: Path, podman_url: str,
                     heat_image: str) -> Iterator[Client]:
    api = Client(make_conf(tmp_path, heat_venv, podman_url=podman_url, image=heat_image))
    yield api
    api.kill_heat(str(tmp_path / "work"), "container")


def _containers(podman_url: str, prefix: str) -> list[str]:
    with podman_api.connect(podman_url, Path("/nonexistent")) as client:
        return [c.name for c in client.containers.list(all=True) if c.name.startswith(prefix)]


def test_container_life_cycle(container_client: Client, tmp_path: Path, heat_venv: Path,
                              podman_url: str) -> None:
    heat_dir = str(tmp_path / "work")
    name = f"tripleo-flow-heat-{HeatDir(heat_dir).token}"
    ep = container_client.launch_heat(heat_dir, "container")
    assert _containers(podman_url, name) == [name]
    assert container_client.heat_status(heat_dir)["heat_type"] == "container"

    osc = OpenStack(heat_venv, ep["clouds_yaml"])
    osc("stack", "create", "-t", TEMPLATE, "--wait", "in-container")

    killed = container_client.kill_heat(heat_dir)  # type found from run.json
    assert f"container {name}" in killed["stopped"] and killed["dump"]
    assert _containers(podman_url, name) == []

    container_client.launch_heat(heat_dir, "container", restore_db=True)
    listed = json.loads(osc("stack", "list", "-f", "json"))
    assert [s["Stack Name"] for s in listed] == ["in-container"]
    container_client.kill_heat(heat_dir)
    assert _containers(podman_url, name) == []
    assert container_client.kill_heat(heat_dir)["stopped"] == []


def test_missing_image_names_the_build_command(tmp_path: Path, heat_venv: Path,
                                               podman_url: str) -> None:
    api = Client(make_conf(tmp_path, heat_venv, podman_url=podman_url,
                           image="localhost/tripleo-flow/no-such-heat:0"))
    with pytest.raises(exceptions.HeatNotInstalled) as err:
        api.launch_heat(str(tmp_path / "work"), "container")
    assert "tripleo-flow heat image build" in str(err.value)
    assert not HeatDir(tmp_path / "work").run_file.exists()
