"""``native``: heat-all from Heat's own virtualenv, as a child process.

The process is started in a session of its own so that it keeps running after
the launching command exits; ``run.json`` records its pid.  One engine worker,
the in-process ``fake://`` transport, SQLite on tmpfs by default or MariaDB.

A launch *owned* by its caller (``owned_by``, e.g. a deploy) runs heat-all
under :mod:`.tether`, so it dies with the owning process even on SIGKILL, and
records the owner in ``run.json``: the next launch or kill of the heat-dir
finds the leftovers of an owner that is gone, stops them and drops their
database without dumping it (the last good dump stays the current one).

Such a launch with its SQLite file outside the heat-dir (on ``/dev/shm``) also
starts a :mod:`.db_move` watcher: once the owner is gone and heat-all with it,
the file (every password of the stack) moves into the heat-dir, where the next
launch (a resumed deploy) looks for it, rather than staying in memory.  Every
launch notes beside such a file the heat-dir it belongs to, and first moves home
(or removes) the files on that tmpfs whose owner and watcher both died
(:mod:`.shm_orphans`).
"""

from __future__ import annotations

import datetime
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import crashpoints
from tripleo_flow.heat import database, db_move, ports, process, render, shm_orphans, unpaced
from tripleo_flow.heat import launcher as common
from tripleo_flow.heat.database import HeatDatabase
from tripleo_flow.heat.db_mariadb import MariaDBDatabase
from tripleo_flow.heat.db_sqlite import SqliteDatabase, default_dir
from tripleo_flow.heat.launcher import HeatEndpoint, HeatStatus, KillResult
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.workspace import owner

LOG = logging.getLogger(__name__)
HOST = "127.0.0.1"
INSTALL_COMMAND = exceptions.Hint("Create it with", "heat.install")
#: Where in the Heat virtualenv the empty schema its db_sync makes is kept.
SCHEMA_DIR = ".tripleo-flow"
#: How the kept empty schema of each kind of database is named after its heads.
SCHEMA_SUFFIXES = {"sqlite": ".sqlite", "mariadb": ".mariadb.sql"}
#: Write ends of the tether pipes of the Heats this process owns, by heat.conf path.
_TETHERS: dict[str, int] = {}
#: The database watchers (:mod:`.db_move`) this process started, by heat.conf path.
_DB_WATCHERS: dict[str, process.Watcher] = {}


def _release_tether(marker: str) -> None:
    """Close this process' tether of ``marker`` (its supervisor then kills its group)."""
    fd = _TETHERS.pop(marker, None)
    if fd is not None:
        os.close(fd)


class NativeLauncher:
    """heat-all started from the Heat virtualenv (see the module docstring)."""

    heat_type = "native"
    #: Engine processes that must register before Heat counts as ready.
    want_engines = 1

    def __init__(self, heat_dir: str | os.PathLike[str], venv: Path, port: int | None = None,
                 api_timeout: float = 120.0, database: str = "sqlite",
                 sqlite_dir: Path | None = None, mariadb_url: str | None = None,
                 clouds_yaml: Path | None = None, pace_leaves: bool = False,
                 quick_rpc_replies: bool = True) -> None:
        self.work = HeatDir(heat_dir)
        self.pace_leaves = pace_leaves
        self.quick_rpc_replies = quick_rpc_replies
        self.venv = Path(venv)
        #: The fixed port of the API (``[heat] api_port``); None or 0: a free one per launch.
        self.port = port or None
        #: The port the launch in progress chose (:meth:`api_port`).
        self._port: int | None = None
        #: The ports the launch in progress holds until its Heat is ready (:mod:`.ports`).
        self._holds = ports.Holds(HOST)
        self.api_timeout = api_timeout
        self.database_kind = database
        self.sqlite_dir = sqlite_dir
        self.mariadb_url = mariadb_url
        self.clouds_yaml = clouds_yaml or self.work.clouds_yaml

    # -- pieces ----------------------------------------------------------------

    def api_port(self, record: dict[str, Any] | None = None) -> int:
        """The port of this heat-dir's Heat API: the one its run record names (the port
        its launch took), else the launch's in progress, else the fixed one."""
        if record is None:
            record = self.work.read_run()
        recorded = (record or {}).get("port")
        return int(recorded or self._port or self.port or 0)

    def _marker(self) -> str:
        return str(self.work.conf_file)

    def _database(self, record: dict[str, Any] | None = None) -> HeatDatabase:
        kind = record["kind"] if record else self.database_kind
        if kind == "sqlite":
            if record:
                path = Path(record["path"])
                if not path.exists() and self.work.moved_db.exists():  # a killed owner's
                    return SqliteDatabase(self.work.moved_db)
                return SqliteDatabase(path)
            base = self.sqlite_dir or default_dir(self.work.root)
            return SqliteDatabase(base / f"tripleo-flow-heat-{self.work.token}.sqlite")
        if not self.mariadb_url:
            raise exceptions.InvalidInput(
                "[heat] database = mariadb needs [heat] mariadb_url "
                "(mysql+pymysql://root:PASSWORD@127.0.0.1:3306)."
            )
        return MariaDBDatabase(self.mariadb_url, f"heat_{self.work.token}",
                               password=record.get("password") if record else None,
                               scratch_dir=self.work.root)

    def _binary(self, name: str) -> str:
        path = self.venv / "bin" / name
        if not os.access(path, os.X_OK):
            raise exceptions.HeatNotInstalled(
                f"The Heat virtualenv {self.venv} ({name})", INSTALL_COMMAND
            )
        return str(path)

    def _through_runner(self, service: str) -> bool:
        """Whether Heat's ``service`` runs through :mod:`.unpaced` (not when both
        ``pace_leaves`` and not ``quick_rpc_replies`` leave it as shipped)."""
        paced = self.pace_leaves or service not in unpaced.ENGINES
        return not (paced and not self.quick_rpc_replies)

    def _service_command(self, service: str, start_when: Path | None = None) -> list[str]:
        """The command of Heat's ``service`` (``all``, ``engine``, ``api``): through
        :mod:`.unpaced` (leaf pacing off unless ``pace_leaves``, quick RPC replies
        unless not ``quick_rpc_replies``; imported at once, started when the file
        ``start_when`` exists), or Heat's own script when both are Heat's."""
        if not self._through_runner(service):
            return [self._binary(f"heat-{service}")]
        flags = [flag for flag, keep in ((unpaced.PACED, self.pace_leaves
                                          and service in unpaced.ENGINES),
                                         (unpaced.SLOW_REPLIES, not self.quick_rpc_replies))
                 if keep]
        if start_when is not None:
            flags += [unpaced.START_WHEN, str(start_when)]
        self._binary(f"heat-{service}")  # installed, as Heat's own script would need
        return [self._binary("python"), "-I", unpaced.__file__, service, *flags]

    def _settings(self, db: HeatDatabase) -> render.HeatSettings:
        return render.HeatSettings(
            port=self.api_port({}), database_url=db.url, log_file=str(self.work.log_file),
            token_file=str(self.work.token_file), paste_file=str(self.work.paste_file),
            host=HOST,
        )

    def _db_sync(self) -> None:
        manage = self._binary("heat-manage")
        log_fd = self.work.open_log("heat-manage.log")
        try:
            rc = subprocess.run([manage, "--config-file", str(self.work.conf_file), "db_sync"],
                                stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd,
                                check=False).returncode
        finally:
            os.close(log_fd)
        if rc != 0:
            tail = common.log_tail(self.work.log_dir / "heat-manage.log")
            raise exceptions.HeatError(
                f"heat-manage db_sync failed (exit {rc}) for {self.work.root}:\n{tail}"
            )

    def _schema_current(self, db: HeatDatabase) -> bool:
        """Whether ``db`` (a restored dump) is at the schema heads of the virtualenv's
        Heat, so that db_sync would change nothing (it costs seconds: Heat's import)."""
        heads = database.schema_heads(self.venv)
        current = bool(heads) and db.schema_revisions() == heads
        if current:
            LOG.debug("The restored Heat database is at %s: no db_sync.", sorted(heads))
        return current

    def _create_schema(self, db: HeatDatabase) -> None:
        """Give the fresh database Heat's schema with db_sync, once per schema of the
        virtualenv's Heat and kind of database: the empty schema the first db_sync made
        is kept in the venv (``.tripleo-flow/``, named by its heads: a SQLite file, or a
        MariaDB dump) and copied from then on (db_sync imports Heat: seconds)."""
        heads = database.schema_heads(self.venv)
        if not heads:
            self._db_sync()
            return
        template = self.venv / SCHEMA_DIR / (f"heat-schema-{'-'.join(sorted(heads))}"
                                             f"{SCHEMA_SUFFIXES[db.kind]}")
        if db.copy_of(template):
            if db.schema_revisions() == heads:
                LOG.debug("Heat's schema copied from %s: no db_sync.", template)
                return
            db.create()  # not the schema its name says: start afresh
        self._db_sync()
        if db.schema_revisions() == heads:
            db.keep_copy(template)

    def _start(self, tethered: bool = False) -> subprocess.Popen[bytes]:
        """Start heat-all in a session of its own; ``tethered``: under :mod:`.tether`."""
        command = [*self._service_command("all"), "--config-file", str(self.work.conf_file)]
        log_fd = self.work.open_log("heat-all.out")
        read_fd = None
        if tethered:
            read_fd, write_fd = os.pipe()
            _release_tether(self._marker())
            _TETHERS[self._marker()] = write_fd
            command = [sys.executable, "-I", str(Path(__file__).with_name("tether.py")),
                       str(read_fd), "--", *command]
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

    def _watch_database(self, record: dict[str, Any], db: HeatDatabase) -> None:
        """For an owned launch on a SQLite file outside the heat-dir, start the watcher
        that moves it into the heat-dir once the owner and its Heat are gone."""
        path = getattr(db, "path", None)
        if not record.get("owner") or path is None or self.work.root in Path(path).parents:
            return
        self._start_db_watcher(record, ["--db", str(path)], str(path))

    def _start_db_watcher(self, record: dict[str, Any], what: list[str], label: str) -> None:
        """Start the :mod:`.db_move` watcher with arguments ``what`` (and ``label`` in its
        command line), recorded in ``record``, in place of one this launch started."""
        self._unwatch_database(record)
        cleanup = [sys.executable, "-P", "-m", db_move.__name__, "--heat-dir",
                   str(self.work.root), *what, "--started-at", str(record["started_at"])]
        _DB_WATCHERS[self._marker()], record["db_watcher"] = process.start_db_watcher(
            cleanup, self.work, label)

    def _note_database(self, db: HeatDatabase) -> None:
        """Name this heat-dir beside a SQLite file outside it (:mod:`.shm_orphans`)."""
        if isinstance(db, SqliteDatabase) and self.work.root not in db.path.parents:
            shm_orphans.write_note(db.path, self.work)

    def _sweep_orphans(self) -> None:
        """Move home or remove the SQLite files and private servers' directories other
        heat-dirs' dead runs left on the tmpfs (this heat-dir's own:
        :meth:`_clean_leftovers`)."""
        bases = dict.fromkeys([self.sqlite_dir or default_dir(self.work.root),
                               default_dir(self.work.root)])  # services: always the latter
        done = [line for base in bases for line in shm_orphans.sweep(base, skip=self.work.token)]
        for line in done:
            LOG.warning("%s", line)

    def _unwatch_database(self, record: dict[str, Any]) -> None:
        """Stop the database watcher without letting it move anything (a teardown)."""
        watcher = record.get("db_watcher")
        process.stop_watcher(watcher, _DB_WATCHERS.pop(self._marker(), None))
        if watcher:
            record["db_watcher"] = None

    # -- hooks a container-based launcher overrides ----------------------------------

    def _prepare(self, record: dict[str, Any]) -> None:
        """Start what the database and messaging need (nothing for heat-all)."""

    def _check_installed(self) -> None:
        self._binary("heat-all")
        self._binary("heat-manage")

    def _start_heat(self, record: dict[str, Any]) -> Callable[[], str | None]:
        """Start heat-all, note it in ``record``; return a "why did it stop" probe."""
        proc = self._start(tethered=bool(record.get("owner")))
        record["pid"] = proc.pid

        def alive() -> str | None:
            code = proc.poll()
            if code is None:
                return None
            return (f"heat-all exited with status {code}:\n"
                    + common.log_tail(self.work.log_dir / "heat-all.out"))

        return alive

    def _engines(self, db: HeatDatabase) -> Callable[[], set[str]]:
        """The probe of registered engines that readiness waits on."""
        return db.engine_ids

    def _running(self, record: dict[str, Any]) -> bool:
        return (process.is_running(record.get("pid"), self._marker())
                or bool(process.find(self._marker())))

    def _describe(self, record: dict[str, Any]) -> str:
        return f"heat-all pid {record.get('pid')}"

    def _stop(self, record: dict[str, Any]) -> list[str]:
        """Stop what ``record`` says runs; return what was stopped."""
        stopped = []
        pid = record.get("pid")
        _release_tether(self._marker())
        if pid and process.kill(pid, self._marker()):
            stopped.append(f"heat-all (pid {pid})")
        for stray in process.find(self._marker()):  # escaped the group, lost its parent
            if process.kill(stray, self._marker()):
                stopped.append(f"heat-all (pid {stray})")
        if pid:
            record["pid"] = None
            self.work.write_run(record)
        return stopped

    # -- shared life cycle -----------------------------------------------------------

    def _teardown(self, record: dict[str, Any], dump: bool) -> KillResult:
        """Stop what runs, dump the database (if Heat was ready) and wipe it; then stop
        the database watcher (an owner killed before that has it moved)."""
        stopped = self._stop(record)
        dumped = None
        db = self._database(record["database"])
        if db.exists():
            if dump and record.get("ready"):
                db.dump(self.work.dump_file)
                self.work.note_dump_type(self.heat_type)
                dumped = str(self.work.dump_file)
                crashpoints.reached("heat.kill:dumped")
            db.wipe()
            stopped.append(f"{db.kind} database")
        SqliteDatabase(self.work.moved_db).wipe()  # a copy a cut-short move left
        self._unwatch_database(record)
        self.work.clear_run()
        return KillResult(heat_dir=str(self.work.root), dump=dumped, stopped=stopped)

    def _read_run(self) -> dict[str, Any] | None:
        """run.json, refusing one written by another heat type."""
        record = self.work.read_run()
        if record is not None and record.get("heat_type") != self.heat_type:
            kind = record.get("heat_type")
            raise exceptions.InvalidInput(
                f"The Heat of {self.work.given} was launched with --heat-type {kind}; "
                f"repeat the command with --heat-type {kind} (or without --heat-type)."
            )
        return record

    def _orphaned(self, record: dict[str, Any]) -> bool:
        """Whether ``record`` was launched for an owner that is gone (killed, crashed)."""
        return bool(record.get("owner")) and owner.liveness(record["owner"]) == owner.GONE

    def _clean_leftovers(self, adopt: bool = False) -> tuple[list[str], bool]:
        """Clean up after a crashed run: what was done (for the user to read), and
        whether (``adopt``) the crashed run's database was dumped to be restored."""
        record = self._read_run()
        if record is None:
            return [], False
        running = self._running(record)
        if not self._orphaned(record):
            if running:
                raise exceptions.HeatRunning(
                    str(self.work.given), f"{self._describe(record)}, "
                    f"{render.endpoint_url(HOST, self.api_port(record))}"
                )
            self._teardown(record, dump=True)
            return [], False
        what = self._describe(record)
        left_by = (f"left by a killed {record['owner'].get('by') or 'process'} "
                   f"({owner.describe(record['owner'])})")
        # A resumed deploy takes over the killed run's stacks: its database becomes the
        # dump the new Heat restores (the deploy kept the last good dump aside).
        result = self._teardown(record, dump=adopt)
        done = [f"stopped {what} {left_by}" if running else
                f"{what} {left_by} had already stopped"]
        if result.dump is not None:
            done.append("kept its database for the resumed deploy")
        elif any(item.endswith(" database") for item in result.stopped):
            done.append("removed its database")
        note = "; ".join(done)
        LOG.warning("%s: %s.", self.work.given, note)
        return [note], result.dump is not None

    # -- the port ----------------------------------------------------------------

    def launch(self, restore_db: bool = False, owned_by: str | None = None,
               adopt: bool = False) -> HeatEndpoint:
        self._sweep_orphans()
        with self.work.locked():
            cleaned, kept = self._clean_leftovers(adopt)
            restore_db = restore_db or kept
            self._check_installed()
            if restore_db and not self.work.dump_file.exists():
                raise exceptions.DumpNotFound(str(self.work.dump_file))
            endpoint = self._holds.launching(
                self.port, lambda port: self._launch_on(port, restore_db, owned_by),
                f"the Heat of {self.work.given}")
        return HeatEndpoint(heat_type=self.heat_type, endpoint=endpoint,
                            heat_dir=str(self.work.root), clouds_yaml=str(self.clouds_yaml),
                            heatrc=str(self.work.heatrc), cleaned=tuple(cleaned),
                            adopted=kept)

    def _launch_on(self, port: int, restore_db: bool, owned_by: str | None) -> str:
        """Start Heat with its API on ``port`` and wait until it is ready; undo all of it
        when anything fails; the endpoint."""
        self._port = port
        endpoint = render.endpoint_url(HOST, port)
        db = self._database()
        if restore_db:  # before anything starts: a dump of the other kind cannot load
            database.check_dump_kind(self.work.dump_file, db.kind)
        record: dict[str, Any] = {
            "heat_type": self.heat_type, "pid": None, "port": port, "ready": False,
            "database": db.record(),
            "owner": {**owner.current(), "by": owned_by} if owned_by else None,
            "started_at": datetime.datetime.now(datetime.UTC).isoformat(),
        }
        common.write_heat_files(self.work, self._settings(db))
        self.work.write_run(record)
        try:
            self._prepare(record)
            self._watch_database(record, db)
            self.work.write_run(record)
            db.create()
            self._note_database(db)
            if restore_db:
                db.restore(self.work.dump_file)
                if not self._schema_current(db):
                    self._db_sync()
            else:
                self._create_schema(db)
            db.keep_ids_unique()
            before = db.engine_ids()
            alive = self._start_heat(record)
            self.work.write_run(record)
            common.wait_ready(HOST, port, before, self._engines(db), alive,
                              self.api_timeout, want_engines=self.want_engines,
                              log_file=self.work.log_file)
            record["ready"] = True
            self.work.write_run(record)
            common.write_client_files(self.work, endpoint, self.clouds_yaml)
        except BaseException:
            self._teardown(record, dump=False)
            raise
        return endpoint

    def kill(self, dump: bool = True, adopt: bool = False) -> KillResult:
        with self.work.locked():
            record = self._read_run()
            if record is None:
                return KillResult(heat_dir=str(self.work.root), dump=None, stopped=[])
            # A killed owner's database is a half-done run: the last good dump stays
            # (unless a resumed deploy that finished the stack takes it over).
            return self._teardown(record,
                                  dump=dump and (adopt or not self._orphaned(record)))

    def status(self) -> HeatStatus:
        record = self._read_run()
        dump = str(self.work.dump_file) if self.work.dump_file.exists() else None
        if record is None:
            return HeatStatus(self.heat_type, str(self.work.root), False, None, False, None,
                              dump, "not running")
        running = self._running(record)
        port = self.api_port(record)
        answers = running and common.api_answers(HOST, port)
        detail = (self._describe(record) if running else
                  "crashed: the next launch or kill cleans up")
        return HeatStatus(self.heat_type, str(self.work.root), running,
                          render.endpoint_url(HOST, port), answers,
                          record["database"]["kind"], dump, detail)

    def running_database(self) -> HeatDatabase | None:
        """The database of this heat-dir's running Heat (to read), None when none runs."""
        record = self._read_run()
        if record is None or not self._running(record):
            return None
        return self._database(record["database"])

    def dump_db(self) -> Path:
        with self.work.locked():
            record = self._read_run()
            db = self._database(record["database"]) if record else None
            if db is None or not db.exists():
                raise exceptions.HeatError(
                    f"No Heat database to dump for {self.work.root}:",
                    hints=[exceptions.Hint("launch Heat first with", "heat.launch",
                                           {"heat_dir": self.work.given}, tail=".")])
            db.dump(self.work.dump_file)
            self.work.note_dump_type(self.heat_type)
            return self.work.dump_file

    def restore_db(self) -> HeatEndpoint:
        """Relaunch this heat-dir's Heat on a fresh database loaded from the dump."""
        if not self.work.dump_file.exists():
            raise exceptions.DumpNotFound(str(self.work.dump_file))
        self.kill(dump=False)
        return self.launch(restore_db=True)
