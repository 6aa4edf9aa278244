"""A new MariaDB data directory for a ``processes`` Heat, installed once per MariaDB.

``mariadb-install-db`` makes the system tables of a new data directory: about 0.6 s and
0.4 s of CPU, at the start of a launch that is CPU-bound on a small machine (the broker,
heat-engine and heat-api start beside it).  What it makes depends only on the installed
server and the options it is given, so the first directory made is kept, in the Heat
virtualenv's ``.tripleo-flow/`` beside Heat's empty schema, named after the server binary
(path, size, modification time) and the options, and later launches copy it: a few
hundredths of a second, a third of the CPU.  The kept directory holds no user, password
or data of a launch: the admin user of each launch comes from the init file MariaDB runs
at every start.

A directory is kept by copying it to a temporary name and renaming that: a reader sees a
whole directory or none; a copy left by a process killed meanwhile is removed by the next
keeper once its process is gone.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from tripleo_flow.common import pids

LOG = logging.getLogger(__name__)
#: How a kept data directory is named (``<PREFIX><key>``).
PREFIX = "mariadb-datadir-"
_TEMPORARY = ".tmp-"


def template_name(server: str, options: tuple[str, ...]) -> str:
    """The name of the data directory kept for the server binary ``server`` installed
    with ``options``: another server (an upgraded package) or other options, another name."""
    real = os.path.realpath(server)
    st = os.stat(real)
    key = json.dumps([real, st.st_size, st.st_mtime_ns, list(options)])
    return PREFIX + hashlib.sha256(key.encode()).hexdigest()[:16]


def make(datadir: Path, install: Callable[[Path], None], keep_in: Path | None,
         name: str) -> bool:
    """Fill ``datadir`` (absent or empty) with a new data directory: a copy of the one
    kept in ``keep_in`` as ``name``, else what ``install(datadir)`` makes, then kept
    there (when it can be: a directory that cannot be written keeps nothing).

    :returns: whether it was copied (False: installed).
    """
    template = None if keep_in is None else keep_in / name
    if template is not None and (template / "mysql").is_dir():
        shutil.copytree(template, datadir, symlinks=True, dirs_exist_ok=True)
        LOG.debug("MariaDB's data directory copied from %s.", template)
        return True
    install(datadir)
    if template is not None:
        _keep(datadir, template)
    return False


def _keep(datadir: Path, template: Path) -> None:
    """Copy ``datadir`` (just installed, never started) to ``template``."""
    staging = template.with_name(f"{template.name}{_TEMPORARY}{os.getpid()}")
    try:
        template.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _remove_abandoned(template)
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(datadir, staging, symlinks=True)
        staging.chmod(0o700)
        os.rename(staging, template)  # fails when another keeper was first: theirs stays
    except OSError as exc:
        LOG.debug("MariaDB's data directory not kept as %s: %s", template, exc)
        shutil.rmtree(staging, ignore_errors=True)


def _remove_abandoned(template: Path) -> None:
    """Remove the temporary copies of ``template`` whose process is gone."""
    for left in template.parent.glob(f"{template.name}{_TEMPORARY}*"):
        pid = left.name.rsplit(_TEMPORARY, 1)[1]
        if pid.isdigit() and not pids.alive(int(pid)):
            shutil.rmtree(left, ignore_errors=True)
