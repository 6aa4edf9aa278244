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


KILLED_OWNER = r"""
import os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.functional.heat.conftest import make_conf
from tripleo_flow.heat import make_launcher
tmp, venv, podman_url, image = (Path(a) for a in sys.argv[2:6])
conf = make_conf(tmp, venv, podman_url=str(podman_url), image=str(image))
conf.set_override("api_port", int(sys.argv[6]), group="heat")
make_launcher(conf, "container", str(tmp / "work")).launch(owned_by="deploy")
os.kill(os.getpid(), 9)  # the owner dies without a word, as a killed deploy does
"""


def test_killed_owners_container_is_stopped_by_the_next_launch(
        container_client: Client, tmp_path: Path, heat_venv: Path, podman_url: str,
        heat_image: str) -> None:
    import subprocess
    import sys

    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    name = f"tripleo-flow-heat-{work.token}"
    port = container_client.conf.heat.api_port
    root = Path(__file__).resolve().parents[3]
    owner = subprocess.run([sys.executable, "-c", KILLED_OWNER, str(root), str(tmp_path),
                            str(heat_venv), podman_url, heat_image, str(port)],
                           capture_output=True, text=True, check=False)
    assert owner.returncode == -9, owner.stderr
    assert _containers(podman_url, name) == [name]  # a container outlives its owner...
    record = work.read_run()
    assert record is not None and record["owner"]["by"] == "deploy"

    ep = container_client.launch_heat(heat_dir, "container")  # ...until the next launch
    assert list(ep["cleaned"]) == [
        f"stopped container {name} left by a killed deploy "
        f"(pid {record['owner']['pid']} on {record['owner']['host']}); removed its database"]
    assert work.read_run()["owner"] is None  # a plain launch is owned by nobody
