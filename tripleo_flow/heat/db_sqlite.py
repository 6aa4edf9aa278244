"""SQLite adapter of :class:`~tripleo_flow.heat.database.HeatDatabase`.

The file lives on a tmpfs (``/dev/shm``) when one is writable: on disk every
commit waits for fsync (~8 ms here, against 0.02 ms on tmpfs).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.heat import database
from tripleo_flow.heat.database import tmp_path
from tripleo_flow.heat.db_move import NOTE_SUFFIX

FILE_MODE = 0o600


def default_dir(fallback: Path) -> Path:
    """``/dev/shm`` when it is a writable directory, else ``fallback``."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK) else fallback


class SqliteDatabase:
    """A Heat database in one SQLite file."""

    kind = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    def record(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": str(self.path)}

    def exists(self) -> bool:
        return self.path.exists()

    def create(self) -> None:
        self.wipe()
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        os.close(fd)

    def wipe(self) -> None:
        # with the note naming its heat-dir (tmpfs files: :mod:`.shm_orphans`)
        for suffix in ("", "-journal", "-wal", "-shm", NOTE_SUFFIX):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{self.path}{suffix}").unlink()

    def dump(self, path: Path) -> None:
        if not self.exists():
            raise exceptions.HeatError(
                f"Cannot dump the Heat database: {self.path} does not exist."
            )
        partial = tmp_path(path)
        try:
            source = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            try:
                counts = _row_counts(source)
                fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
                with os.fdopen(fd, "w") as out:
                    for statement in source.iterdump():
                        out.write(statement)
                        out.write("\n")
            finally:
                source.close()
            _check_restorable(partial, counts)
            os.chmod(partial, FILE_MODE)
            os.replace(partial, path)
        except (sqlite3.Error, OSError) as exc:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
            raise exceptions.HeatError(
                f"Dumping the Heat database {self.path} to {path} failed: {exc}"
            ) from exc

    def restore(self, path: Path) -> None:
        database.check_dump_kind(path, self.kind)
        try:
            script = path.read_text()
            conn = sqlite3.connect(self.path)
            try:
                conn.executescript(script)
            finally:
                conn.close()
        except (sqlite3.Error, OSError) as exc:
            raise exceptions.HeatError(
                f"Restoring the Heat database {self.path} from {path} failed: {exc}. "
                "The dump may be damaged; launch without --restore-db to start afresh."
            ) from exc

    def copy_of(self, template: Path) -> bool:
        """Make this just created database a copy of the SQLite file ``template`` (an
        empty schema); False (nothing changed) when it cannot be read."""
        try:
            shutil.copyfile(template, self.path)  # keeps this file's 0600
        except OSError:
            self.create()
            return False
        return True

    def keep_copy(self, template: Path) -> None:
        """Keep a copy of this database (an empty schema) at ``template``, replaced
        whole; nothing when its directory is not writable."""
        partial = template.with_name(f".{template.name}.{os.getpid()}.partial")
        try:
            template.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.path, partial)
            os.replace(partial, template)
        except OSError:
            with contextlib.suppress(OSError):
                partial.unlink()

    def keep_ids_unique(self) -> None:
        """Give each table keyed by an integer ``id`` SQLite's AUTOINCREMENT.

        Heat's schema declares those keys as plain ``INTEGER`` primary keys, which
        SQLite hands out again once the highest row is deleted (InnoDB, which Heat is
        run on upstream, never does while it runs).  Heat deletes rows that other
        rows may still name (a resource's attribute cache when storing it loses a
        race, a purged resource's), so a reused id makes such a delete remove another
        resource's properties: seen as "ResourcePropertiesData with id ... not
        found" on every later listing of the stack.  Tables already rebuilt (a
        restored dump) are left alone; rows and indexes are kept.
        """
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            conn.execute("PRAGMA foreign_keys = OFF")
            conn.execute("BEGIN IMMEDIATE")
            try:
                for name, sql in conn.execute(
                        "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                        "AND name NOT LIKE 'sqlite_%'").fetchall():
                    rebuilt = autoincrement_sql(sql)
                    if rebuilt is not None:
                        _rebuild(conn, name, rebuilt)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise exceptions.HeatError(
                f"Preparing the Heat database {self.path} failed: {exc}") from exc
        finally:
            conn.close()

    def engine_ids(self) -> set[str]:
        return self._column("SELECT id FROM service WHERE deleted_at IS NULL")

    def schema_revisions(self) -> set[str]:
        return self._column("SELECT version_num FROM alembic_version")

    def _column(self, query: str) -> set[str]:
        """The first column of ``query``'s rows (read-only); empty when it fails."""
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=1)
            try:
                rows = conn.execute(query).fetchall()
            finally:
                conn.close()
        except sqlite3.Error:
            return set()
        return {str(row[0]) for row in rows}

    def read(self, *queries: tuple[str, tuple[Any, ...]]) -> list[list[tuple[Any, ...]]]:
        """The rows of each query, read-only, in one transaction (one snapshot)."""
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30,
                                   isolation_level=None)
            try:
                conn.execute("BEGIN")
                results = [[tuple(row) for row in conn.execute(sql, args).fetchall()]
                           for sql, args in queries]
                conn.execute("COMMIT")
                return results
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise exceptions.HeatError(f"Cannot read Heat's database {self.path}: {exc}") from exc


_ID_COLUMN = re.compile(r"^(\s*)id INTEGER NOT NULL,", re.MULTILINE)
_ID_KEY = re.compile(r",\s*(?:CONSTRAINT \w+ )?PRIMARY KEY \(id\)")


def autoincrement_sql(create_table: str) -> str | None:
    """``create_table`` (a ``CREATE TABLE`` as SQLAlchemy writes it for SQLite) with
    its integer ``id`` key made ``AUTOINCREMENT``; None when it has no such key or
    has it already."""
    if "AUTOINCREMENT" in create_table.upper():
        return None
    if len(_ID_COLUMN.findall(create_table)) != 1 or len(_ID_KEY.findall(create_table)) != 1:
        return None
    with_column = _ID_COLUMN.sub(r"\1id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,",
                                 create_table)
    return _ID_KEY.sub("", with_column)


def _rebuild(conn: sqlite3.Connection, name: str, create_table: str) -> None:
    """Replace table ``name`` by one made with ``create_table``, rows and indexes
    kept (SQLite's documented way to change a table's definition)."""
    indexes = [row[0] for row in conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
        "AND sql IS NOT NULL", (name,))]
    temporary = f"{name}__rebuilt"
    head = f'CREATE TABLE "{temporary}"'
    body = create_table[create_table.index("("):]
    conn.execute(f"{head} {body}")
    conn.execute(f'INSERT INTO "{temporary}" SELECT * FROM "{name}"')
    conn.execute(f'DROP TABLE "{name}"')
    conn.execute(f'ALTER TABLE "{temporary}" RENAME TO "{name}"')
    for index in indexes:
        conn.execute(index)


def _row_counts(conn: sqlite3.Connection) -> dict[str, int]:
    names = [row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )]
    return {name: conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0]
            for name in names}


def _check_restorable(dump: Path, expected: dict[str, int]) -> None:
    """Load ``dump`` into memory and compare row counts with the source's."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(dump.read_text())
        got = _row_counts(conn)
    finally:
        conn.close()
    if got != expected:
        raise sqlite3.DatabaseError(
            f"the dump does not restore to the same tables and rows (expected {expected}, "
            f"restored {got})"
        )
