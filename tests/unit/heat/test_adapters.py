"""Local adapters with no Heat: heat-dir files, SQLite dump checks, port checks, errors."""

from __future__ import annotations

import socket
import sqlite3
import stat
from pathlib import Path

import pytest

from tripleo_flow import config, exceptions
from tripleo_flow.heat import HEAT_TYPES, make_launcher, workdir
from tripleo_flow.heat.db_mariadb import MariaDBDatabase, ServerAddress, _check_dump
from tripleo_flow.heat.db_sqlite import SqliteDatabase, autoincrement_sql
from tripleo_flow.heat.ports import PortHold
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


def test_lock_refuses_a_second_holder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workdir, "LOCK_WAIT", 0.3)  # refused all the same, sooner
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
    # Only a line opening with it defines a table (not a row's text, not an empty name).
    (b"-- x\nCREATE TABLE `stack` (\n);\nINSERT 'CREATE TABLE `resource`'\n"
     b"CREATE TABLE `` (\n-- Dump completed\n", {"stack", "resource"}, "resource"),
    (b"-- x\nCREATE TABLE `stack` (\n);\nCREATE TABLE `resource` (\n);\n"
     b"-- Dump completed\n", {"stack", "resource"}, None),
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


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.3.2.1", True), ("localhost", True), ("[::1]", True),
    ("10.0.0.5", False), ("db.example.com", False), ("[::2]", False),
])
def test_server_address_loopback(host: str, loopback: bool) -> None:
    assert ServerAddress(f"mysql+pymysql://u:p@{host}:3306").loopback is loopback


@pytest.mark.parametrize(("host", "tls_off"), [("127.0.0.1", True), ("db.example.com", False)])
def test_mariadb_connections_skip_tls_on_loopback(monkeypatch: pytest.MonkeyPatch, host: str,
                                                   tls_off: bool) -> None:
    """PyMySQL's default (TLS when the server offers it) builds a TLS context with the
    system's CA certificates at each connection: off for a server on loopback only."""
    import pymysql

    seen: list[dict[str, object]] = []
    monkeypatch.setattr(pymysql, "connect", lambda **kwargs: seen.append(kwargs))
    MariaDBDatabase(f"mysql+pymysql://root:pw@{host}:3306", "heat_x")._connect(admin=True)
    assert seen and seen[0]["ssl_disabled"] is tls_off


def test_server_address_rejects_other_schemes() -> None:
    with pytest.raises(exceptions.InvalidInput):
        ServerAddress("postgresql://u:p@h/db")


def test_port_in_use() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(exceptions.PortInUse, match=str(port)):
            PortHold("127.0.0.1", port)
    PortHold("127.0.0.1", port).close()


def test_port_hold_keeps_the_port_from_free_port_requests_not_from_its_server() -> None:
    """A held port is never handed to a bind to port 0 nor to a bind without
    SO_REUSEADDR, while a server setting SO_REUSEADDR (heat-api) binds and listens."""
    with PortHold("127.0.0.1") as hold:
        given = set()
        for _ in range(200):
            with socket.socket() as other:
                other.bind(("127.0.0.1", 0))
                given.add(other.getsockname()[1])
        assert hold.port not in given
        with socket.socket() as plain, pytest.raises(OSError):
            plain.bind(("127.0.0.1", hold.port))
        with socket.socket() as server:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("127.0.0.1", hold.port))
            server.listen()
            with socket.create_connection(("127.0.0.1", hold.port)):
                server.accept()[0].close()


@pytest.mark.parametrize(("heat_type", "cls_name"), [
    ("native", "NativeLauncher"), ("installed", "InstalledLauncher"),
    ("container", "ContainerLauncher"), ("pod", "PodLauncher"),
    ("processes", "ProcessesLauncher")])
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


# The two tables below are written as SQLAlchemy writes Heat's schema for SQLite.
_RPD = ("CREATE TABLE resource_properties_data (\n\tid INTEGER NOT NULL, \n\tdata TEXT, \n"
        "\tPRIMARY KEY (id)\n)")
_EVENT = ("CREATE TABLE event (\n\tid INTEGER NOT NULL, \n\tuuid VARCHAR(36), \n"
          "\trsrc_prop_data_id INTEGER, \n\tPRIMARY KEY (id), \n"
          "\tCONSTRAINT ev_rsrc_prop_data_ref FOREIGN KEY(rsrc_prop_data_id) "
          "REFERENCES resource_properties_data (id), \n\tUNIQUE (uuid)\n)")


def test_autoincrement_sql_only_for_integer_id_keys() -> None:
    rebuilt = autoincrement_sql(_RPD)
    assert rebuilt is not None
    assert "id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT," in rebuilt
    assert "PRIMARY KEY (id)" not in rebuilt
    assert autoincrement_sql(rebuilt) is None  # already done
    assert autoincrement_sql("CREATE TABLE service (\n\tid VARCHAR(36) NOT NULL, \n"
                             "\tPRIMARY KEY (id)\n)") is None
    assert autoincrement_sql("CREATE TABLE sync_point (\n\tentity_id VARCHAR(36) NOT NULL, "
                             "\n\tPRIMARY KEY (entity_id)\n)") is None


def test_keep_ids_unique_never_hands_out_a_deleted_id_again(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "heat.sqlite")
    db.create()
    conn = sqlite3.connect(db.path)
    conn.executescript(f"{_RPD};\n{_EVENT};\nCREATE INDEX ix_event_uuid ON event (uuid);\n"
                       "INSERT INTO resource_properties_data VALUES (1, 'a'), (2, 'b');\n"
                       "INSERT INTO event VALUES (1, 'u1', 2);")
    conn.commit()
    conn.close()

    db.keep_ids_unique()
    db.keep_ids_unique()  # a second pass (a restored dump) changes nothing

    conn = sqlite3.connect(db.path)
    assert conn.execute("SELECT id, data FROM resource_properties_data").fetchall() == [
        (1, "a"), (2, "b")]
    assert conn.execute("SELECT id, uuid, rsrc_prop_data_id FROM event").fetchall() == [
        (1, "u1", 2)]
    assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' "
                        "AND name = 'ix_event_uuid'").fetchall() == [("ix_event_uuid",)]
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    # The highest row goes; the next row gets a new id, not the freed one (a
    # plain INTEGER key would give 2 again, and a later delete of "2" would
    # remove it).
    conn.execute("DELETE FROM resource_properties_data WHERE id = 2")
    conn.execute("INSERT INTO resource_properties_data (data) VALUES ('c')")
    conn.commit()
    assert conn.execute("SELECT id FROM resource_properties_data WHERE data = 'c'"
                        ).fetchone() == (3,)
    conn.close()

    # A dump keeps the counter: restored, the freed ids stay unused.
    dump = tmp_path / "dump.sql"
    db.dump(dump)
    other = SqliteDatabase(tmp_path / "restored.sqlite")
    other.create()
    other.restore(dump)
    other.keep_ids_unique()
    conn = sqlite3.connect(other.path)
    conn.execute("DELETE FROM resource_properties_data WHERE id = 3")
    conn.execute("INSERT INTO resource_properties_data (data) VALUES ('d')")
    assert conn.execute("SELECT id FROM resource_properties_data WHERE data = 'd'"
                        ).fetchone() == (4,)
    conn.close()
