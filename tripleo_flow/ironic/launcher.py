"""``tripleo-flow launch ironic``: a local all-in-one Ironic as a child process.

One ``ironic`` process (API and conductor in one; it forks a worker) started in
a session of its own, so it outlives the launching command and a kill stops
its whole process group.  SQLite on tmpfs while it runs (SQLite on disk is
fsync-bound); a kill saves the database into the ironic-launcher directory and
the next launch starts from it, so registered nodes survive a restart.

It listens on 127.0.0.1 on a free port chosen at launch, recorded in
``run.json`` (:func:`tripleo_flow.ironic.endpoint` reads it from there).

A launch *owned* by its caller (``owned_by``: a test session, a benchmark)
runs under :mod:`tripleo_flow.heat.tether`, so it dies with its owner even on
SIGKILL; the next launch or kill then finds the leftovers, stops them and drops
the database of that half-done run without saving it (the last saved one stays).
Its database, with the nodes' BMC credentials, does not wait for that launch on the
tmpfs: a :mod:`.db_drop` watcher removes it once the owner and its Ironic are gone;
when that watcher was killed too, a later launch of any ironic-dir removes it
(:data:`ORPHANS`, swept by :mod:`tripleo_flow.heat.shm_orphans` through the note
naming the ironic-dir beside the file).
The live database is created with mode 0600 before anything writes to it (SQLite
gives its journals the same mode).
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.heat import process, shm_orphans
from tripleo_flow.heat.db_sqlite import SqliteDatabase, default_dir
from tripleo_flow.heat.launcher import log_tail
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.ironic import db_drop
from tripleo_flow.ironic.render import IronicSettings, ironic_conf
from tripleo_flow.ironic.workdir import IronicDir
from tripleo_flow.workspace import owner

LOG = logging.getLogger(__name__)
HOST = "127.0.0.1"
#: Write ends of the tether pipes of the Ironics this process owns, by ironic.conf path.
_TETHERS: dict[str, int] = {}
#: The database watchers (:mod:`.db_drop`) this process started, by ironic.conf path.
_DB_WATCHERS: dict[str, process.Watcher] = {}


def _drop(db: Path, work: HeatDir) -> str:
    SqliteDatabase(db).wipe()  # with its journals and note
    return f"removed {db}, left by a killed run (its owner's database is never kept)"


#: A killed owner's Ironic database on the tmpfs, as :mod:`.db_drop` finds it.
ORPHANS = shm_orphans.Kind(re.compile(r"^tripleo-flow-ironic-([0-9a-f]{10})\.sqlite$"),
                           IronicDir, lambda record: record.get("database"), _drop,
                           label="ironic-dir")


@dataclass(frozen=True)
class IronicEndpoint:
    """A ready Ironic."""

    endpoint: str
    ironic_dir: str
    pid: int
    #: What the launch cleaned up first (a killed owner's leftovers), for the user.
    cleaned: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class IronicStopped:
    """What a kill did."""

    ironic_dir: str
    saved_db: str | None
    stopped: list[str]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def free_port(host: str = HOST) -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _release_tether(marker: str) -> None:
    fd = _TETHERS.pop(marker, None)
    if fd is not None:
        os.close(fd)


class IronicLauncher:
    """Runs, inspects and stops the Ironic of one ironic-dir (see the module docstring)."""

    def __init__(self, ironic_dir: str | os.PathLike[str], venv: Path,
                 api_timeout: float = 60.0, sqlite_dir: Path | None = None) -> None:
        self.work = IronicDir(ironic_dir)
        self.venv = Path(venv)
        self.api_timeout = api_timeout
        self.sqlite_dir = sqlite_dir

    def _marker(self) -> str:
        return str(self.work.conf_file)

    def _binary(self, name: str) -> str:
        path = self.venv / "bin" / name
        if not os.access(path, os.X_OK):
            raise exceptions.IronicNotInstalled(str(self.venv))
        return str(path)

    def _orphaned(self, record: dict[str, Any]) -> bool:
        return bool(record.get("owner")) and owner.liveness(record["owner"]) == owner.GONE

    def _running(self, record: dict[str, Any]) -> bool:
        return (process.is_running(record.get("pid"), self._marker())
                or bool(process.find(self._marker())))

    # -- pieces ------------------------------------------------------------------

    def _create_schema(self) -> None:
        """``ironic-dbsync create_schema`` (its ``upgrade`` cannot ALTER SQLite tables)."""
        log_fd = self.work.open_log("ironic-dbsync.log")
        try:
            rc = subprocess.run([self._binary("ironic-dbsync"), "--config-file",
                                 str(self.work.conf_file), "create_schema"],
                                stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd,
                                check=False).returncode
        finally:
            os.close(log_fd)
        if rc != 0:
            tail = log_tail(self.work.log_dir / "ironic-dbsync.log")
            raise exceptions.IronicError(
                f"ironic-dbsync failed (exit {rc}) for {self.work.root}:\n{tail}")

    def _start(self, tethered: bool) -> subprocess.Popen[bytes]:
        command = [self._binary("ironic"), "--config-file", str(self.work.conf_file)]
        log_fd = self.work.open_log("ironic.out")
        read_fd = None
        if tethered:
            read_fd, write_fd = os.pipe()
            _release_tether(self._marker())
            _TETHERS[self._marker()] = write_fd
            tether = Path(process.__file__).with_name("tether.py")
            command = [sys.executable, "-I", str(tether), str(read_fd), "--", *command]
        try:
            return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_fd,
                                    stderr=subprocess.STDOUT, cwd=self.work.root,
                                    start_new_session=True,
                                    pass_fds=(read_fd,) if read_fd is not None else ())
        except BaseException:
            _release_tether(self._marker())
            raise
        finally:
            os.close(log_fd)
            if read_fd is not None:
                os.close(read_fd)

    def _watch_database(self, record: dict[str, Any], live: Path) -> None:
        """For an owned launch on a database outside the ironic-dir, start the watcher
        that removes it once the owner and its Ironic are gone."""
        if not record.get("owner") or self.work.root in live.parents:
            return
        cleanup = [sys.executable, "-P", "-m", db_drop.__name__, "--ironic-dir",
                   str(self.work.root), "--db", str(live),
                   "--started-at", str(record["started_at"])]
        _DB_WATCHERS[self._marker()], record["db_watcher"] = process.start_db_watcher(
            cleanup, self.work, str(live))

    def _unwatch_database(self, record: dict[str, Any]) -> None:
        """Stop the database watcher without letting it remove anything (a teardown)."""
        process.stop_watcher(record.get("db_watcher"), _DB_WATCHERS.pop(self._marker(), None))
        record["db_watcher"] = None

    def _wait_ready(self, port: int, proc: subprocess.Popen[bytes]) -> None:
        """Wait until the conductor registered its drivers (the API answers before)."""
        deadline = time.monotonic() + self.api_timeout
        url = f"http://{HOST}:{port}/v1/drivers"
        delay = 0.05
        while True:
            code = proc.poll()
            if code is not None:
                raise exceptions.IronicError(
                    f"Ironic exited with status {code} while starting:\n"
                    + log_tail(self.work.log_dir / "ironic.out")
                    + f"\nSee {self.work.log_file}.")
            with contextlib.suppress(urllib.error.URLError, OSError, ValueError):
                request = urllib.request.Request(
                    url, headers={"X-OpenStack-Ironic-API-Version": "1.31"})
                with urllib.request.urlopen(request, timeout=2.0) as resp:
                    if b"fake-hardware" in resp.read():
                        return
            if time.monotonic() > deadline:
                raise exceptions.IronicError(
                    f"Ironic was not ready after {self.api_timeout:g} s (its conductor did "
                    f"not register fake-hardware). See {self.work.log_file}. Raise "
                    "[ironic] api_timeout if the machine is just slow.")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)

    def _stop(self, record: dict[str, Any]) -> list[str]:
        stopped = []
        _release_tether(self._marker())
        pid = record.get("pid")
        if pid and process.kill(pid, self._marker()):
            stopped.append(f"ironic (pid {pid})")
        for stray in process.find(self._marker()):
            if process.kill(stray, self._marker()):
                stopped.append(f"ironic (pid {stray})")
        return stopped

    def _teardown(self, record: dict[str, Any], save: bool) -> IronicStopped:
        """Stop Ironic; save its database (``save`` and it was ready), then drop it."""
        stopped = self._stop(record)
        live = Path(record["database"])
        saved = None
        if live.exists():
            if save and record.get("ready"):
                _copy_sqlite(live, self.work.saved_db)
                saved = str(self.work.saved_db)
            stopped.append("sqlite database")
        SqliteDatabase(live).wipe()  # with its journals
        self._unwatch_database(record)
        self.work.clear_run()
        return IronicStopped(str(self.work.root), saved, stopped)

    def _clean_leftovers(self) -> list[str]:
        record = self.work.read_run()
        if record is None:
            return []
        running = self._running(record)
        if not self._orphaned(record):
            if running:
                raise exceptions.IronicRunning(
                    str(self.work.given), f"pid {record.get('pid')}, port {record.get('port')}")
            self._teardown(record, save=True)
            return []
        left_by = (f"left by a killed {record['owner'].get('by') or 'process'} "
                   f"({owner.describe(record['owner'])})")
        self._teardown(record, save=False)
        note = (f"stopped ironic pid {record.get('pid')} {left_by}" if running else
                f"ironic pid {record.get('pid')} {left_by} had already stopped")
        LOG.warning("%s: %s.", self.work.given, note)
        return [note]

    # -- the port ----------------------------------------------------------------

    def launch(self, owned_by: str | None = None) -> IronicEndpoint:
        """Start Ironic and return once its conductor is ready; undo everything on failure.

        :param owned_by: what owns this Ironic: it then stops when this process exits,
            however it exits, and the next launch or kill cleans up after it.
        """
        base = self.sqlite_dir or default_dir(self.work.root)
        for line in shm_orphans.sweep(base, skip=self.work.token, kinds=(ORPHANS,)):
            LOG.warning("%s", line)
        with self.work.locked():
            cleaned = self._clean_leftovers()
            self._binary("ironic")
            port = free_port()
            live = base / f"tripleo-flow-ironic-{self.work.token}.sqlite"
            record: dict[str, Any] = {
                "pid": None, "port": port, "ready": False, "database": str(live),
                "owner": {**owner.current(), "by": owned_by} if owned_by else None,
                "started_at": datetime.datetime.now(datetime.UTC).isoformat(),
            }
            self.work.lock_path.mkdir(mode=0o700, exist_ok=True)
            self.work.write_private(self.work.conf_file, ironic_conf(IronicSettings(
                port=port, database_url=f"sqlite:///{live}", log_file=str(self.work.log_file),
                lock_path=str(self.work.lock_path), host=HOST)))
            self.work.write_run(record)
            try:
                self._watch_database(record, live)
                self.work.write_run(record)
                if self.work.saved_db.exists():  # saved by this same Ironic version
                    _copy_sqlite(self.work.saved_db, live)
                else:
                    SqliteDatabase(live).create()  # 0600 before the schema is written
                    self._create_schema()
                if self.work.root not in live.parents:  # on the tmpfs: named for a sweep
                    shm_orphans.write_note(live, self.work)
                proc = self._start(tethered=owned_by is not None)
                record["pid"] = proc.pid
                self.work.write_run(record)
                self._wait_ready(port, proc)
                record["ready"] = True
                self.work.write_run(record)
            except BaseException:
                self._teardown(record, save=False)
                raise
        return IronicEndpoint(endpoint=f"http://{HOST}:{port}", ironic_dir=str(self.work.root),
                              pid=proc.pid, cleaned=tuple(cleaned))

    def kill(self) -> IronicStopped:
        """Stop Ironic (its process group), saving its database; safe to repeat."""
        with self.work.locked():
            record = self.work.read_run()
            if record is None:
                return IronicStopped(str(self.work.root), None, [])
            return self._teardown(record, save=not self._orphaned(record))

    def status(self) -> dict[str, Any]:
        """Whether this ironic-dir's Ironic runs, and where."""
        record = self.work.read_run()
        if record is None:
            return {"ironic_dir": str(self.work.root), "running": False, "endpoint": None,
                    "detail": "not running"}
        running = self._running(record)
        return {"ironic_dir": str(self.work.root), "running": running,
                "endpoint": f"http://{HOST}:{record.get('port')}",
                "detail": (f"ironic pid {record.get('pid')}" if running else
                           "crashed: the next launch or kill cleans up")}


def _copy_sqlite(source: Path, target: Path) -> None:
    """Copy a SQLite database consistently (the backup API), target mode 0600."""
    tmp = target.with_name(f".{target.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.close(fd)
    src = sqlite3.connect(source)
    dst = sqlite3.connect(tmp)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    os.replace(tmp, target)
