"""Every launched Heat listens on a loopback port of its own, recorded in its heat-dir.

Two heat-dirs' Heats run and answer at once (native and processes), each found again
by every later step through its run record (status, clouds.yaml for ``openstack
stack list``, a restore on a new port); a port another program takes between its
choice and Heat's bind is left to it and the launch goes on on another.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.functional.heat.conftest import OpenStack, make_conf
from tripleo_flow.client import Client
from tripleo_flow.heat.workdir import HeatDir

TEMPLATE = str(Path(__file__).with_name("small-stack.yaml"))


def _port(heat_dir: str) -> int:
    record = HeatDir(heat_dir).read_run()
    assert record is not None
    return int(record["port"])


def _stack_names(heat_venv: Path, heat_dir: str) -> list[str]:
    """The stacks ``openstack stack list`` shows through the heat-dir's clouds.yaml."""
    osc = OpenStack(heat_venv, str(HeatDir(heat_dir).clouds_yaml))
    return osc("stack", "list", "-f", "value", "-c", "Stack Name").split()


def _launch_both(clients: list[Client], dirs: list[str], heat_type: str,
                 **kwargs: Any) -> list[dict[str, Any]]:
    """Launch the Heats of ``dirs`` at the same time, one client each."""
    with concurrent.futures.ThreadPoolExecutor(len(dirs)) as pool:
        return list(pool.map(lambda c, d: c.heat.launch(d, heat_type, **kwargs), clients, dirs))


def test_two_heat_dirs_run_and_are_used_at_once(tmp_path: Path, heat_venv: Path) -> None:
    clients = [Client(make_conf(tmp_path / n, heat_venv)) for n in ("x", "y")]
    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    try:
        endpoints = _launch_both(clients, dirs, "native")
        ports = [_port(d) for d in dirs]
        assert ports[0] != ports[1]
        for client, heat_dir, endpoint, port in zip(clients, dirs, endpoints, ports,
                                                    strict=True):
            assert endpoint["endpoint"] == f"http://127.0.0.1:{port}/v1/admin"
            status = client.heat.status(heat_dir)
            assert status["endpoint"] == endpoint["endpoint"] and status["api_answers"]
            assert f"OS_ENDPOINT={endpoint['endpoint']}" in HeatDir(heat_dir).heatrc.read_text()
        # A stack in each at the same time, each seen only by its own Heat.
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda d, name: OpenStack(heat_venv, str(HeatDir(d).clouds_yaml))(
                "stack", "create", "-t", TEMPLATE, "--wait", name), dirs, ("in-a", "in-b")))
        assert [_stack_names(heat_venv, d) for d in dirs] == [["in-a"], ["in-b"]]

        # One is stopped and restored (on a port of its own again) while the other runs.
        assert clients[0].heat.kill(dirs[0])["dump"] == str(HeatDir(dirs[0]).dump_file)
        assert clients[1].heat.status(dirs[1])["api_answers"]
        restored = clients[0].heat.launch(dirs[0], restore_db=True)
        assert restored["endpoint"] == f"http://127.0.0.1:{_port(dirs[0])}/v1/admin"
        assert _stack_names(heat_venv, dirs[0]) == ["in-a"]
        assert _stack_names(heat_venv, dirs[1]) == ["in-b"]
    finally:
        for client, heat_dir in zip(clients, dirs, strict=True):
            client.heat.kill(heat_dir)
            client.close()


def test_two_processes_heats_run_at_once(tmp_path: Path, heat_venv: Path) -> None:
    clients = [Client(make_conf(tmp_path / n, heat_venv, engine_workers=1)) for n in "xy"]
    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    try:
        endpoints = _launch_both(clients, dirs, "processes")
        records = [HeatDir(d).read_run() or {} for d in dirs]
        taken = [{r["port"], *r["services"]["ports"].values()} for r in records]
        assert len(taken[0] | taken[1]) == 2 * 5, taken  # API, MariaDB, AMQP, dist, epmd
        for client, heat_dir, endpoint in zip(clients, dirs, endpoints, strict=True):
            status = client.heat.status(heat_dir)
            assert status["endpoint"] == endpoint["endpoint"] and status["api_answers"]
            assert _stack_names(heat_venv, heat_dir) == []
    finally:
        for client, heat_dir in zip(clients, dirs, strict=True):
            client.heat.kill(heat_dir)
            client.close()


class _Answers(http.server.BaseHTTPRequestHandler):
    """Another program's web server: 200 for ``/``, 404 for anything else."""

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        self.send_response(200 if self.path == "/" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _squatter(work: HeatDir) -> Iterator[dict[str, Any]]:
    """Another program that listens on the port a launch in ``work`` chose as soon as
    its run record names it (before Heat binds it), and answers HTTP there."""
    taken: dict[str, Any] = {}
    stop = threading.Event()

    def squat() -> None:
        while not stop.is_set():
            with contextlib.suppress(Exception):
                record = work.read_run()
                if record and record.get("port"):
                    # SO_REUSEADDR (http.server's default): it may bind beside the hold.
                    server = http.server.HTTPServer(("127.0.0.1", record["port"]), _Answers)
                    taken.update(port=record["port"], server=server)
                    threading.Thread(target=server.serve_forever, daemon=True).start()
                    return
            time.sleep(0.005)

    thread = threading.Thread(target=squat, daemon=True)
    thread.start()
    try:
        yield taken
    finally:
        stop.set()
        thread.join(10)
        if "server" in taken:
            taken["server"].shutdown()
            taken["server"].server_close()


def test_a_port_taken_before_heat_binds_it_is_left_and_heat_launches_on_another(
        tmp_path: Path, heat_venv: Path) -> None:
    client = Client(make_conf(tmp_path, heat_venv))
    heat_dir = str(tmp_path / "work")
    try:
        with _squatter(HeatDir(heat_dir)) as taken:
            endpoint = client.heat.launch(heat_dir, "native")
            assert "port" in taken, "the other program never got the port"
            # The launch saw that what answered there was not its Heat.
            assert _port(heat_dir) != taken["port"]
            assert endpoint["endpoint"] == f"http://127.0.0.1:{_port(heat_dir)}/v1/admin"
            assert client.heat.status(heat_dir)["api_answers"]
            assert _stack_names(heat_venv, heat_dir) == []
    finally:
        client.heat.kill(heat_dir)
        client.close()
