"""The processes Heat's MariaDB on a data directory copied from the one kept by the first
install (heat/mariadb_datadir.py): the real mariadb-install-db and mariadbd."""

from __future__ import annotations

import secrets
import subprocess
import time
from pathlib import Path
from typing import Any

import pymysql
import pytest

from tripleo_flow.heat import services

pytestmark = pytest.mark.functional


def _services(root: Path) -> services.Services:
    root.mkdir(mode=0o700)
    (root / "log").mkdir()
    return services.Services(root=root, log_dir=root / "log",
                             ports={"db": services.free_port()},
                             admin_password=secrets.token_hex(8), rabbit_password="unused")


def _system_tables(svc: services.Services) -> dict[str, Any]:
    """What the running server of ``svc`` holds: its users, system tables and databases."""
    proc = subprocess.Popen(svc.mariadb_command(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = pymysql.connect(host=services.HOST, port=svc.ports["db"],
                                       user="tfadmin", password=svc.admin_password)
                break
            except pymysql.err.OperationalError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE heat_check")  # it serves writes too
            cur.execute("SELECT User, Host FROM mysql.global_priv ORDER BY User, Host")
            users = cur.fetchall()
            cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES "
                        "WHERE TABLE_SCHEMA = 'mysql' ORDER BY TABLE_NAME")
            tables = cur.fetchall()
            cur.execute("SHOW DATABASES")
            databases = sorted(cur.fetchall())
        conn.close()
        return {"users": users, "tables": tables, "databases": databases}
    finally:
        proc.kill()
        proc.wait()


def test_a_copied_data_directory_serves_as_an_installed_one(tmp_path: Path) -> None:
    keep = tmp_path / "keep"
    installed, copied = _services(tmp_path / "a"), _services(tmp_path / "b")
    installed.install_mariadb(keep_in=keep)
    copied.install_mariadb(keep_in=keep)
    assert (installed.log_dir / "mariadb-install.log").exists()
    assert not (copied.log_dir / "mariadb-install.log").exists()  # copied, not installed
    assert len(list(keep.iterdir())) == 1
    # The redo log is made at the size the server runs with (no remake at each start).
    size = int(services.LOG_FILE_SIZE.rstrip("M")) << 20
    assert (copied.datadir / "ib_logfile0").stat().st_size == size
    first, second = _system_tables(installed), _system_tables(copied)
    assert second == first
    assert ("tfadmin", services.HOST) in first["users"] and len(first["tables"]) > 20
