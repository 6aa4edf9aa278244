"""Real heat-all, launched natively: the whole life cycle and its failure modes."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import stat
import time
from pathlib import Path

import pytest
from taskflow import engines, task
from taskflow.patterns import linear_flow

from tests.engine_helpers import ActionTask
from tests.functional.heat.conftest import OpenStack, heat_processes, make_conf
from tripleo_flow import exceptions
from tripleo_flow.actions.heat import LaunchHeat
from tripleo_flow.client import Client
from tripleo_flow.heat import database, native, process
from tripleo_flow.heat.db_sqlite import SqliteDatabase
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional
TEMPLATE = str(Path(__file__).with_name("small-stack.yaml"))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _sqlite_db(work: HeatDir) -> Path:
    record = work.read_run()
    assert record is not None
    return Path(record["database"]["path"])


def test_launch_stack_kill_restore_kill(client: Client, tmp_path: Path,
                                        heat_venv: Path) -> None:
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    ep = client.heat.launch(heat_dir, "native")
    record = work.read_run()
    assert record is not None  # the port it took is recorded for every later step
    assert ep["endpoint"] == f"http://127.0.0.1:{record['port']}/v1/admin"
    db_file = _sqlite_db(work)
    assert db_file.exists()
    # Heat's integer ids are never handed out twice (SQLite reuses a freed highest id).
    schema = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
    rpd_sql = schema.execute("SELECT sql FROM sqlite_master WHERE name = "
                             "'resource_properties_data'").fetchone()[0]
    schema.close()
    assert "AUTOINCREMENT" in rpd_sql
    # The empty schema is kept in the venv: the next fresh launch copies it.
    heads = database.schema_heads(heat_venv)
    template = heat_venv / native.SCHEMA_DIR / f"heat-schema-{'-'.join(sorted(heads))}.sqlite"
    assert heads and SqliteDatabase(template).schema_revisions() == heads

    # Artifacts are private; the clouds.yaml entry is the one the seed documents.
    assert _mode(work.root) == 0o700 and _mode(work.log_dir) == 0o700
    for name in ("heat.conf", "api-paste.ini", "token_file.json", "heatrc", "run.json"):
        assert _mode(work.root / name) == 0o600, name
    assert "enforce_new_defaults = false" in work.conf_file.read_text()
    assert f"OS_ENDPOINT={ep['endpoint']}" in work.heatrc.read_text()

    status = client.heat.status(heat_dir)
    assert status["running"] and status["api_answers"]

    with pytest.raises(exceptions.HeatRunning) as refused:
        client.heat.launch(heat_dir, "native")
    assert "--kill" in str(refused.value)

    osc = OpenStack(heat_venv, ep["clouds_yaml"])
    osc("stack", "create", "-t", TEMPLATE, "--parameter", "length=7", "--wait", "small")
    assert "CREATE_COMPLETE" in osc("stack", "list", "-f", "value", "-c", "Stack Status")

    pids = heat_processes(work.conf_file)
    assert pids
    killed = client.heat.kill(heat_dir)
    assert killed["dump"] == str(work.dump_file)
    assert heat_processes(work.conf_file) == []
    assert not db_file.exists() and not work.run_file.exists()
    assert _mode(work.dump_file) == 0o600

    # The dump is restorable on its own and holds the stack.
    mem = sqlite3.connect(":memory:")
    mem.executescript(work.dump_file.read_text())
    assert mem.execute("SELECT name FROM stack WHERE name = 'small'").fetchall() == [("small",)]
    mem.close()

    again = client.heat.kill(heat_dir)
    assert again == {"heat_dir": str(work.root), "dump": None, "stopped": []}

    syncs = _db_syncs(work)
    client.heat.launch(heat_dir, "native", restore_db=True)
    # The dump was at the schema heads of the venv's Heat: no db_sync (Heat's import).
    assert _db_syncs(work) == syncs
    listed = json.loads(osc("stack", "list", "-f", "json"))
    assert [(s["Stack Name"], s["Stack Status"]) for s in listed] == [
        ("small", "CREATE_COMPLETE")]
    outputs = {key: json.loads(osc("stack", "output", "show", "small", key, "-f", "json"))
               ["output_value"] for key in ("secret_length", "nodes")}
    assert outputs["secret_length"] == 7
    assert outputs["nodes"] == ["node-0", "node-1"]
    resources = osc("stack", "resource", "list", "small", "-f", "value", "-c", "resource_name")
    assert sorted(resources.split()) == ["group", "secret"]

    client.heat.kill(heat_dir)
    assert heat_processes(work.conf_file) == []
    assert not _sqlite_db_exists(db_file)

    # A fresh launch elsewhere: the kept schema, no db_sync, a Heat that creates stacks.
    other = HeatDir(tmp_path / "other")
    ep = client.heat.launch(str(other.root), "native")
    try:
        assert _db_syncs(other) == 0
        OpenStack(heat_venv, ep["clouds_yaml"])(
            "stack", "create", "-t", TEMPLATE, "--parameter", "length=3", "--wait", "two")
    finally:
        client.heat.kill(str(other.root))


def _db_syncs(work: HeatDir) -> int:
    """How many times heat-manage db_sync ran in ``work`` (its log is appended to)."""
    log = work.log_dir / "heat-manage.log"
    return log.read_text().count("Applying migration(s)") if log.exists() else 0


def _sqlite_db_exists(db_file: Path) -> bool:
    return any(Path(f"{db_file}{s}").exists() for s in ("", "-journal", "-wal"))


def test_fixed_port_in_use_is_refused_and_leaves_nothing(tmp_path: Path,
                                                         heat_venv: Path) -> None:
    heat_dir = str(tmp_path / "work")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        client = Client(make_conf(tmp_path, heat_venv, api_port=port))
        with pytest.raises(exceptions.PortInUse) as err:
            client.heat.launch(heat_dir, "native")
    assert str(port) in str(err.value)
    assert not HeatDir(heat_dir).run_file.exists()


def test_crashed_run_is_cleaned_by_next_launch(client: Client, tmp_path: Path,
                                               heat_venv: Path) -> None:
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    client.heat.launch(heat_dir, "native")
    OpenStack(heat_venv, str(work.clouds_yaml))(
        "stack", "create", "-t", TEMPLATE, "--wait", "before-crash")
    record = work.read_run()
    assert record is not None
    os.kill(record["pid"], signal.SIGKILL)  # the crash: heat-all dies, run.json stays
    # SIGKILL is delivered asynchronously: wait (bounded) until the process has died,
    # as it has by the time anyone looks after a real crash.
    deadline = time.monotonic() + 15
    while process.cmdline(record["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.cmdline(record["pid"]) == []

    status = client.heat.status(heat_dir)
    assert not status["running"] and "crashed" in status["detail"]

    client.heat.launch(heat_dir, "native", restore_db=True)
    names = OpenStack(heat_venv, str(work.clouds_yaml))("stack", "list", "-f", "value",
                                                        "-c", "Stack Name")
    assert names.split() == ["before-crash"]
    new_record = work.read_run()
    assert new_record is not None and new_record["pid"] != record["pid"]


def test_half_failed_launch_undoes_everything(client: Client, tmp_path: Path) -> None:
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    work.ensure()
    work.write_private(work.dump_file, "this is not SQL;\n")
    with pytest.raises(exceptions.HeatError) as err:
        client.heat.launch(heat_dir, "native", restore_db=True)
    assert "Restoring the Heat database" in str(err.value)
    assert not work.run_file.exists()
    assert heat_processes(work.conf_file) == []
    assert list(Path("/dev/shm").glob(f"tripleo-flow-heat-{work.token}*")) == []
    assert work.dump_file.read_text() == "this is not SQL;\n"


def test_missing_venv_names_the_install_command(tmp_path: Path) -> None:
    api = Client(make_conf(tmp_path, tmp_path / "no-venv"))
    with pytest.raises(exceptions.HeatNotInstalled) as err:
        api.heat.launch(str(tmp_path / "work"), "native")
    assert "tripleo-flow heat install" in str(err.value)
    assert not HeatDir(tmp_path / "work").run_file.exists()


def test_restore_without_dump_is_not_found(client: Client, tmp_path: Path) -> None:
    with pytest.raises(exceptions.DumpNotFound):
        client.heat.launch(str(tmp_path / "work"), "native", restore_db=True)


class _Boom(task.Task):  # type: ignore[misc]
    def execute(self) -> None:
        raise RuntimeError("a later task failed")


def test_launch_action_reverts_when_flow_fails(client: Client, tmp_path: Path) -> None:
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    flow = linear_flow.Flow("deploy").add(ActionTask(LaunchHeat(client._session.context)), _Boom())
    with pytest.raises(RuntimeError, match="a later task failed"):
        engines.run(flow, store={"heat_dir": heat_dir, "heat_type": "native",
                                 "restore_db": False})
    assert heat_processes(work.conf_file) == []
    assert not work.run_file.exists()
    assert not work.dump_file.exists()


def test_installed_type_starts_and_stops_nothing(client: Client, tmp_path: Path,
                                                 heat_venv: Path) -> None:
    native_dir = str(tmp_path / "work")
    ep = client.heat.launch(native_dir, "native")
    conf = make_conf(tmp_path / "other", heat_venv, endpoint=ep["endpoint"])
    other = Client(conf)
    got = other.heat.launch(str(tmp_path / "installed"), "installed")
    assert got["endpoint"] == ep["endpoint"]
    assert other.heat.kill(str(tmp_path / "installed"), "installed")["stopped"] == []
    assert heat_processes(HeatDir(native_dir).conf_file)
    assert OpenStack(heat_venv, got["clouds_yaml"])("stack", "list").strip() == ""
