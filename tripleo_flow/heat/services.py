"""A private MariaDB and RabbitMQ for one Heat, run from Debian's packages as our children.

What :mod:`.processes` starts besides heat-api and heat-engine, and nothing else
on the machine knows of: each server has its own directory (on tmpfs when one is
writable, as the pod keeps them on tmpfs mounts), its own ports on 127.0.0.1 and
its own credentials, and reads no file under /etc.

- MariaDB: ``mariadb-install-db`` into the directory, then ``mariadbd`` with no
  defaults file, an init file creating the admin user of ``[heat]``'s database
  adapter (:mod:`.db_mariadb`), and InnoDB not flushing at every commit.
- RabbitMQ: Debian's ``rabbitmq-server`` script with every path moved into the
  directory (config, enabled plugins, env file, mnesia, logs, and ``HOME`` for the
  Erlang cookie written here), its AMQP and distribution ports bound to 127.0.0.1
  and a default user with a random password.  The script is pointed
  (``RABBITMQ_SCRIPTS_DIR``) at a private home whose ``plugins`` directory links only
  the Erlang applications the broker itself needs (the closure of ``rabbit``'s
  ``.app`` dependencies, :func:`broker_applications`), not Debian's 70 plugins: with
  every plugin on the code path, finding modules, config schemas and boot steps took
  most of its start (9-10 s to the AMQP port on this machine kind; about 4.5 s with
  the broker's own 20).  Nor are the Erlang/OTP applications plain AMQP on loopback
  does without (TLS, HTTP, XML, OS monitoring, code tools: :data:`UNSTARTED`) loaded as
  applications: the ``.app`` files naming them are rewritten in that home
  (:func:`without_applications`), since the broker reads the attributes of every module
  of every loaded application at its boot (958 modules loaded; 733 without them, about
  0.6 s less CPU to the AMQP port).  Its port mapper (``epmd``) is started
  by us in the foreground on a private port (``-start_epmd false``): the one Erlang
  starts by itself daemonises out of our process group and outlives the broker.  The
  node is distributed from its boot (``-sname``, on its own distribution port), so it
  registers with that epmd, which is thus started first, and its prelaunch does not
  start a second Erlang VM to make sure an epmd runs (a fraction of a second of a
  launch's start).  Its schedulers are not bound to cores (``+stbt u``): it boots
  beside heat-engine and heat-api on a machine they share.

Every command line names the directory (``--datadir``, or a ``-tripleo_flow_heat``
flag Erlang ignores), so a stray server is found by :func:`process.find_naming`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tripleo_flow import exceptions
from tripleo_flow.heat import mariadb_datadir
from tripleo_flow.heat.db_move import NOTE_SUFFIX

HOST = "127.0.0.1"
#: The broker's Erlang node name.
NODE = "rabbit@localhost"
RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
INSTALL = "apt-get install mariadb-server mariadb-client rabbitmq-server"
#: The server programs a launch needs, and where Debian puts them when PATH lacks sbin.
PROGRAMS = ("mariadbd", "mariadb-install-db", "epmd")
#: The size of MariaDB's redo log: small (a Heat's database is), and made that size by
#: the install (a server started on a log of another size first remakes it).
LOG_FILE_SIZE = "32M"
#: ``mariadb-install-db``'s options (besides the data directory).
INSTALL_OPTIONS = ("--user=root", "--auth-root-authentication-method=socket",
                   "--skip-test-db", f"--innodb-log-file-size={LOG_FILE_SIZE}")


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_open(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((HOST, port)) == 0


def program(name: str) -> str:
    """The path of server program ``name`` (PATH, then /usr/sbin and /usr/bin)."""
    for candidate in (shutil.which(name), f"/usr/sbin/{name}", f"/usr/bin/{name}"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise exceptions.HeatNotInstalled(f"The server program {name}", INSTALL)


def _app_dependencies(app_file: Path) -> list[str]:
    """The ``applications`` and ``included_applications`` an Erlang ``.app`` file names."""
    text = app_file.read_text(errors="replace")
    names: list[str] = []
    for key in ("applications", "included_applications"):
        match = re.search(r"\{\s*" + key + r"\s*,\s*\[([^\]]*)\]", text)
        if match:
            names += re.findall(r"[a-z][a-zA-Z0-9_]*", match.group(1))
    return names


#: Erlang/OTP applications that ``rabbit``, ``rabbit_common`` and ``ranch`` list but
#: that a broker of plain AMQP on loopback has no use for: TLS (ssl, public_key), HTTP
#: (inets), XML (xmerl), OS monitoring (os_mon), code tools (tools, syntax_tools,
#: compiler).  Listed, each is loaded and started, and the boot steps' search loads every
#: module of every loaded application to read its attributes (ssl and inets alone 132
#: modules).  Left out of those lists (:func:`without_applications`), they are not loaded
#: as applications; the few functions the broker calls from their modules (``compile``
#: for the feature flags' registry, ``erl_syntax``, ``xmerl_ucs``) still load from
#: Erlang's code path when called.
UNSTARTED = ("compiler", "inets", "os_mon", "public_key", "ssl", "syntax_tools", "tools",
             "xmerl")


def without_applications(app_text: str, names: tuple[str, ...]) -> str:
    """The text of an Erlang ``.app`` file with ``names`` left out of its
    ``applications`` list (the same text when it names none of them)."""
    def lean(match: re.Match[str]) -> str:
        listed = re.findall(r"[a-z][a-zA-Z0-9_]*", match.group(2))
        kept = [n for n in listed if n not in names]
        return match.group(0) if kept == listed else match.group(1) + ",".join(kept) + "]"

    return re.sub(r"(\{\s*applications\s*,\s*\[)([^\]]*)\]", lean, app_text, count=1)


def broker_applications(plugins: Path) -> dict[str, Path]:
    """The directories under ``plugins`` of ``rabbit`` and every application it needs,
    by name (the closure over their ``.app`` files; Erlang's own applications are not
    there and are left to the runtime)."""
    found = {d.name.rsplit("-", 1)[0]: d for d in plugins.iterdir()
             if d.is_dir() and "-" in d.name}
    wanted, todo = {}, ["rabbit"]
    while todo:
        name = todo.pop()
        if name in wanted or name not in found:
            continue
        wanted[name] = found[name]
        app_file = found[name] / "ebin" / f"{name}.app"
        if app_file.is_file():
            todo += _app_dependencies(app_file)
    if "rabbit" not in wanted:
        raise exceptions.HeatNotInstalled(f"RabbitMQ (no rabbit application in {plugins})",
                                          INSTALL)
    return wanted


def rabbitmq_lib() -> Path:
    """The installed RabbitMQ's directory (``rabbitmq_server-<version>``)."""
    real = Path(os.path.realpath(RABBITMQ_SERVER)).parent.parent
    if (real / "plugins").is_dir() and (real / "sbin").is_dir():
        return real
    raise exceptions.HeatNotInstalled(f"RabbitMQ ({real} has no sbin and plugins)", INSTALL)


def check_installed() -> None:
    """Raise :class:`HeatNotInstalled` unless MariaDB and RabbitMQ are installed."""
    for name in PROGRAMS:
        program(name)
    if not os.access(RABBITMQ_SERVER, os.X_OK):
        raise exceptions.HeatNotInstalled(f"RabbitMQ ({RABBITMQ_SERVER})", INSTALL)


@dataclass(frozen=True)
class Services:
    """Where one Heat's MariaDB and RabbitMQ live and how they are reached."""

    root: Path
    log_dir: Path
    ports: dict[str, int]
    admin_password: str
    rabbit_password: str

    @property
    def datadir(self) -> Path:
        return self.root / "mariadb"

    @property
    def rabbit_home(self) -> Path:
        return self.root / "rabbitmq"

    @property
    def admin_url(self) -> str:
        return f"mysql+pymysql://tfadmin:{self.admin_password}@{HOST}:{self.ports['db']}"

    @property
    def transport_url(self) -> str:
        return f"rabbit://tfheat:{self.rabbit_password}@{HOST}:{self.ports['amqp']}/"

    @property
    def marker(self) -> str:
        """What every server's command line names (its directory)."""
        return str(self.root)

    # -- MariaDB ---------------------------------------------------------------

    def install_mariadb(self, keep_in: Path | None = None) -> None:
        """Create the data directory and the init file.

        :param keep_in: where the first data directory ``mariadb-install-db`` made for
            this server is kept and copied from (:mod:`.mariadb_datadir`); None: always
            installed.
        """
        server = program("mariadbd")
        mariadb_datadir.make(self.datadir, self._install_datadir, keep_in,
                             mariadb_datadir.template_name(server, INSTALL_OPTIONS))
        self.write_init_file()

    def _install_datadir(self, datadir: Path) -> None:
        datadir.mkdir(mode=0o700, parents=True, exist_ok=True)
        log = self.log_dir / "mariadb-install.log"
        with open(log, "ab") as out:
            rc = subprocess.run(
                [program("mariadb-install-db"), "--no-defaults", f"--datadir={datadir}",
                 *INSTALL_OPTIONS],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                check=False).returncode
        if rc != 0:
            raise exceptions.HeatError(
                f"mariadb-install-db failed (exit {rc}) in {datadir}. See {log}.")

    def write_init_file(self) -> None:
        """The file MariaDB runs at start: the admin user of ``[heat]``'s adapter."""
        _write_private(self.root / "mariadb-init.sql", (
            f"CREATE USER IF NOT EXISTS 'tfadmin'@'{HOST}' IDENTIFIED BY "
            f"'{self.admin_password}';\n"
            f"GRANT ALL PRIVILEGES ON *.* TO 'tfadmin'@'{HOST}' WITH GRANT OPTION;\n"))

    def mariadb_command(self, datadir: Path | None = None) -> list[str]:
        """mariadbd on ``datadir`` (default: the directory's own), its socket, pid file
        and init file in the directory (which its command line thus names)."""
        return [program("mariadbd"), "--no-defaults", f"--datadir={datadir or self.datadir}",
                f"--socket={self.root / 'mysqld.sock'}", f"--port={self.ports['db']}",
                f"--bind-address={HOST}", "--user=root", "--skip-name-resolve",
                f"--pid-file={self.root / 'mariadbd.pid'}",
                f"--init-file={self.root / 'mariadb-init.sql'}",
                "--innodb-flush-log-at-trx-commit=2", f"--innodb-log-file-size={LOG_FILE_SIZE}",
                "--max-connections=2000"]

    # -- RabbitMQ --------------------------------------------------------------

    def write_rabbitmq_files(self, cookie: str) -> None:
        """The broker's config, plugin list, env file and Erlang cookie (0600/0400)."""
        home = self.rabbit_home
        (home / "mnesia").mkdir(mode=0o700, parents=True, exist_ok=True)
        (self.log_dir / "rabbitmq").mkdir(mode=0o700, parents=True, exist_ok=True)
        _write_private(home / "rabbitmq.conf", (
            f"listeners.tcp.1 = {HOST}:{self.ports['amqp']}\n"
            "default_user = tfheat\n"
            f"default_pass = {self.rabbit_password}\n"
            "default_vhost = /\n"
            "log.console = false\n"
            "log.file.level = warning\n"))
        _write_private(home / "enabled_plugins", "[].\n")
        self._link_server_home(rabbitmq_lib())
        _write_private(home / "rabbitmq-env.conf", "")
        cookie_file = home / ".erlang.cookie"
        if cookie_file.exists():
            cookie_file.chmod(0o600)
        _write_private(cookie_file, cookie)
        cookie_file.chmod(0o400)

    @property
    def server_home(self) -> Path:
        """The broker's private RABBITMQ_HOME (``sbin``, ``escript``, ``plugins``)."""
        return self.rabbit_home / "server"

    def _link_server_home(self, lib: Path) -> None:
        """Links to the installed scripts and to the broker's applications only."""
        home = self.server_home
        shutil.rmtree(home, ignore_errors=True)
        (home / "plugins").mkdir(mode=0o700, parents=True)
        (home / "sbin").mkdir(mode=0o700)  # a directory: the scripts take its parent
        for script in (lib / "sbin").iterdir():
            (home / "sbin" / script.name).symlink_to(script)
        (home / "escript").symlink_to(lib / "escript")
        for path in broker_applications(lib / "plugins").values():
            name = path.name.rsplit("-", 1)[0]
            app_file = path / "ebin" / f"{name}.app"
            text = app_file.read_text(errors="replace") if app_file.is_file() else ""
            lean = without_applications(text, UNSTARTED)
            if lean == text:
                (home / "plugins" / path.name).symlink_to(path)
                continue
            # Its own directory: links to the application's files, its .app rewritten.
            own = home / "plugins" / path.name
            (own / "ebin").mkdir(mode=0o700, parents=True)
            for item in path.iterdir():
                if item.name != "ebin":
                    (own / item.name).symlink_to(item)
            for item in (path / "ebin").iterdir():
                if item != app_file:
                    (own / "ebin" / item.name).symlink_to(item)
            (own / "ebin" / app_file.name).write_text(lean)

    def epmd_command(self) -> list[str]:
        return [program("epmd"), "-port", str(self.ports["epmd"]), "-address", HOST]

    def rabbitmq_command(self) -> list[str]:
        return [RABBITMQ_SERVER, "-tripleo_flow_heat", self.marker]

    def rabbitmq_env(self) -> dict[str, str]:
        """The broker's environment: ours without any RABBITMQ_/ERL_ setting, plus its own."""
        home = self.rabbit_home
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("RABBITMQ_", "ERL_"))}
        env.update({
            "HOME": str(home),
            # rabbitmq-env takes RABBITMQ_HOME (and so ERL_LIBS) from here.
            "RABBITMQ_SCRIPTS_DIR": str(self.server_home / "sbin"),
            "RABBITMQ_PLUGINS_DIR": str(self.server_home / "plugins"),
            "RABBITMQ_NODENAME": NODE,
            "RABBITMQ_NODE_IP_ADDRESS": HOST,
            "RABBITMQ_NODE_PORT": str(self.ports["amqp"]),
            "RABBITMQ_DIST_PORT": str(self.ports["dist"]),
            "RABBITMQ_CONFIG_FILE": str(home / "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(home / "advanced.config"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(home / "enabled_plugins"),
            "RABBITMQ_CONF_ENV_FILE": str(home / "rabbitmq-env.conf"),
            "RABBITMQ_MNESIA_BASE": str(home / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.log_dir / "rabbitmq"),
            "ERL_EPMD_ADDRESS": HOST,
            "ERL_EPMD_PORT": str(self.ports["epmd"]),
            # Its schedulers not bound to cores (Erlang's own default; RabbitMQ's scripts
            # bind them, +stbt db): a bound scheduler waits for its core while heat-engine
            # and heat-api, started beside the broker, keep it busy, though the other core
            # may be free.
            "RABBITMQ_SCHEDULER_BIND_TYPE": "u",
            # Distributed from its boot (on the dist port, registered with our epmd, which
            # must be up before it), its prelaunch starts no second Erlang VM to check that
            # epmd runs (as it does for a node that boots undistributed).
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS":
                f"-sname {NODE} -kernel inet_dist_use_interface {{127,0,0,1}} "
                f"inet_dist_listen_min {self.ports['dist']} "
                f"inet_dist_listen_max {self.ports['dist']} -start_epmd false",
        })
        return env

    def remove(self) -> bool:
        """Remove the directory (data of both servers) and the note naming its heat-dir
        beside it (:mod:`.shm_orphans`); True when there was a directory."""
        with contextlib.suppress(FileNotFoundError):
            Path(f"{self.root}{NOTE_SUFFIX}").unlink()
        if not self.root.exists():
            return False
        shutil.rmtree(self.root, ignore_errors=True)
        return True


#: Run with the Heat virtualenv's Python (its ``amqp`` library): looks at the consumers of
#: queue ``engine`` every 20 ms (credentials and a deadline read from stdin) and prints
#: their number once there is one, or at the deadline (0: none, or no such queue yet).
ENGINE_CONSUMERS = """\
import json, sys, time
import amqp
args = json.load(sys.stdin)
deadline = time.monotonic() + args["seconds"]
conn = amqp.Connection(host=args["host"], userid=args["user"], password=args["password"],
                       connect_timeout=2)
try:
    conn.connect()
    while True:
        try:
            count = conn.channel().queue_declare("engine", passive=True).consumer_count
        except amqp.exceptions.NotFound:  # the broker closed that channel
            count = 0
        if count or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    print(count)
finally:
    conn.collect()
"""


class EngineConsumers:
    """Whether the broker's ``engine`` queue has had a consumer, watched by one process
    (:data:`ENGINE_CONSUMERS`) started at the first look and left to poll the broker
    while heat-engine's workers start: its own start (a Python importing ``amqp``) is
    not paid again at each look, nor after the engines registered."""

    def __init__(self, python: str, services: Services, seconds: float = 10.0) -> None:
        self._command = [python, "-c", ENGINE_CONSUMERS]
        self._args = {"host": f"{HOST}:{services.ports['amqp']}", "user": "tfheat",
                      "password": services.rabbit_password, "seconds": seconds}
        self._proc: subprocess.Popen[str] | None = None
        self._seen = False

    def found(self) -> bool:
        """True once the watcher saw a consumer; a watcher that stopped without one (its
        deadline, a failed connection) is started again at the next look."""
        import json

        if self._seen:
            return True
        if self._proc is None:
            self._proc = subprocess.Popen(
                self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True)
            assert self._proc.stdin is not None
            with self._proc.stdin:
                self._proc.stdin.write(json.dumps(self._args))
        if self._proc.poll() is None:
            return False
        proc, self._proc = self._proc, None
        assert proc.stdout is not None
        with proc.stdout:
            text = proc.stdout.read().strip()
        code = proc.returncode
        self._seen = code == 0 and text.isdigit() and int(text) > 0
        return self._seen

    def stop(self) -> None:
        """Kill a watcher still running (a launch given up)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
