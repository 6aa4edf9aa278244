"""``processes``: the pod's layout as private child processes, with no container image.

heat-api and heat-engine (``[heat] engine_workers`` workers) from Heat's
virtualenv, on a MariaDB and a RabbitMQ of their own (:mod:`.services`: Debian's
servers, private directories and ports on 127.0.0.1, each port held from its choice
until Heat is ready, as the API's: :mod:`.ports`).  Same files, run record,
readiness and dumps as :mod:`.native` and :mod:`.pod`: ready means the API
answers, every engine worker wrote its ``service`` row and the broker shows a
consumer on the ``engine`` queue; dumps are MariaDB dumps.

Every child is started in a session of its own, so an unowned launch
(``launch heat``) outlives the command.  A launch *owned* by its caller starts
each child under :mod:`.tether`, all of them reading one pipe whose write end
only the owner holds: when the owner dies, even by SIGKILL, every supervisor
kills its child's process group.  A stop kills heat-api and heat-engine first,
dumps from the still running MariaDB, then stops the servers and removes their
directory.  A crashed run's servers are found again by their directory, which
every one of their command lines names.  That directory (on tmpfs) would outlive a
killed owner, with the stack's passwords in its MariaDB data, so an owned launch also
starts a :mod:`.db_move` watcher (``--services``): once the owner and every server are
gone, the MariaDB data moves into the heat-dir (``heat-mariadb``, 0700/0600) and the
rest of the directory is removed; when that watcher was killed too, a later launch of
any heat-dir does it (:mod:`.shm_orphans`, by the note naming the heat-dir beside).
When a resumed deploy adopts the run, MariaDB is started again on that data (where
it is) for the dump the new Heat restores.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import crashpoints
from tripleo_flow.heat import launcher as common
from tripleo_flow.heat import process, render, services, shm_orphans
from tripleo_flow.heat.database import HeatDatabase
from tripleo_flow.heat.db_mariadb import MariaDBDatabase
from tripleo_flow.heat.db_sqlite import default_dir
from tripleo_flow.heat.launcher import KillResult
from tripleo_flow.heat.native import SCHEMA_DIR, NativeLauncher
from tripleo_flow.heat.services import Services

#: Write ends of the tether pipes of the launches this process owns, by heat-dir.
_PIPES: dict[str, int] = {}
#: The order children stop in: Heat first (the dump needs MariaDB), the servers last.
HEAT_PARTS = ("api", "engine")
SERVER_PARTS = ("mariadb", "rabbitmq", "epmd")
SERVICE_TIMEOUT = 120.0


def _release(key: str) -> None:
    """Close this process' end of the tether pipe of ``key`` (its children then die)."""
    fd = _PIPES.pop(key, None)
    if fd is not None:
        os.close(fd)


class ProcessesLauncher(NativeLauncher):
    """heat-api + heat-engine (N workers) with their own MariaDB and RabbitMQ, as
    child processes (see the module docstring)."""

    heat_type = "processes"

    def __init__(self, heat_dir: Any, venv: Path, engine_workers: int = 4,
                 **kwargs: Any) -> None:
        kwargs["database"] = "mariadb"
        super().__init__(heat_dir, venv, **kwargs)
        self.want_engines = engine_workers
        self._services: Services | None = None
        self._tether_read: int | None = None
        #: The servers this launch started (readiness watches them too).
        self._servers: dict[str, subprocess.Popen[bytes]] = {}
        #: heat-api and heat-engine started ahead, waiting for the start file.
        self._ahead: dict[str, subprocess.Popen[bytes]] = {}
        #: Watches the broker for heat-engine's consumer (readiness).
        self._consumers: services.EngineConsumers | None = None

    # -- pieces --------------------------------------------------------------------

    def _load(self) -> Services:
        """This heat-dir's servers: from run.json, or new ports and passwords."""
        if self._services is None:
            record = (self.work.read_run() or {}).get("services") or {}
            root = default_dir(self.work.root) / f"tripleo-flow-heat-{self.work.token}-services"
            self._services = Services(
                root=Path(record.get("root") or root), log_dir=self.work.log_dir,
                ports=record.get("ports") or {k: self._holds.take()
                                              for k in ("db", "amqp", "dist", "epmd")},
                admin_password=record.get("admin_password") or secrets.token_hex(16),
                rabbit_password=record.get("rabbit_password") or secrets.token_hex(16))
        return self._services

    def _database(self, record: dict[str, Any] | None = None) -> HeatDatabase:
        return MariaDBDatabase(self._load().admin_url, f"heat_{self.work.token}",
                               password=record.get("password") if record else None,
                               scratch_dir=self.work.root)

    def _settings(self, db: HeatDatabase) -> render.HeatSettings:
        return dataclasses.replace(super()._settings(db), transport_url=self._load().transport_url,
                                   engine_workers=self.want_engines)

    def _check_installed(self) -> None:
        for name in ("heat-api", "heat-engine", "heat-manage", "python"):
            self._binary(name)
        services.check_installed()

    def _spawn(self, record: dict[str, Any], part: str, command: list[str], marker: str,
               env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start ``command`` in a session of its own (under :mod:`.tether` when owned),
        its output in log/<part>.out; note it in ``record``."""
        log_fd = self.work.open_log(f"{part}.out")
        pass_fds: tuple[int, ...] = ()
        if self._tether_read is not None:
            pass_fds = (self._tether_read,)
            command = [sys.executable, "-I", str(Path(__file__).with_name("tether.py")),
                       str(self._tether_read), "--", *command]
        try:
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_fd,
                                    stderr=subprocess.STDOUT, cwd=self.work.root, env=env,
                                    start_new_session=True, pass_fds=pass_fds)
        finally:
            os.close(log_fd)
        record.setdefault("children", {})[part] = {"pid": proc.pid, "marker": marker}
        self.work.write_run(record)
        return proc

    def _wait(self, probe: Callable[[], bool], what: str, proc: subprocess.Popen[bytes],
              log: str, pause: float = 0.1) -> None:
        deadline = time.monotonic() + SERVICE_TIMEOUT
        while not probe():
            code = proc.poll()
            if code is not None:
                raise exceptions.HeatError(
                    f"{what} exited with status {code} while starting:\n"
                    + common.log_tail(self.work.log_dir / log))
            if time.monotonic() > deadline:
                raise exceptions.HeatError(
                    f"{what} did not start within {SERVICE_TIMEOUT:g} s. "
                    f"See {self.work.log_dir / log}.")
            time.sleep(pause)

    # -- hooks ---------------------------------------------------------------------

    def _prepare(self, record: dict[str, Any]) -> None:
        """Start RabbitMQ (slow: left to start while MariaDB is made) and MariaDB."""
        svc = self._load()
        record["services"] = {"root": str(svc.root), "ports": svc.ports,
                              "admin_password": svc.admin_password,
                              "rabbit_password": svc.rabbit_password}
        self.work.write_run(record)
        if record.get("owner") and self.work.root not in svc.root.parents:
            self._start_db_watcher(record, ["--services"], "--services")
            self.work.write_run(record)
        if record.get("owner"):
            read_fd, write_fd = os.pipe()
            _release(self._marker())
            _PIPES[self._marker()] = write_fd
            self._tether_read = read_fd
        svc.remove()
        svc.root.mkdir(mode=0o700, parents=True)
        if self.work.root not in svc.root.parents:  # on the tmpfs: named for a later sweep
            shm_orphans.write_note(svc.root, self.work)
        svc.write_rabbitmq_files(secrets.token_hex(20))
        epmd = self._spawn(record, "epmd", svc.epmd_command(), str(svc.ports["epmd"]))
        # The broker's node registers with it as it boots (services.NODE: -sname).
        self._wait(lambda: services.port_open(svc.ports["epmd"]), "epmd", epmd, "epmd.out",
                   pause=0.005)
        self._servers = {
            "epmd": epmd,
            "rabbitmq": self._spawn(record, "rabbitmq", svc.rabbitmq_command(), svc.marker,
                                    env=svc.rabbitmq_env())}
        # heat-engine and heat-api import Heat now, beside the servers' start (heat-engine
        # also reads its configuration and loads its plugins), and start for real once
        # _start_heat writes the start file.
        self.start_file.unlink(missing_ok=True)
        self._ahead = {part: self._spawn_heat(record, part, ahead=True)
                       for part in HEAT_PARTS if self._through_runner(part)}
        svc.install_mariadb(keep_in=self.venv / SCHEMA_DIR)
        mariadb = self._spawn(record, "mariadb", svc.mariadb_command(), svc.marker)
        # exists() answers (True or False) once the server takes connections.
        self._wait(lambda: self._answers(), "MariaDB", mariadb, "mariadb.out")

    @property
    def start_file(self) -> Path:
        """Written once the database and broker are ready: heat-api and heat-engine
        started ahead (:mod:`.unpaced` ``--start-when``) then start."""
        return self.work.root / "heat-start"

    def _spawn_heat(self, record: dict[str, Any], part: str,
                    ahead: bool) -> subprocess.Popen[bytes]:
        """Start Heat's ``part`` (``engine``, ``api``); ``ahead``: it waits for
        :attr:`start_file`."""
        conf = str(self.work.conf_file)
        command = self._service_command(part, self.start_file if ahead else None)
        return self._spawn(record, part, [*command, "--config-file", conf], conf)

    def _answers(self) -> bool:
        try:
            self._database().exists()
        except exceptions.HeatError:
            return False
        return True

    def _start_heat(self, record: dict[str, Any]) -> Callable[[], str | None]:
        svc = self._load()
        self._wait(lambda: services.port_open(svc.ports["amqp"]), "RabbitMQ",
                   self._servers["rabbitmq"], "rabbitmq.out", pause=0.02)
        started = dict(self._ahead)
        self.work.write_private(self.start_file, "")  # the ones started ahead go on
        for part in HEAT_PARTS:
            if part not in started:
                started[part] = self._spawn_heat(record, part, ahead=False)
        started.update(self._servers)
        if self._tether_read is not None:  # every child has its copy now
            os.close(self._tether_read)
            self._tether_read = None

        def alive() -> str | None:
            for part, proc in started.items():
                code = proc.poll()
                if code is not None:
                    return (f"{part} exited with status {code}:\n"
                            + common.log_tail(self.work.log_dir / f"{part}.out"))
            return None

        return alive

    def _engines(self, db: HeatDatabase) -> Callable[[], set[str]]:
        consumers = self._consumers = services.EngineConsumers(self._binary("python"),
                                                               self._load())

        def probe() -> set[str]:
            consumed = consumers.found()  # its watcher started at once (the broker is up)
            ids = db.engine_ids()
            return ids if consumed or len(ids) < self.want_engines else set()

        return probe

    def _running(self, record: dict[str, Any]) -> bool:
        api = (record.get("children") or {}).get("api") or {}
        return process.is_running(api.get("pid"), str(self.work.conf_file))

    def _describe(self, record: dict[str, Any]) -> str:
        children = record.get("children") or {}
        pids = ", ".join(f"{part} {c['pid']}" for part, c in sorted(children.items()))
        return f"heat-api, heat-engine ({self.want_engines} workers), MariaDB and RabbitMQ " \
               f"(pids {pids or 'none'})"

    def _kill_parts(self, record: dict[str, Any], parts: tuple[str, ...],
                    marker: str) -> list[str]:
        """SIGKILL the children ``parts`` of ``record`` and any stray naming ``marker``."""
        stopped = []
        children = record.get("children") or {}
        for part in parts:
            child = children.get(part)
            if child and process.kill(child["pid"], child["marker"]):
                stopped.append(f"{part} (pid {child['pid']})")
        for stray in process.find_naming(marker):
            if process.kill(stray, marker):
                stopped.append(f"a stray process (pid {stray})")
        return stopped

    def _stop(self, record: dict[str, Any]) -> list[str]:
        svc = self._load()
        stopped = self._kill_parts(record, HEAT_PARTS, str(self.work.conf_file))
        stopped += self._kill_parts(record, SERVER_PARTS, svc.marker)
        self.start_file.unlink(missing_ok=True)
        self._ahead = {}
        if self._consumers is not None:
            self._consumers.stop()
            self._consumers = None
        _release(self._marker())
        if self._tether_read is not None:
            os.close(self._tether_read)
            self._tether_read = None
        return stopped

    def _teardown(self, record: dict[str, Any], dump: bool) -> KillResult:
        """Stop Heat, dump from the still running MariaDB, then stop the servers."""
        svc = self._load()
        stopped = self._kill_parts(record, HEAT_PARTS, str(self.work.conf_file))
        dumped = None
        db = self._database(record["database"])
        wanted = bool(record.get("ready") and dump)
        datadir = next((d for d in (svc.datadir, self.work.moved_mariadb)
                        if (d / "mysql").is_dir()), None)
        if wanted and datadir is not None and not self._answers():
            # MariaDB died (with a killed owner) and its data outlived it (moved into the
            # heat-dir by the watcher): start it again on that data for the dump (a
            # resumed deploy takes the stack over).
            svc.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            svc.write_init_file()
            self._wait(self._answers, "MariaDB", self._spawn(
                record, "mariadb", svc.mariadb_command(datadir), svc.marker), "mariadb.out")
        try:
            exists = db.exists()
        except exceptions.HeatError:
            exists = False  # MariaDB and its data are gone: nothing to dump
        if wanted and exists:
            db.dump(self.work.dump_file)
            self.work.note_dump_type(self.heat_type)
            dumped = str(self.work.dump_file)
            crashpoints.reached("heat.kill:dumped")
        stopped += self._stop(record)
        self._unwatch_database(record)
        moved = self.work.moved_mariadb
        if svc.remove() | moved.exists():
            stopped.append("mariadb database")
        for leftover in (moved, moved.with_name(f".{moved.name}.partial")):
            shutil.rmtree(leftover, ignore_errors=True)
        self.work.clear_run()
        self._services = None
        return KillResult(heat_dir=str(self.work.root), dump=dumped, stopped=stopped)
