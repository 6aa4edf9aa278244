"""The heat-launcher directory: artifacts, the run record and the launch lock.

Layout of ``<heat-dir>/heat-launcher`` (directories 0700, files 0600)::

    heat.conf  api-paste.ini  token_file.json  heatrc  clouds.yaml
    heat-db-dump.sql          the last database dump (kill, dump_db)
    heat-db-dump.type         the heat type whose database that dump is (later commands
                              that name no --heat-type launch that type again)
    heat-db.sqlite            a killed owner's SQLite database, moved off /dev/shm
    heat-mariadb/             a killed owner's MariaDB data (heat type processes), likewise
    run.json                  what the running Heat is made of (pid, port, database...)
    .lock                     held (flock) while a launch or kill is in progress
    log/                      heat.log and the process' own output

``run.json`` outlives the command that launched Heat, so it is what refuses a
second launch and what lets the next launch or kill find a crashed run's
leftovers.  It is written before anything is started and removed last.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions

DIR_MODE = 0o700
FILE_MODE = 0o600
#: Seconds a launch or kill waits for the heat-dir's lock before it refuses.
LOCK_WAIT = 5.0


class HeatDir:
    """Paths and private-file helpers of one heat-launcher directory."""

    #: The directory under the work dir that holds the artifacts.
    dir_name = "heat-launcher"

    def __init__(self, heat_dir: str | os.PathLike[str]) -> None:
        given = Path(heat_dir).expanduser().absolute()
        # Accept both the work dir and the launcher dir itself (the seed's usage).
        self.root = given if given.name == self.dir_name else given / self.dir_name
        self.given = given

    def busy(self, detail: str) -> Exception:
        """The error for a launch or kill refused because ``detail`` (another one runs)."""
        return exceptions.HeatRunning(str(self.given), detail)

    # -- paths ---------------------------------------------------------------

    @property
    def conf_file(self) -> Path:
        return self.root / "heat.conf"

    @property
    def paste_file(self) -> Path:
        return self.root / "api-paste.ini"

    @property
    def token_file(self) -> Path:
        return self.root / "token_file.json"

    @property
    def heatrc(self) -> Path:
        return self.root / "heatrc"

    @property
    def clouds_yaml(self) -> Path:
        return self.root / "clouds.yaml"

    @property
    def dump_file(self) -> Path:
        return self.root / "heat-db-dump.sql"

    @property
    def dump_type_file(self) -> Path:
        """Names the heat type that wrote :attr:`dump_file` (:meth:`note_dump_type`)."""
        return self.root / "heat-db-dump.type"

    @property
    def moved_db(self) -> Path:
        """Where a killed owner's SQLite database is moved (:mod:`.db_move`)."""
        return self.root / "heat-db.sqlite"

    @property
    def moved_mariadb(self) -> Path:
        """Where a killed owner's MariaDB data directory (heat type ``processes``) is
        moved (:mod:`.db_move`)."""
        return self.root / "heat-mariadb"

    @property
    def run_file(self) -> Path:
        return self.root / "run.json"

    @property
    def log_dir(self) -> Path:
        return self.root / "log"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "heat.log"

    @property
    def token(self) -> str:
        """A short stable name for resources named after this directory."""
        return hashlib.sha256(str(self.root).encode()).hexdigest()[:10]

    # -- files ---------------------------------------------------------------

    def ensure(self) -> None:
        """Create the directories (0700), tightening them when they exist."""
        for path in (self.root, self.log_dir):
            path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            os.chmod(path, DIR_MODE)

    def write_private(self, path: Path, text: str) -> None:
        """Write ``text`` to ``path`` with mode 0600, atomically."""
        tmp = path.with_name(f".{path.name}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)

    def open_log(self, name: str) -> int:
        """An append-only 0600 file descriptor in log/ for a child's output."""
        return os.open(self.log_dir / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)

    # -- the dump's heat type --------------------------------------------------

    def note_dump_type(self, heat_type: str) -> None:
        """Record that the dump just written is the database of a Heat of ``heat_type``."""
        self.write_private(self.dump_type_file, heat_type + "\n")

    def dump_type(self) -> str | None:
        """The heat type that wrote the dump, when the dump and that record are there."""
        if not self.dump_file.exists():
            return None
        try:
            kind = self.dump_type_file.read_text().strip()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise exceptions.HeatError(f"Cannot read {self.dump_type_file}: {exc}.") from exc
        return kind or None

    def recorded_type(self) -> str | None:
        """The heat type of this heat-dir's deployment: its running (or crashed) Heat's,
        else the one whose database the dump is; None when neither is recorded."""
        record = self.read_run()
        if record and record.get("heat_type"):
            return str(record["heat_type"])
        return self.dump_type()

    # -- run record ----------------------------------------------------------

    def read_run(self) -> dict[str, Any] | None:
        """The record of the current (or crashed) run, or None."""
        try:
            data = json.loads(self.run_file.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise exceptions.HeatError(
                f"Cannot read {self.run_file}: {exc}. Remove it once no Heat runs from "
                f"{self.root}."
            ) from exc
        return data if isinstance(data, dict) else None

    def write_run(self, record: dict[str, Any]) -> None:
        self.write_private(self.run_file, json.dumps(record, indent=2, sort_keys=True) + "\n")

    def clear_run(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.run_file.unlink()

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory's lock for one launch or kill; refuse if still taken after
        :data:`LOCK_WAIT` seconds (a killed owner's watcher moving its database, or a
        sweep of /dev/shm, holds it for a moment; another launch holds it longer)."""
        self.ensure()
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            deadline = time.monotonic() + LOCK_WAIT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if time.monotonic() >= deadline:
                        raise self.busy("another launch or kill is in progress") from exc
                    time.sleep(0.1)
            yield
        finally:
            os.close(fd)
