"""Real heat-all in a real podman container (runc, host network)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.functional.heat.conftest import OpenStack, make_conf
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.heat import make_launcher, podman_api, process
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional
TEMPLATE = str(Path(__file__).with_name("small-stack.yaml"))


@pytest.fixture
def container_client(tmp_path: Path, heat_venv: Path, podman_url: str,
                     heat_image: str) -> Iterator[Client]:
    api = Client(make_conf(tmp_path, heat_venv, podman_url=podman_url, image=heat_image))
    yield api
    api.heat.kill(str(tmp_path / "work"), "container")


def _containers(podman_url: str, prefix: str) -> list[str]:
    with podman_api.connect(podman_url, Path("/nonexistent")) as client:
        return [c.name for c in client.containers.list(all=True) if c.name.startswith(prefix)]


def test_container_life_cycle(container_client: Client, tmp_path: Path, heat_venv: Path,
                              podman_url: str) -> None:
    heat_dir = str(tmp_path / "work")
    name = f"tripleo-flow-heat-{HeatDir(heat_dir).token}"
    ep = container_client.heat.launch(heat_dir, "container")
    assert _containers(podman_url, name) == [name]
    assert container_client.heat.status(heat_dir)["heat_type"] == "container"

    osc = OpenStack(heat_venv, ep["clouds_yaml"])
    osc("stack", "create", "-t", TEMPLATE, "--wait", "in-container")

    killed = container_client.heat.kill(heat_dir)  # type found from run.json
    assert f"container {name}" in killed["stopped"] and killed["dump"]
    assert _containers(podman_url, name) == []

    container_client.heat.launch(heat_dir, "container", restore_db=True)
    listed = json.loads(osc("stack", "list", "-f", "json"))
    assert [s["Stack Name"] for s in listed] == ["in-container"]
    container_client.heat.kill(heat_dir)
    assert _containers(podman_url, name) == []
    assert container_client.heat.kill(heat_dir)["stopped"] == []


def test_missing_image_names_the_build_command(tmp_path: Path, heat_venv: Path,
                                               podman_url: str) -> None:
    api = Client(make_conf(tmp_path, heat_venv, podman_url=podman_url,
                           image="localhost/tripleo-flow/no-such-heat:0"))
    with pytest.raises(exceptions.HeatNotInstalled) as err:
        api.heat.launch(str(tmp_path / "work"), "container")
    assert "tripleo-flow heat image build" in str(err.value)
    assert not HeatDir(tmp_path / "work").run_file.exists()


KILLED_OWNER = r"""
import json, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.functional.heat.conftest import make_conf
from tripleo_flow.heat import make_launcher
tmp, venv = Path(sys.argv[2]), Path(sys.argv[3])
heat_type, heat = sys.argv[4], json.loads(sys.argv[5])
conf = make_conf(tmp, venv, **heat)
make_launcher(conf, heat_type, str(tmp / "work")).launch(owned_by="deploy")
os.kill(os.getpid(), 9)  # the owner dies without a word, as a killed deploy does
"""


def kill_owner_after_launch(tmp_path: Path, heat_venv: Path, heat_type: str,
                            **heat: object) -> None:
    """Launch ``heat_type`` owned by a process that is then SIGKILLed."""
    root = Path(__file__).resolve().parents[3]
    owner = subprocess.run([sys.executable, "-c", KILLED_OWNER, str(root), str(tmp_path),
                            str(heat_venv), heat_type, json.dumps(heat)],
                           capture_output=True, text=True, check=False)
    assert owner.returncode == -9, owner.stderr


def watchers(name: str) -> list[int]:
    """Live watcher processes (or their cleanup) of the container or pod ``name``."""
    marker = f"{podman_api.LAUNCH_LABEL}={name}."
    return [int(entry.name) for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and any(marker in a for a in process.cmdline(int(entry.name)))]


def eventually(probe: Callable[[], object], timeout: float = 60.0) -> object:
    """``probe()`` once it is truthy; its last (falsy) value after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := probe()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return value


def test_killed_owners_container_dies_with_it(
        container_client: Client, tmp_path: Path, heat_venv: Path, podman_url: str,
        heat_image: str) -> None:
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    name = f"tripleo-flow-heat-{work.token}"
    kill_owner_after_launch(tmp_path, heat_venv, "container", podman_url=podman_url,
                            image=heat_image)
    record = work.read_run()
    assert record is not None and record["owner"]["by"] == "deploy"
    assert record["watcher"]["label"].startswith(f"{podman_api.LAUNCH_LABEL}={name}.")
    assert eventually(lambda: _containers(podman_url, name) == [])
    assert eventually(lambda: watchers(name) == [])
    assert "removed container " + name in (work.log_dir / "podman-watcher.log").read_text()

    ep = container_client.heat.launch(heat_dir, "container")  # the second line of defence
    assert list(ep["cleaned"]) == [
        f"container {name} left by a killed deploy (pid {record['owner']['pid']} on "
        f"{record['owner']['host']}) had already stopped; removed its database"]
    assert work.read_run()["owner"] is None  # a plain launch is owned by nobody
    assert watchers(name) == []  # ...and has no watcher


def test_owned_container_stopped_by_its_owner_leaves_no_watcher(
        tmp_path: Path, heat_venv: Path, podman_url: str, heat_image: str) -> None:
    heat_dir = str(tmp_path / "work")
    name = f"tripleo-flow-heat-{HeatDir(heat_dir).token}"
    conf = make_conf(tmp_path, heat_venv, podman_url=podman_url, image=heat_image)
    launcher = make_launcher(conf, "container", heat_dir)
    try:
        launcher.launch(owned_by="deploy")
        (watcher,) = watchers(name)
        assert _containers(podman_url, name) == [name]
        assert f"container {name}" in launcher.kill().stopped
    finally:
        launcher.kill(dump=False)
    assert watchers(name) == [] and process.cmdline(watcher) == []
    assert _containers(podman_url, name) == []
    # It was stopped before its pipe closed: it never ran its cleanup.
    assert "removed" not in (HeatDir(heat_dir).log_dir / "podman-watcher.log").read_text()
