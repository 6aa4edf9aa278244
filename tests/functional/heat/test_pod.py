"""A real podman pod: heat-api, heat-engine (2 workers), its own MariaDB and RabbitMQ."""

from __future__ import annotations

import json
import socket
import struct
from pathlib import Path

import pytest

from tests.functional.heat.conftest import OpenStack, make_conf
from tests.functional.heat.test_container import eventually, kill_owner_after_launch, watchers
from tripleo_flow.client import Client
from tripleo_flow.heat import podman_api
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional
TEMPLATE = str(Path(__file__).with_name("small-stack.yaml"))


def _pod_objects(podman_url: str, name: str) -> tuple[list[str], list[str], list[str]]:
    with podman_api.connect(podman_url, Path("/nonexistent")) as client:
        pods = [p.name for p in client.pods.list() if p.name == name]
        containers = [c.name for c in client.containers.list(all=True)
                      if c.name.startswith(name)]
        volumes = [v.name for v in client.volumes.list()]
    return pods, containers, volumes


def _listen_addresses(port: int) -> set[str]:
    """IPv4 addresses with a listening TCP socket on ``port`` (from /proc/net/tcp)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        addr, port_hex = local.split(":")
        if state == "0A" and int(port_hex, 16) == port:
            found.add(socket.inet_ntoa(struct.pack("<I", int(addr, 16))))
    return found


def test_pod_life_cycle(tmp_path: Path, heat_venv: Path, podman_url: str,
                        heat_image: str) -> None:
    api = Client(make_conf(tmp_path, heat_venv, podman_url=podman_url, image=heat_image,
                           engine_workers=2))
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    name = f"tripleo-flow-heat-pod-{work.token}"
    _, _, volumes_before = _pod_objects(podman_url, name)
    try:
        ep = api.heat.launch(heat_dir, "pod")
        pods, containers, _ = _pod_objects(podman_url, name)
        assert pods == [name]
        assert sorted(c.rsplit("-", 1)[1] for c in containers) == [
            "api", "engine", "mariadb", "rabbitmq"]
        assert "kind: Pod" in (work.root / "heat-pod.yaml").read_text()
        assert _listen_addresses(work.read_run()["port"]) == {"127.0.0.1"}

        osc = OpenStack(heat_venv, ep["clouds_yaml"])
        osc("stack", "create", "-t", TEMPLATE, "--wait", "in-pod")
        killed = api.heat.kill(heat_dir)
        assert killed["dump"] == str(work.dump_file)
        assert _pod_objects(podman_url, name) == ([], [], volumes_before)

        api.heat.launch(heat_dir, "pod", restore_db=True)
        listed = json.loads(osc("stack", "list", "-f", "json"))
        assert [(s["Stack Name"], s["Stack Status"]) for s in listed] == [
            ("in-pod", "CREATE_COMPLETE")]
    finally:
        api.heat.kill(heat_dir)
    assert _pod_objects(podman_url, name) == ([], [], volumes_before)
    assert api.heat.kill(heat_dir)["stopped"] == []


def test_killed_owners_pod_dies_with_it(tmp_path: Path, heat_venv: Path, podman_url: str,
                                        heat_image: str) -> None:
    api = Client(make_conf(tmp_path, heat_venv, podman_url=podman_url, image=heat_image,
                           engine_workers=1))
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    name = f"tripleo-flow-heat-pod-{work.token}"
    _, _, volumes_before = _pod_objects(podman_url, name)
    try:
        kill_owner_after_launch(tmp_path, heat_venv, "pod", podman_url=podman_url,
                                image=heat_image, engine_workers=1)
        record = work.read_run()
        assert record is not None and record["owner"]["by"] == "deploy"
        assert eventually(lambda: _pod_objects(podman_url, name) == ([], [], volumes_before))
        assert eventually(lambda: watchers(name) == [])
        assert f"removed pod {name}" in (work.log_dir / "podman-watcher.log").read_text()
    finally:
        api.heat.kill(heat_dir)
    assert _pod_objects(podman_url, name) == ([], [], volumes_before)
