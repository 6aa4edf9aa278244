"""Real heat-all on a real (private) MariaDB: dump with mysqldump, restore, wipe."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.heat.conftest import OpenStack, heat_processes, make_conf
from tests.functional.mariadb import PrivateMariaDB
from tripleo_flow.client import Client
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional
TEMPLATE = str(Path(__file__).with_name("small-stack.yaml"))


@pytest.fixture
def maria_client(tmp_path: Path, heat_venv: Path,
                 mariadb: PrivateMariaDB) -> Iterator[Client]:
    api = Client(make_conf(tmp_path, heat_venv, database="mariadb",
                           mariadb_url=mariadb.admin_url))
    yield api
    api.heat.kill(str(tmp_path / "work"))


def _schemas_and_users(server: PrivateMariaDB, name: str) -> tuple[int, int]:
    conn = server.admin()
    with conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s",
                    (name,))
        schemas = cur.fetchone()[0]
        cur.execute("SELECT COUNT(*) FROM mysql.user WHERE User = %s", (name,))
        users = cur.fetchone()[0]
    conn.close()
    return schemas, users


def test_mariadb_life_cycle(maria_client: Client, tmp_path: Path, heat_venv: Path,
                            mariadb: PrivateMariaDB) -> None:
    heat_dir = str(tmp_path / "work")
    work = HeatDir(heat_dir)
    name = f"heat_{work.token}"
    ep = maria_client.heat.launch(heat_dir, "native")
    assert _schemas_and_users(mariadb, name) == (1, 1)
    conf_text = work.conf_file.read_text()
    assert "mysql+pymysql://" in conf_text and mariadb.password not in conf_text

    osc = OpenStack(heat_venv, ep["clouds_yaml"])
    osc("stack", "create", "-t", TEMPLATE, "--wait", "on-maria")

    dumped = maria_client.heat.dump_db(heat_dir)
    assert dumped == str(work.dump_file)
    assert list(work.root.glob(".my-*")) == []  # the option file is gone

    maria_client.heat.kill(heat_dir)
    assert _schemas_and_users(mariadb, name) == (0, 0)
    assert heat_processes(work.conf_file) == []
    text = work.dump_file.read_text()
    assert "CREATE TABLE `stack`" in text and text.rstrip().splitlines()[-1].startswith(
        "-- Dump completed")
    assert maria_client.heat.kill(heat_dir)["stopped"] == []

    maria_client.heat.launch(heat_dir, "native", restore_db=True)
    listed = json.loads(osc("stack", "list", "-f", "json"))
    assert [(s["Stack Name"], s["Stack Status"]) for s in listed] == [
        ("on-maria", "CREATE_COMPLETE")]
    nodes = json.loads(osc("stack", "output", "show", "on-maria", "nodes", "-f", "json"))
    assert nodes["output_value"] == ["node-0", "node-1"]
    maria_client.heat.kill(heat_dir)
    assert _schemas_and_users(mariadb, name) == (0, 0)
