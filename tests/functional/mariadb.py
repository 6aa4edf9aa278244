"""A private MariaDB server on 127.0.0.1 for tests and benchmarks (Debian's mariadb-server).

Its own datadir, socket and port; an admin user with a random password for TCP
access; stopped with SIGKILL of its process group.
"""

from __future__ import annotations

import os
import random
import secrets
import shutil
import socket
import subprocess
import time
from pathlib import Path

from tests.swift_server import _die_with_parent


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range of ports for automatic binds (``ip_local_port_range``)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A free port on 127.0.0.1 *outside* the kernel's ephemeral range.

    A port from ``bind(0)`` is an ephemeral one: while nothing is bound to it
    (before a server starts, or between a killed Heat and its relaunch) the
    kernel may hand it to any other socket on the machine, as the source port
    of an outgoing connection or to another ``bind(0)``, and the server then
    fails with EADDRINUSE.  The kernel never hands out ports below the range.
    """
    low, _ = ephemeral_range()
    if low > 11000:
        rng = random.SystemRandom()
        for _ in range(200):
            port = rng.randrange(10000, low)
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket() as sock:  # no room below the range: the old way
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivateMariaDB:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.datadir = base / "data"
        self.socket = base / "mysqld.sock"
        self.port = free_port()
        self.password = secrets.token_hex(12)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def admin_url(self) -> str:
        return f"mysql+pymysql://tfadmin:{self.password}@127.0.0.1:{self.port}"

    def start(self) -> PrivateMariaDB:
        for tool in ("mariadbd", "mariadb-install-db"):
            if not shutil.which(tool) and not Path(f"/usr/sbin/{tool}").exists():
                raise RuntimeError(f"{tool} is missing: apt-get install mariadb-server")
        self.base.mkdir(parents=True, exist_ok=True)
        log = open(self.base / "install.log", "wb")  # noqa: SIM115
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={self.datadir}",
                        "--user=root", "--auth-root-authentication-method=socket",
                        "--skip-test-db"], stdout=log, stderr=log, check=True)
        log.close()
        mariadbd = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
        out = open(self.base / "mariadbd.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [mariadbd, "--no-defaults", f"--datadir={self.datadir}", f"--socket={self.socket}",
             f"--port={self.port}", "--bind-address=127.0.0.1", "--user=root",
             "--skip-name-resolve", "--innodb-flush-log-at-trx-commit=2",
             f"--pid-file={self.base / 'mariadbd.pid'}"],
            # Its own session (a stop kills the group), and SIGTERM when the test
            # process dies, even killed: no mariadbd outlives its session.
            stdout=out, stderr=out, start_new_session=True, preexec_fn=_die_with_parent)
        out.close()
        self._wait()
        import pymysql

        conn = pymysql.connect(unix_socket=str(self.socket), user="root", autocommit=True)
        with conn.cursor() as cur:
            cur.execute("CREATE USER 'tfadmin'@'%%' IDENTIFIED BY %s", (self.password,))
            cur.execute("GRANT ALL PRIVILEGES ON *.* TO 'tfadmin'@'%' WITH GRANT OPTION")
        conn.close()
        return self

    def _wait(self, timeout: float = 60.0) -> None:
        import pymysql

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"mariadbd exited; see {self.base / 'mariadbd.log'}")
            try:
                pymysql.connect(unix_socket=str(self.socket), user="root").close()
                return
            except pymysql.MySQLError:
                time.sleep(0.1)
        raise RuntimeError("mariadbd did not start in time")

    def admin(self):  # type: ignore[no-untyped-def]
        import pymysql

        return pymysql.connect(host="127.0.0.1", port=self.port, user="tfadmin",
                               password=self.password, autocommit=True)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
