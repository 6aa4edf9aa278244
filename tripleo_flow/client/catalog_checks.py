"""A record that the workbook catalog, as its files are now, passed every check.

Checking every workbook against the actions and each other (unknown actions and
workflows, inputs, transitions, expressions) needs every action class, hence every
action module imported: each process that runs a workflow did it all again, for
workbook files that had not changed.  After a check that found no problem, the
session writes the catalog's *key* here: a SHA-256 of what the check's result
depends on (:func:`catalog_key`): every workbook file's name and bytes, the
workbook limits, the actions registered (entry point names and targets), the bytes
of the code that checks and of the actions, with the versions of tripleo-flow,
Python, yaql, Jinja and PyYAML.  A
process that computes the same key skips the check (it loads only the actions its
workflows use); any other key, and any record it cannot trust, means the check
runs again.

The record lives in ``<data_dir>/checks/`` (0700, files 0600; left out of backups
and restores: :data:`~tripleo_flow.workspace.backup_archive.REBUILT`), authenticated
with a random secret kept beside it: a record that is not a regular file of this
user, does not parse, names another key or has not that secret's HMAC (corrupt,
copied from elsewhere, written by anything but this code) is ignored.  With an
action registered by another distribution (code this key does not cover) no record
is used or written.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

from tripleo_flow import __version__
from tripleo_flow.workspace.files import make_dirs, write_private

#: The directory under the data directory.
CHECKS = "checks"
#: What is recorded, and the secret that authenticates it.
RECORD = "catalog"
SECRET = "secret"
#: The version of the key's layout.
FORMAT = 1
#: The package directories whose code decides a check's result: the workbook
#: language (parsing, checking), the actions (their inputs), the YAML reader and the
#: expressions' sandboxes (common).
CODE_DIRS = ("engine/lang", "actions", "common")
#: And the shipped one-action workflows (made from data, not read from a workbook).
CODE_FILES = ("client/workbooks.py",)
_PACKAGE = Path(__file__).resolve().parents[1]


def catalog_key(files: Iterable[tuple[Path, bool]], limits: tuple[int, int],
                actions: Iterable[tuple[str, str]]) -> str | None:
    """The key of a catalog of ``files`` (``(path, shipped)``, in order) checked with
    ``limits`` against ``actions`` (``(name, entry point target)``); None when an
    action is not tripleo-flow's own (its code is not in the key)."""
    actions = sorted(actions)
    if any(not target.startswith("tripleo_flow.") for _name, target in actions):
        return None
    digest = hashlib.sha256()

    def add(*parts: str | bytes) -> None:
        for part in parts:
            data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
            digest.update(len(data).to_bytes(8, "big") + data)

    import collections.abc  # noqa: F401  (yaql 3.2 uses collections.abc without importing it)

    import jinja2
    import yaml
    import yaql

    add(str(FORMAT), __version__, sys.version.split()[0], repr(limits), yaql.__version__,
        jinja2.__version__, yaml.__version__)
    for name, target in actions:
        add("action", name, target)
    for directory in CODE_DIRS:
        for source in sorted((_PACKAGE / directory).glob("*.py")):
            add("code", source.name, source.read_bytes())
    for name in CODE_FILES:
        add("code", name, (_PACKAGE / name).read_bytes())
    for path, shipped in files:
        add("workbook", str(path), str(shipped), path.read_bytes())
    return digest.hexdigest()


class CheckRecord:
    """The record of the last catalog that passed its checks, in ``data_dir``."""

    def __init__(self, data_dir: Path) -> None:
        self.directory = Path(data_dir) / CHECKS

    def holds(self, key: str) -> bool:
        """Whether the record says the catalog of ``key`` passed its checks."""
        secret = self._read(SECRET)
        record = self._read(RECORD)
        if secret is None or record is None:
            return False
        try:
            saved = json.loads(record)
            found, mac = saved["key"], saved["mac"]
        except (ValueError, TypeError, KeyError):
            return False
        return (isinstance(found, str) and isinstance(mac, str) and found == key
                and hmac.compare_digest(mac, _mac(secret, key)))

    def write(self, key: str) -> None:
        """Record that the catalog of ``key`` passed its checks (nothing when the
        directory cannot be written: the next process checks again)."""
        try:
            make_dirs(self.directory)
            secret = self._read(SECRET)
            if secret is None:
                secret = secrets.token_bytes(32)
                write_private(self.directory / SECRET, secret)
            record = json.dumps({"key": key, "mac": _mac(secret, key)})
            write_private(self.directory / RECORD, record.encode())
        except OSError:
            return

    def _read(self, name: str) -> bytes | None:
        """The bytes of ``name`` if it is a regular file of this user that no one else
        may write, else None."""
        try:
            fd = os.open(self.directory / name, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() \
                    or info.st_mode & 0o022 or info.st_size > 4096:
                return None
            return os.read(fd, 4096)
        except OSError:
            return None
        finally:
            os.close(fd)


def _mac(secret: bytes, key: str) -> str:
    return hmac.new(secret, key.encode(), hashlib.sha256).hexdigest()
