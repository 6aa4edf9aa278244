"""Real services started by the tests as private children on 127.0.0.1."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.mariadb import PrivateMariaDB
from tests.swift_server import _die_with_parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing answered on 127.0.0.1:{port} after {timeout:g} s")


def start_redis(exe: str, workdir: Path, port: int) -> subprocess.Popen[bytes]:
    """A redis-server on 127.0.0.1:``port`` that dies with this process."""
    return subprocess.Popen(
        [exe, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(workdir),
         "--save", "", "--appendonly", "no", "--protected-mode", "yes"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A private redis-server; the test FAILS when Redis is not installed."""
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.fail("redis-server is not installed: run tools/run-tests.sh (apt-get install "
                    "redis-server)")
    port = free_port()
    proc = start_redis(exe, tmp_path_factory.mktemp("redis"), port)
    try:
        wait_for_port(port)
        yield f"redis://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait(timeout=10)


ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")


def _zookeeper_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"ruok")
            return sock.recv(16) == b"imok"
    except OSError:
        return False


@pytest.fixture(scope="session")
def zookeeper_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A private ZooKeeper (Debian's ``zookeeper`` package, standalone, on 127.0.0.1);
    the test FAILS when it is not installed."""
    java = shutil.which("java")
    if java is None or not ZOOKEEPER_JAR.exists():
        pytest.fail("ZooKeeper is not installed: run tools/run-tests.sh (apt-get install "
                    "zookeeper)")
    workdir: Path = tmp_path_factory.mktemp("zookeeper")
    port = free_port()
    conf = workdir / "zoo.cfg"
    # Its admin server would listen on 8080 of every address, and the four-letter
    # commands TaskFlow's board uses (envi) are off unless whitelisted.
    conf.write_text(f"tickTime=2000\ndataDir={workdir / 'data'}\nclientPort={port}\n"
                    "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
                    "4lw.commands.whitelist=ruok,stat,srvr,envi\n")
    log = (workdir / "zookeeper.log").open("wb")
    proc = subprocess.Popen(
        [java, "-Xmx256m", "-cp", str(ZOOKEEPER_JAR),
         "org.apache.zookeeper.server.ZooKeeperServerMain", str(conf)],
        stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
    try:
        deadline = time.monotonic() + 60
        while not _zookeeper_answers(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ZooKeeper did not start: see {workdir / 'zookeeper.log'}")
            time.sleep(0.1)
        yield f"zookeeper://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="session")
def mariadb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateMariaDB]:
    """One private MariaDB for the session; the test FAILS when MariaDB is missing."""
    if not shutil.which("mariadb-install-db") or not shutil.which("mariadb-dump"):
        pytest.fail("MariaDB is missing: run tools/run-tests.sh (apt-get install "
                    "mariadb-server mariadb-client)")
    server = PrivateMariaDB(tmp_path_factory.mktemp("mariadb")).start()
    try:
        yield server
    finally:
        server.stop()


def new_database(server: PrivateMariaDB, prefix: str) -> tuple[str, str]:
    """Create a database of its own on ``server``: ``(name, "user:password@host:port")``."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    conn = server.admin()
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    conn.close()
    return name, f"tfadmin:{server.password}@127.0.0.1:{server.port}"


@pytest.fixture
def mysql_lock_url(mariadb_server: PrivateMariaDB) -> str:
    """tooz's MySQL driver URL on the private MariaDB."""
    name, where = new_database(mariadb_server, "tooz")
    return f"mysql://{where}/{name}"
