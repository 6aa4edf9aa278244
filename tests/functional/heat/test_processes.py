"""Heat type ``processes``: heat-api, heat-engine (2 workers), a private MariaDB and RabbitMQ
as child processes (Debian's mariadb-server and rabbitmq-server, no container image)."""

from __future__ import annotations

import json
import re
import socket
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.functional.heat.conftest import OpenStack, heat_processes, make_conf
from tests.functional.heat.test_container import eventually, kill_owner_after_launch
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.heat import database, native, process, services
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional
TEMPLATE = str(Path(__file__).with_name("small-stack.yaml"))


def _listening(port: int) -> set[str]:
    """Addresses with a listening TCP socket on ``port`` (IPv4 and IPv6)."""
    found = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            raw = bytes.fromhex(addr)
            words = b"".join(struct.pack("<I", w) for w in struct.unpack(
                f">{len(raw) // 4}I", raw))
            found.add(socket.inet_ntop(family, words))
    return found


def _ports(record: dict[str, object]) -> list[int]:
    services = record["services"]
    assert isinstance(services, dict)
    return [int(record["port"]), *services["ports"].values()]  # type: ignore[call-overload]


def _leftovers(work: HeatDir, record: dict[str, object]) -> dict[str, object]:
    """What a stopped Heat must not leave: processes, listening ports, the servers' data."""
    root = record["services"]["root"]  # type: ignore[index]
    return {"heat": heat_processes(work.conf_file), "servers": process.find_naming(root),
            "ports": {p: _listening(p) for p in _ports(record) if _listening(p)},
            "data": Path(root).exists()}


def _broker_applications(record: dict[str, Any], work: HeatDir) -> set[str]:
    """The Erlang applications loaded in the running broker of ``record`` (rabbitmqctl)."""
    given = record["services"]
    svc = services.Services(root=Path(given["root"]), log_dir=work.log_dir,
                            ports=given["ports"], admin_password=given["admin_password"],
                            rabbit_password=given["rabbit_password"])
    out = subprocess.run(
        [str(Path(services.RABBITMQ_SERVER).with_name("rabbitmqctl")), "-n", services.NODE,
         "eval", "[A || {A, _, _} <- application:loaded_applications()]."],
        env=svc.rabbitmq_env(), capture_output=True, text=True, check=True, timeout=60).stdout
    return set(re.findall(r"[a-z][a-z0-9_]*", out))


NOTHING = {"heat": [], "servers": [], "ports": {}, "data": False}


def test_processes_life_cycle(tmp_path: Path, heat_venv: Path) -> None:
    api = Client(make_conf(tmp_path, heat_venv, engine_workers=2))
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    try:
        ep = api.heat.launch(heat_dir, "processes")
        record = work.read_run()
        assert record is not None and record["ready"]
        assert sorted(record["children"]) == ["api", "engine", "epmd", "mariadb", "rabbitmq"]
        for port in _ports(record):  # every listener is on loopback
            assert _listening(port) and _listening(port) <= {"127.0.0.1", "::1"}, port
        # No server read /etc: each one's configuration is the run's own.
        rabbit_conf = Path(record["services"]["root"]) / "rabbitmq" / "rabbitmq.conf"
        assert f"127.0.0.1:{record['services']['ports']['amqp']}" in rabbit_conf.read_text()
        status = api.heat.status(heat_dir)
        assert status["running"] and status["api_answers"] and status["database"] == "mariadb"
        # heat-api and heat-engine on RabbitMQ: their RPC replies looked for quickly
        # (tripleo_flow/heat/unpaced.py), the engines also without leaf pacing.
        assert "heat-api with quick RPC replies" in (work.log_dir / "api.out").read_text()
        assert "heat-engine with leaf pacing off, quick RPC replies" in (
            work.log_dir / "engine.out").read_text()
        # heat-engine and heat-api were started ahead (importing Heat while the servers
        # started) and began once the start file was written.
        assert work.root.joinpath("heat-start").exists()
        for part in ("api", "engine"):
            assert f"heat-{part} starts ({work.root / 'heat-start'})" in (
                work.log_dir / f"{part}.out").read_text()
        # The broker ran on a private home linking only its own applications.
        server_home = Path(record["services"]["root"]) / "rabbitmq" / "server"
        apps = {p.name.rsplit("-", 1)[0] for p in (server_home / "plugins").iterdir()}
        assert {"rabbit", "rabbit_common", "rabbitmq_prelaunch", "ra", "osiris",
                "ranch"} <= apps
        assert not apps & {"rabbitmq_management", "rabbitmq_mqtt", "cowboy"}
        beam = [pid for pid in process.find_naming(record["services"]["root"])
                if b"beam" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert beam and f"ERL_LIBS={server_home / 'plugins'}".encode() in (
            Path(f"/proc/{beam[0]}/environ").read_bytes().split(b"\0"))
        # Its node was distributed from its boot (on the distribution port checked above),
        # so its prelaunch started no second Erlang VM to make sure an epmd runs.
        assert b"\0-sname\0rabbit@localhost\0" in Path(f"/proc/{beam[0]}/cmdline").read_bytes()
        # Its schedulers were left unbound (RabbitMQ's scripts bind them to cores).
        assert b"\0-stbt\0u\0" in Path(f"/proc/{beam[0]}/cmdline").read_bytes()
        # It loaded none of the Erlang applications plain AMQP does without (ssl, inets...).
        loaded = _broker_applications(record, work)
        assert {"rabbit", "ranch", "mnesia", "crypto"} <= loaded
        assert not loaded & set(services.UNSTARTED), loaded
        # Heat's empty MariaDB schema is kept in the venv for the next fresh launch.
        heads = database.schema_heads(heat_venv)
        assert (heat_venv / native.SCHEMA_DIR /
                f"heat-schema-{'-'.join(sorted(heads))}.mariadb.sql").is_file()
        with pytest.raises(exceptions.HeatRunning):
            api.heat.launch(heat_dir, "processes")

        osc = OpenStack(heat_venv, ep["clouds_yaml"])
        osc("stack", "create", "-t", TEMPLATE, "--parameter", "length=7", "--wait", "procs")
        killed = api.heat.kill(heat_dir)  # the type is read from run.json
        assert killed["dump"] == str(work.dump_file)
        assert work.dump_file.read_bytes().lstrip().startswith((b"-- MariaDB dump", b"/*M!"))
        assert _leftovers(work, record) == NOTHING
        assert not work.run_file.exists()

        api.heat.launch(heat_dir, "processes", restore_db=True)
        listed = json.loads(osc("stack", "list", "-f", "json"))
        assert [(s["Stack Name"], s["Stack Status"]) for s in listed] == [
            ("procs", "CREATE_COMPLETE")]
        output = json.loads(osc("stack", "output", "show", "procs", "secret_length",
                                "-f", "json"))
        assert output["output_value"] == 7
        restored = work.read_run()
        assert restored is not None
    finally:
        api.heat.kill(heat_dir)
    assert _leftovers(work, restored) == NOTHING
    assert api.heat.kill(heat_dir)["stopped"] == []

    # A fresh launch elsewhere loads the kept schema: no db_sync, a Heat that works.
    other = HeatDir(tmp_path / "other")
    ep = api.heat.launch(str(other.root), "processes")
    try:
        log = other.log_dir / "heat-manage.log"
        assert not log.exists() or "Applying migration" not in log.read_text()
        OpenStack(heat_venv, ep["clouds_yaml"])(
            "stack", "create", "-t", TEMPLATE, "--parameter", "length=3", "--wait", "two")
    finally:
        api.heat.kill(str(other.root))


def test_killed_owners_processes_die_with_it(tmp_path: Path, heat_venv: Path) -> None:
    api = Client(make_conf(tmp_path, heat_venv, engine_workers=1))
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    try:
        kill_owner_after_launch(tmp_path, heat_venv, "processes", engine_workers=1)
        record = work.read_run()
        assert record is not None and record["owner"]["by"] == "deploy"
        # Its watcher then moves MariaDB's data into the heat-dir, for the next launch to
        # remove (waiting for the moment before the move, as this test did, raced with it).
        assert eventually(lambda: _leftovers(work, record) == NOTHING
                          and work.moved_mariadb.is_dir()), \
            (_leftovers(work, record), work.moved_mariadb.is_dir())

        ep = api.heat.launch(heat_dir, "processes")  # cleans up after the killed owner
        assert len(ep["cleaned"]) == 1
        assert "left by a killed deploy" in ep["cleaned"][0]
        assert ep["cleaned"][0].endswith("had already stopped; removed its database")
        fresh = work.read_run()
        assert fresh is not None and fresh["owner"] is None  # a plain launch: owned by nobody
        assert fresh["services"]["admin_password"] != record["services"]["admin_password"]
    finally:
        api.heat.kill(heat_dir)
    assert _leftovers(work, record) == NOTHING


def test_half_failed_launch_undoes_everything(tmp_path: Path, heat_venv: Path) -> None:
    api = Client(make_conf(tmp_path, heat_venv, engine_workers=1))
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    work.ensure()
    work.write_private(work.dump_file, "-- MariaDB dump\nthis is not SQL;\n")
    with pytest.raises(exceptions.HeatError, match="Restoring the Heat database"):
        api.heat.launch(heat_dir, "processes", restore_db=True)
    assert not work.run_file.exists()
    root = Path("/dev/shm") / f"tripleo-flow-heat-{work.token}-services"
    assert heat_processes(work.conf_file) == [] and process.find_naming(str(root)) == []
    assert not root.exists()
    assert work.dump_file.read_text() == "-- MariaDB dump\nthis is not SQL;\n"
