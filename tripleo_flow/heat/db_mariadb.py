"""MariaDB adapter of :class:`~tripleo_flow.heat.database.HeatDatabase`.

Each heat-dir gets a database and a user of its own (``heat_<token>``, random
password) on the server of ``[heat] mariadb_url``; wipe drops both.  Dumps use
``mysqldump`` (``mariadb-dump``) with the exit status checked, its
``-- Dump completed`` trailer required and every table present; restores use
the ``mariadb`` client.  Credentials reach both tools through a 0600 option
file that is removed afterwards, never through the command line.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from tripleo_flow import exceptions
from tripleo_flow.heat import database
from tripleo_flow.heat.database import tmp_path

FILE_MODE = 0o600
#: What opens, at the start of a line, each table's definition in a dump.
_CREATE_TABLE = b"CREATE TABLE `"


class ServerAddress:
    """Host, port, user and password parsed from ``mysql+pymysql://u:p@host:port``."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if not parts.scheme.startswith("mysql") or not parts.hostname:
            raise exceptions.InvalidInput(
                "[heat] mariadb_url must look like mysql+pymysql://USER:PASSWORD@HOST:PORT"
            )
        self.host = parts.hostname
        self.port = parts.port or 3306
        self.user = unquote(parts.username or "root")
        self.password = unquote(parts.password or "")

    @property
    def loopback(self) -> bool:
        """Whether the server is on this machine's loopback interface."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:  # a host name
            return False


def _tool(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise exceptions.HeatNotInstalled(
        f"The MariaDB client ({' or '.join(names)})", "apt-get install mariadb-client"
    )


class MariaDBDatabase:
    """A Heat database with its own user on a MariaDB server."""

    kind = "mariadb"

    def __init__(self, admin_url: str, name: str, password: str | None = None,
                 scratch_dir: Path | None = None) -> None:
        self.server = ServerAddress(admin_url)
        self.admin_url = admin_url
        self.name = name
        self.user = name
        self.password = password or secrets.token_hex(16)
        self.scratch_dir = scratch_dir

    @property
    def url(self) -> str:
        return (f"mysql+pymysql://{self.user}:{self.password}@{self.server.host}:"
                f"{self.server.port}/{self.name}?charset=utf8")

    def record(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "password": self.password}

    # -- admin side ------------------------------------------------------------

    def _connect(self, admin: bool, database: str | None = None) -> Any:
        import pymysql

        user, password = ((self.server.user, self.server.password) if admin
                          else (self.user, self.password))
        try:
            # TLS on loopback protects nothing, and PyMySQL's default (TLS if the server
            # offers it) builds a context with the system's CA certificates at every
            # connection: 20 ms of CPU, 17 times in a processes launch.
            return pymysql.connect(host=self.server.host, port=self.server.port, user=user,
                                   password=password, database=database, connect_timeout=5,
                                   autocommit=True, ssl_disabled=self.server.loopback)
        except pymysql.MySQLError as exc:
            raise exceptions.HeatError(
                f"Cannot connect to MariaDB at {self.server.host}:{self.server.port} as "
                f"{user!r}: {exc}. Check [heat] mariadb_url and that the server runs."
            ) from exc

    def _admin(self, *statements: tuple[str, tuple[Any, ...]]) -> list[Any]:
        import pymysql

        conn = self._connect(admin=True)
        try:
            with conn.cursor() as cur:
                results = []
                for sql, args in statements:
                    cur.execute(sql, args or None)
                    results.append(cur.fetchall())
                return results
        except pymysql.MySQLError as exc:
            raise exceptions.HeatError(
                f"MariaDB refused an operation on database {self.name!r}: {exc}"
            ) from exc
        finally:
            conn.close()

    def exists(self) -> bool:
        rows = self._admin(("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA "
                            "WHERE SCHEMA_NAME = %s", (self.name,)))[0]
        return bool(rows)

    def create(self) -> None:
        self.wipe()
        self._admin(
            (f"CREATE DATABASE `{self.name}` CHARACTER SET utf8mb4", ()),
            ("CREATE USER %s@'%%' IDENTIFIED BY %s", (self.user, self.password)),
            (f"GRANT ALL PRIVILEGES ON `{self.name}`.* TO %s@'%%'", (self.user,)),
        )

    def wipe(self) -> None:
        self._admin((f"DROP DATABASE IF EXISTS `{self.name}`", ()),
                    ("DROP USER IF EXISTS %s@'%%'", (self.user,)))

    def _tables(self) -> set[str]:
        rows = self._admin(("SELECT TABLE_NAME FROM information_schema.TABLES "
                            "WHERE TABLE_SCHEMA = %s", (self.name,)))[0]
        return {str(r[0]) for r in rows}

    def copy_of(self, template: Path) -> bool:
        """Load the dump ``template`` (an empty schema) into this just created
        database; False, with the database empty again, when it cannot be loaded."""
        if not template.is_file():
            return False
        try:
            self.restore(template)
        except exceptions.HeatError:
            self.create()
            return False
        return True

    def keep_copy(self, template: Path) -> None:
        """Keep a dump of this database (an empty schema) at ``template``, replaced
        whole (each process dumps to a name of its own first: two first launches at
        once never write one file); nothing when its directory is not writable."""
        mine = template.with_name(f".{template.name}.{os.getpid()}")
        try:
            template.parent.mkdir(parents=True, exist_ok=True)
            self.dump(mine)
            os.replace(mine, template)
        except (OSError, exceptions.HeatError):
            with contextlib.suppress(OSError):
                mine.unlink()

    def keep_ids_unique(self) -> None:
        """Nothing: InnoDB never hands an AUTO_INCREMENT id out twice while it runs,
        and a dump keeps the counter (see :meth:`SqliteDatabase.keep_ids_unique`)."""

    def engine_ids(self) -> set[str]:
        return self._column("SELECT id FROM service WHERE deleted_at IS NULL")

    def schema_revisions(self) -> set[str]:
        return self._column("SELECT version_num FROM alembic_version")

    def _column(self, query: str) -> set[str]:
        """The first column of ``query``'s rows, as Heat's user; empty when it fails."""
        import pymysql

        try:
            conn = self._connect(admin=False, database=self.name)
        except exceptions.HeatError:
            return set()
        try:
            with conn.cursor() as cur:
                cur.execute(query)
                return {str(r[0]) for r in cur.fetchall()}
        except pymysql.MySQLError:
            return set()
        finally:
            conn.close()

    def read(self, *queries: tuple[str, tuple[Any, ...]]) -> list[list[tuple[Any, ...]]]:
        """The rows of each query, as Heat's user, in one read-only transaction
        (InnoDB: one consistent snapshot); ``?`` placeholders."""
        import pymysql

        conn = self._connect(admin=False, database=self.name)
        try:
            with conn.cursor() as cur:
                cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
                results = []
                for sql, args in queries:
                    cur.execute(sql.replace("?", "%s"), args or None)
                    results.append([tuple(row) for row in cur.fetchall()])
                cur.execute("COMMIT")
                return results
        except pymysql.MySQLError as exc:
            raise exceptions.HeatError(
                f"Cannot read Heat's database {self.name!r}: {exc}") from exc
        finally:
            conn.close()

    # -- dump and restore --------------------------------------------------------

    @contextlib.contextmanager
    def _option_file(self) -> Iterator[Path]:
        """A 0600 ``[client]`` option file with this database's credentials."""
        fd, name = tempfile.mkstemp(prefix=".my-", suffix=".cnf", dir=self.scratch_dir)
        try:
            os.fchmod(fd, FILE_MODE)
            with os.fdopen(fd, "w") as handle:
                handle.write(f"[client]\nuser={self.user}\npassword={self.password}\n"
                             f"host={self.server.host}\nport={self.server.port}\n"
                             "protocol=tcp\n")
            yield Path(name)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)

    def dump(self, path: Path) -> None:
        tool = _tool("mariadb-dump", "mysqldump")
        partial = tmp_path(path)
        try:
            with self._option_file() as options:
                fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
                with os.fdopen(fd, "wb") as out:
                    proc = subprocess.Popen(
                        [tool, f"--defaults-extra-file={options}", "--single-transaction",
                         "--no-tablespaces", "--skip-lock-tables", self.name],
                        stdout=out, stderr=subprocess.PIPE)
                    try:
                        tables = self._tables()  # while the dump runs
                    finally:
                        _, err = proc.communicate()
            if proc.returncode != 0:
                raise exceptions.HeatError(
                    f"Dumping the Heat database {self.name!r} failed ({tool} exited "
                    f"{proc.returncode}): {err.decode(errors='replace').strip()}"
                )
            _check_dump(partial, tables)
            os.replace(partial, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
            raise

    def restore(self, path: Path) -> None:
        database.check_dump_kind(path, self.kind)
        tool = _tool("mariadb", "mysql")
        with self._option_file() as options, open(path, "rb") as dump:
            proc = subprocess.run([tool, f"--defaults-extra-file={options}", self.name],
                                  stdin=dump, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, check=False)
        if proc.returncode != 0:
            raise exceptions.HeatError(
                f"Restoring the Heat database {self.name!r} from {path} failed ({tool} exited "
                f"{proc.returncode}): {proc.stderr.decode(errors='replace').strip()}"
            )


def _check_dump(path: Path, tables: set[str]) -> None:
    """Raise unless ``path`` is a complete dump holding every table in ``tables``."""
    data = path.read_bytes()
    tail = data[-200:].decode(errors="replace")
    if "-- Dump completed" not in tail:
        raise exceptions.HeatError(f"The dump {path} is incomplete (no completion trailer).")
    missing = sorted(tables - _created_tables(data))
    if missing:
        raise exceptions.HeatError(f"The dump {path} lacks tables: {', '.join(missing)}.")


def _created_tables(data: bytes) -> set[str]:
    """The tables a dump creates (a line opening with ``CREATE TABLE `name```), found with
    ``bytes.find``: a multi-line regex over a THT stack's 47 MB dump took 0.22 s of CPU
    in each stop of Heat, this 0.01 s."""
    line = b"\n" + _CREATE_TABLE
    starts = [len(_CREATE_TABLE)] if data.startswith(_CREATE_TABLE) else []
    at = data.find(line)
    while at >= 0:
        starts.append(at + len(line))
        at = data.find(line, at + 1)
    names = set()
    for start in starts:
        end = data.find(b"`", start)
        if end > start:
            names.add(data[start:end].decode(errors="replace"))
    return names
