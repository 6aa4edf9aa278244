"""The Heats workflows started over the HTTP API leave running: at most ``[api]
launched_heats_max`` at once.

``tripleo.heat.launch`` (and ``restore_db``, and the action executions of their
actions) leave a Heat running after their execution, until ``tripleo.heat.kill``: each
holds hundreds of MB, so an API user could otherwise start them until the server runs
out of memory.  The heat-dirs of those launches are noted in ``<data_dir>/api-heats/``
(one file each, named after the heat-dir); a note whose Heat no longer runs (killed,
crashed) is dropped when counted.  A launch counts, launches and notes under that
directory's lock, so two starts at once cannot both take the last place; launches from
the CLI or the Python API, and the Heats deployments own (they stop with their
execution), are neither counted nor limited.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from oslo_config import cfg

from tripleo_flow import exceptions

DIR_NAME = "api-heats"
#: ``[api] launched_heats_max`` for a configuration without the ``[api]`` group.
DEFAULT_LIMIT = 2


def limit(conf: cfg.ConfigOpts) -> int:
    """``[api] launched_heats_max`` (:data:`DEFAULT_LIMIT` when ``conf`` has no such
    option: an embedding's own configuration)."""
    try:
        return int(conf.api.launched_heats_max)
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
        return DEFAULT_LIMIT


class LaunchedHeats:
    """The notes of HTTP-launched Heats under ``data_dir``.

    :param running: whether the Heat of a heat-dir runs (its launcher's status)
    """

    def __init__(self, data_dir: Path, running: Callable[[str], bool]) -> None:
        self.root = Path(data_dir) / DIR_NAME
        self._running = running

    def _note(self, heat_dir: str) -> Path:
        name = hashlib.sha256(os.path.abspath(heat_dir).encode()).hexdigest()[:16]
        return self.root / f"{name}.json"

    def running(self, besides: str | None = None) -> list[str]:
        """The heat-dirs whose noted Heat runs (other than ``besides``); drops the
        notes of those that stopped."""
        found = []
        skip = self._note(besides) if besides else None
        for note in sorted(self.root.glob("*.json")) if self.root.is_dir() else ():
            if note == skip:
                continue
            try:
                heat_dir = str(json.loads(note.read_text())["heat_dir"])
            except (OSError, ValueError, KeyError, TypeError):
                heat_dir = None
            if heat_dir is not None and self._running(heat_dir):
                found.append(heat_dir)
            else:
                with contextlib.suppress(FileNotFoundError):
                    note.unlink()
        return found

    def check(self, limit: int, heat_dir: str | None = None) -> None:
        """Refuse (:class:`~tripleo_flow.exceptions.TooManyLaunchedHeats`) when
        ``limit`` noted Heats other than ``heat_dir``'s run."""
        others = self.running(besides=heat_dir)
        if len(others) >= limit:
            raise exceptions.TooManyLaunchedHeats(limit, others)

    @contextlib.contextmanager
    def claim(self, heat_dir: str, limit: int) -> Iterator[None]:
        """Check the limit, run the launch (the ``with`` body) and note ``heat_dir``
        when it succeeded, all under the lock (see the module docstring)."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self.check(limit, heat_dir)
            yield
            note = self._note(heat_dir)
            tmp = note.with_name(f".{note.name}.tmp")
            tmp.write_text(json.dumps({"heat_dir": os.path.abspath(heat_dir)}) + "\n")
            os.replace(tmp, note)
        finally:
            os.close(fd)


def for_conf(conf: cfg.ConfigOpts) -> LaunchedHeats:
    """The notes of this server (``data_dir``), a Heat's state read by its launcher."""
    from tripleo_flow import config
    from tripleo_flow.heat import make_launcher

    def running(heat_dir: str) -> bool:
        try:
            return make_launcher(conf, None, heat_dir).status().running
        except exceptions.TripleoFlowError:
            return False

    return LaunchedHeats(config.data_dir(conf), running)
