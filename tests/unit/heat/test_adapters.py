"""Local adapters with no Heat: heat-dir files, SQLite dump checks, port checks, errors."""

from __future__ import annotations

import socket
import sqlite3
import stat
from pathlib import Path

import pytest

from tripleo_flow import config, exceptions
from tripleo_flow.heat import HEAT_TYPES, make_launcher
from tripleo_flow.heat.db_mariadb import ServerAddress, _check_dump
from tripleo_flow.heat.db_sqlite import SqliteDatabase
from tripleo_flow.heat.launcher import check_port_free
from tripleo_flow.heat.workdir import HeatDir


def test_heat_dir_accepts_work_dir_or_launcher_dir(tmp_path: Path) -> None:
    assert HeatDir(tmp_path).root == tmp_path / "heat-launcher"
    assert HeatDir(tmp_path / "heat-launcher").root == tmp_path / "heat-launcher"


def test_private_files_and_dirs(tmp_path: Path) -> None:
    work = HeatDir(tmp_path)
    work.ensure()
    work.write_private(work.conf_file, "x")
    assert stat.S_IMODE(work.root.stat().st_mode) == 0o700
    assert stat.S_IMODE(work.conf_file.stat().st_mode) == 0o600


def test_lock_refuses_a_second_holder(tmp_path: Path) -> None:
    work = HeatDir(tmp_path)
    with work.locked(), pytest.raises(exceptions.HeatRunning), HeatDir(tmp_path).locked():
        pass


def _heat_like_db(path: Path) -> SqliteDatabase:
    db = SqliteDatabase(path)
    db.create()
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE stack (id TEXT, name TEXT);"
                       "INSERT INTO stack VALUES ('1', 'overcloud');"
                       "CREATE TABLE service (id TEXT, deleted_at TEXT);"
                       "INSERT INTO service VALUES ('e1', NULL);"
                       "INSERT INTO service VALUES ('e0', '2020-01-01');")
    conn.commit()
    conn.close()
    return db


def test_sqlite_dump_restore_round_trip(tmp_path: Path) -> None:
    db = _heat_like_db(tmp_path / "a.sqlite")
    dump = tmp_path / "dump.sql"
    db.dump(dump)
    assert stat.S_IMODE(dump.stat().st_mode) == 0o600
    assert db.engine_ids() == {"e1"}
    other = SqliteDatabase(tmp_path / "b.sqlite")
    other.create()
    other.restore(dump)
    conn = sqlite3.connect(tmp_path / "b.sqlite")
    assert conn.execute("SELECT name FROM stack").fetchall() == [("overcloud",)]
    conn.close()
    other.wipe()
    other.wipe()
    assert not other.exists()


def test_failed_sqlite_dump_raises_and_keeps_old_dump(tmp_path: Path) -> None:
    dump = tmp_path / "dump.sql"
    dump.write_text("previous")
    with pytest.raises(exceptions.HeatError, match="does not exist"):
        SqliteDatabase(tmp_path / "missing.sqlite").dump(dump)
    (tmp_path / "bad.sqlite").write_text("not a database at all" * 100)
    with pytest.raises(exceptions.HeatError, match="failed"):
        SqliteDatabase(tmp_path / "bad.sqlite").dump(dump)
    assert dump.read_text() == "previous"
    assert not list(tmp_path.glob(".dump.sql.partial"))


@pytest.mark.parametrize(("text", "tables", "error"), [
    (b"CREATE TABLE `stack` (\n);\n-- Dump completed on 2026\n", {"stack"}, None),
    (b"CREATE TABLE `stack` (\n);\n", {"stack"}, "incomplete"),
    (b"CREATE TABLE `stack` (\n);\n-- Dump completed\n", {"stack", "resource"}, "resource"),
    (b"", set(), "incomplete"),
])
def test_mariadb_dump_check(tmp_path: Path, text: bytes, tables: set[str],
                            error: str | None) -> None:
    path = tmp_path / "d.sql"
    path.write_bytes(text)
    if error is None:
        _check_dump(path, tables)
    else:
        with pytest.raises(exceptions.HeatError, match=error):
            _check_dump(path, tables)


@pytest.mark.parametrize(("url", "expected"), [
    ("mysql+pymysql://root:pw@127.0.0.1:3307", ("127.0.0.1", 3307, "root", "pw")),
    ("mysql+pymysql://u:p%40ss@db", ("db", 3306, "u", "p@ss")),
])
def test_server_address(url: str, expected: tuple[str, int, str, str]) -> None:
    addr = ServerAddress(url)
    assert (addr.host, addr.port, addr.user, addr.password) == expected


def test_server_address_rejects_other_schemes() -> None:
    with pytest.raises(exceptions.InvalidInput):
        ServerAddress("postgresql://u:p@h/db")


def test_port_in_use() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(exceptions.PortInUse, match=str(port)):
            check_port_free("127.0.0.1", port)
    check_port_free("127.0.0.1", port)


@pytest.mark.parametrize(("heat_type", "cls_name"), [
    ("native", "NativeLauncher"), ("installed", "InstalledLauncher"),
    ("container", "ContainerLauncher"), ("pod", "PodLauncher")])
def test_make_launcher(tmp_path: Path, heat_type: str, cls_name: str) -> None:
    launcher = make_launcher(config.new_conf(), heat_type, tmp_path)
    assert type(launcher).__name__ == cls_name
    assert launcher.heat_type in HEAT_TYPES


def test_kill_with_nothing_running_is_a_no_op(tmp_path: Path) -> None:
    launcher = make_launcher(config.new_conf(), "native", tmp_path)
    assert launcher.kill().stopped == []
    assert launcher.status().running is False


@pytest.mark.parametrize("error", [
    exceptions.HeatNotInstalled("The Heat virtualenv /v", "tripleo-flow heat install"),
    exceptions.DumpNotFound("/w/heat-launcher/heat-db-dump.sql"),
    exceptions.HeatRunning("/w", "heat-all pid 1"),
    exceptions.PortInUse("127.0.0.1", 8006),
    exceptions.HeatError("Heat stopped"),
])
def test_heat_errors_render(error: exceptions.TripleoFlowError) -> None:
    assert str(error)
    assert exceptions.exit_code(error) in (3, 4, 5)


def test_other_heat_type_is_refused(tmp_path: Path) -> None:
    HeatDir(tmp_path).ensure()
    HeatDir(tmp_path).write_run({"heat_type": "pod", "pid": None, "database": {}})
    launcher = make_launcher(config.new_conf(), "native", tmp_path)
    with pytest.raises(exceptions.InvalidInput, match="--heat-type pod"):
        launcher.kill()
