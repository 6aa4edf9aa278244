"""Port holds of a launch and its relaunch on another port when the chosen one was
taken (real sockets, no Heat)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.heat import ports
from tripleo_flow.heat.pod import PodLauncher
from tripleo_flow.heat.processes import ProcessesLauncher

HOST = "127.0.0.1"


def _bindable(port: int) -> bool:
    """Whether a plain bind (no SO_REUSEADDR) gets ``port`` now."""
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


def test_a_taken_port_is_left_and_the_launch_runs_again_on_another() -> None:
    holds = ports.Holds(HOST)
    tried: list[int] = []
    extra: list[int] = []

    def launch(port: int) -> str:
        tried.append(port)
        extra.append(holds.take())  # a private server's port, held as the API's
        assert not _bindable(port) and not _bindable(extra[-1])
        if len(tried) == 1:  # another program listens there (SO_REUSEADDR: it may)
            squatter.bind((HOST, port))
            squatter.listen()
            raise ports.PortTaken(HOST, port, "another program")
        return f"on {port}"

    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        assert holds.launching(None, launch, "a Heat") == f"on {tried[1]}"
        assert tried[0] != tried[1]
        assert all(_bindable(p) for p in tried[1:] + extra)  # every hold let go


def test_a_fixed_port_is_not_changed_and_every_attempt_is_bounded() -> None:
    holds = ports.Holds(HOST)
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        fixed = sock.getsockname()[1]
    attempts: list[int] = []

    def taken(port: int) -> None:
        attempts.append(port)
        raise ports.PortTaken(HOST, port, "another program")

    with pytest.raises(exceptions.PortInUse, match=str(fixed)):
        holds.launching(fixed, taken, "a Heat")
    assert attempts == [fixed]
    attempts.clear()
    with pytest.raises(exceptions.PortInUse):
        holds.launching(None, taken, "a Heat")
    assert len(attempts) == ports.ATTEMPTS


def test_outside_a_launch_a_port_is_only_found() -> None:
    assert _bindable(ports.Holds(HOST).take())


def test_a_fixed_port_is_one_launchs_at_a_time() -> None:
    """heat-api listens with SO_REUSEPORT: two launches at once on one fixed port would
    both listen there and split the requests. The second is refused until the first
    lets the port go."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        fixed = sock.getsockname()[1]
    with ports.PortHold(HOST, fixed):
        with pytest.raises(exceptions.PortInUse, match=str(fixed)):
            ports.PortHold(HOST, fixed)
    ports.PortHold(HOST, fixed).close()


def _service_ports(launcher: Any) -> dict[str, int]:
    if isinstance(launcher, PodLauncher):
        launcher._load()
        return dict(launcher._ports)
    return dict(launcher._load().ports)


@pytest.mark.parametrize("kind", ["pod", "processes"])
def test_a_launchs_private_servers_ports_are_held_until_it_ends(tmp_path: Path,
                                                                kind: str) -> None:
    """MariaDB, RabbitMQ, epmd and Erlang distribution get ports the launch holds like
    its API's (another program asking for a free port, or binding one without
    SO_REUSEADDR, cannot take them before the servers bind); let go when it ends."""
    heat_dir = tmp_path / "work"
    launcher: Any = (PodLauncher(heat_dir, image="heat", services_image="services",
                                 podman_url=None, podman_dir=tmp_path)
                     if kind == "pod" else ProcessesLauncher(heat_dir, venv=tmp_path))
    seen: dict[str, int] = {}

    def launch(api_port: int) -> None:
        seen.update(_service_ports(launcher), api=api_port)
        assert len(set(seen.values())) == 5, seen
        assert not [name for name, port in seen.items() if _bindable(port)], seen

    launcher._holds.launching(None, launch, "a Heat")
    assert all(_bindable(port) for port in seen.values())
