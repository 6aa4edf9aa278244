"""The server paths a workflow started over the HTTP API may use.

:func:`tripleo_flow.engine.lang.paths.path_inputs` names the workflow inputs that
become server paths and their kind; :class:`ServerPaths` checks or places their
values before anything runs:

- ``input-path`` (read): an upload (``<data_dir>/uploads/<id>.tar.gz``, from
  ``POST /v1/uploads``) or a path under ``[api] allowed_paths``;
- ``output-path`` (written): a plain file name, written in a new directory of the
  server's download area, ``<data_dir>/downloads/<id>/<name>``
  (``GET /v1/downloads/<id>``); download directories older than ``[api]
  upload_ttl`` are deleted as new ones are made;
- ``work-dir`` (read and written): a plain name, made ``<data_dir>/work/<name>``,
  or a path under ``[api] allowed_paths``;
- ``secrets-out`` (not a path, checked with them): false, or refused: what a
  workflow writes for an API user never holds the plan's secrets.

Values are replaced by their resolved form (symbolic links followed), so what is
checked is what the actions use.  The CLI and Python callers pass no
:class:`ServerPaths` and keep using any local path.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import path_redaction
from tripleo_flow.engine.lang.action import INPUT_PATH, OUTPUT_PATH, SECRETS_OUT, WORK_DIR

LOG = logging.getLogger(__name__)

UPLOAD_FILE = re.compile(r"^[0-9a-f]{32}\.tar\.gz$")
DOWNLOAD_ID = re.compile(r"^[0-9a-f]{32}$")
#: What a file name in the download or work area may be.
PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


#: The kinds whose values make a directory once checked, in the order they are placed.
_MAKES = {WORK_DIR: 1, OUTPUT_PATH: 2}


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def purge_downloads(directory: Path, ttl: int, now: float | None = None) -> list[str]:
    """Delete the download directories of ``directory`` older than ``ttl`` seconds
    (0: none); the ids deleted."""
    if not ttl:
        return []
    cutoff = (time.time() if now is None else now) - ttl
    removed = []
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    for entry in entries:
        if not DOWNLOAD_ID.match(entry.name) or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                shutil.rmtree(entry.path)
                removed.append(entry.name)
        except FileNotFoundError:
            continue
    if removed:
        LOG.info("Deleted %d download(s) older than %d s from %s", len(removed), ttl, directory)
    return sorted(removed)


@dataclass(frozen=True)
class ServerPaths:
    """Where a workflow started over HTTP may read and write on the server."""

    uploads: Path
    downloads: Path
    work: Path
    allowed: tuple[Path, ...] = ()
    ttl: int = 0

    @classmethod
    def for_data_dir(cls, data_dir: Path, allowed: Iterable[str] = (),
                     ttl: int = 0) -> ServerPaths:
        return cls(data_dir / "uploads", data_dir / "downloads", data_dir / "work",
                   tuple(Path(a) for a in allowed if a), ttl)

    def _allowed(self, real: str) -> bool:
        return any(_inside(real, os.path.realpath(a)) for a in self.allowed)

    def download_id(self, value: Any) -> str | None:
        """The download id of an output path :meth:`apply` made (None for other values)."""
        if not isinstance(value, str):
            return None
        parent = Path(value).parent
        if parent.parent == self.downloads and DOWNLOAD_ID.match(parent.name):
            return parent.name
        return None

    def apply(self, workflow: str, kinds: Mapping[str, str],
              values: Mapping[str, Any]) -> dict[str, Any]:
        """The values to run ``workflow`` with (output paths placed in new downloads).

        :param kinds: ``{input: path kind}`` (from ``flows.paths.path_inputs``)
        :param values: every input's value (defaults included)
        :raises PathNotAllowed: a value is not a place this server lets HTTP use
        """
        result = dict(values)
        # What only checks first: a refusal leaves no download directory made.
        for name, kind in sorted(kinds.items(), key=lambda item: (_MAKES.get(item[1], 0),
                                                                   item[0])):
            value = values.get(name)
            if kind == SECRETS_OUT:
                if value not in (None, False):
                    raise exceptions.PathNotAllowed(
                        workflow, f"input {name!r} must be false: the HTTP API never hands "
                        "out a plan's secrets. Export with them on the server",
                        hints=[exceptions.Hint("", "plan.export_with_secrets", sep=" (",
                                               tail=").")])
                continue
            if value is None:
                continue
            if not isinstance(value, str) or not value or "\x00" in value:
                raise exceptions.PathNotAllowed(workflow, f"input {name!r} must be a path.")
            value = self._restored(value)
            if kind == INPUT_PATH:
                result[name] = self._input(workflow, name, value)
            elif kind == OUTPUT_PATH:
                result[name] = self._output(workflow, name, value)
            elif kind == WORK_DIR:
                result[name] = self._work_dir(workflow, name, value)
        return result

    def _restored(self, value: str) -> str:
        """``value`` with the data area's label (as answers write it, for example an
        upload's ``path``) turned back into the data area."""
        if value.startswith(path_redaction.DATA + "/"):
            return str(self.uploads.parent) + value[len(path_redaction.DATA):]
        return value

    def _input(self, workflow: str, name: str, value: str) -> str:
        real = os.path.realpath(value)
        uploads = os.path.realpath(self.uploads)
        if os.path.isabs(value) and ((os.path.dirname(real) == uploads
                                      and UPLOAD_FILE.match(os.path.basename(real))
                                      and os.path.isfile(real)) or self._allowed(real)):
            return real
        where = " or a path under [api] allowed_paths" if self.allowed else ""
        raise exceptions.PathNotAllowed(
            workflow, f"input {name!r} ({value[:200]!r}) is not an upload{where}.",
            hints=[exceptions.Hint("", "upload.create", sep=" Send the archive with ",
                                   tail=" and pass the 'path' it answers (the server's "
                                   "administrator can allow directories with [api] "
                                   "allowed_paths).")])

    def _output(self, workflow: str, name: str, value: str) -> str:
        if not PLAIN_NAME.match(value):
            raise exceptions.PathNotAllowed(
                workflow, f"input {name!r} ({value[:200]!r}) must be a plain file name such "
                "as 'overcloud.tar.gz': the server writes it to its download area, served "
                "by", hints=[exceptions.Hint("", "download.get", tail=".")])
        purge_downloads(self.downloads, self.ttl)
        self.downloads.mkdir(parents=True, exist_ok=True, mode=0o700)
        download_id = uuid.uuid4().hex
        directory = self.downloads / download_id
        directory.mkdir(mode=0o700)
        return str(directory / value)

    def _work_dir(self, workflow: str, name: str, value: str) -> str:
        if os.path.dirname(value) == str(self.work):  # a work dir an answer named
            value = os.path.basename(value)
        if PLAIN_NAME.match(value):
            self.work.mkdir(parents=True, exist_ok=True, mode=0o700)
            return str(self.work / value)
        real = os.path.realpath(value)
        if os.path.isabs(value) and self._allowed(real):
            return real
        raise exceptions.PathNotAllowed(
            workflow, f"input {name!r} ({value[:200]!r}) must be a plain name such as "
            "'overcloud' (the server keeps it under its own work area) or a path under "
            "[api] allowed_paths.")
