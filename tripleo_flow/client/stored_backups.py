"""Backups kept on the server, for the HTTP API and the GUI: always encrypted.

A backup holds every password of the cloud, and nothing secret leaves the server
in clear: :meth:`StoredBackupsMixin.store_backup` writes the same archive as
:meth:`~tripleo_flow.client.backup.BackupMixin.create_backup` (same checks, same
refusals), sealed with a passphrase of at least ``[api] backup_passphrase_min_length``
characters, to ``<data_dir>/backups/<id>.tfbackup`` under an id the server draws.
A backup is named only by that id (32 hex digits), never by a path, and is served
(:meth:`~StoredBackupsMixin.open_backup`) only when it is sealed.  The backups
directory is never inside a backup and moves along when one is restored
(:data:`~tripleo_flow.workspace.backup_archive.REBUILT`).  The partial file of a backup
whose writer was killed (kill -9) is removed at the next backup made or listed.
"""

from __future__ import annotations

import datetime
import os
import re
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from oslo_config import cfg

from tripleo_flow import exceptions
from tripleo_flow.common import sealing
from tripleo_flow.workspace import backup_archive

#: What a stored backup is called: ``<id>`` + :data:`SUFFIX`.
BACKUP_ID = re.compile(r"^[0-9a-f]{32}$")
SUFFIX = ".tfbackup"


class StoredBackupsMixin:
    """Create, list, read and delete the backups kept in the data directory."""

    conf: cfg.ConfigOpts
    data_dir: Path

    if TYPE_CHECKING:
        def _write_backup(self, target: Path, passphrase: str | None) -> dict[str, Any]: ...

    @property
    def backups_dir(self) -> Path:
        """``<data_dir>/backups``."""
        return self.data_dir.absolute() / backup_archive.BACKUPS

    def _backup_file(self, backup_id: str) -> Path:
        path = self.backups_dir / f"{backup_id}{SUFFIX}"
        if not (isinstance(backup_id, str) and BACKUP_ID.match(backup_id)) or \
                not path.is_file():
            raise exceptions.NotFound(
                f"Backup {str(backup_id)[:64]!r} does not exist: a backup is named by "
                "the id it was given when made; list the backups for theirs.")
        return path

    def store_backup(self, passphrase: str) -> dict[str, Any]:
        """Back up the data directory into a new backup kept on the server, encrypted
        with ``passphrase`` (as :meth:`create_backup`: refused while a workflow runs).

        :returns: ``id``, ``created``, ``size``, ``encrypted`` (true), ``files``,
            ``plans``, ``executions``, ``kept`` and ``left_out``.
        :raises InvalidInput: no passphrase, or one shorter than ``[api]
            backup_passphrase_min_length``; or what :meth:`create_backup` refuses.
        """
        least = self.conf.api.backup_passphrase_min_length
        if not isinstance(passphrase, str) or not passphrase:
            raise exceptions.InvalidInput(
                "Give a passphrase to encrypt the backup with: a backup holds every password "
                "of the cloud, and only an encrypted one may leave the server.")
        if len(passphrase) < least:
            raise exceptions.InvalidInput(
                f"The passphrase is too short: a backup's passphrase has at least {least} "
                "characters ([api] backup_passphrase_min_length).")
        self._sweep()
        kept = len(self._backup_ids())
        if kept >= self.conf.api.max_stored_backups:
            raise exceptions.Conflict(
                f"The server keeps {kept} backups already, the most it may keep ([api] "
                "max_stored_backups): download and delete one first.")
        backup_id = uuid.uuid4().hex
        made = self._write_backup(self.backups_dir / f"{backup_id}{SUFFIX}", passphrase)
        made.pop("path", None)
        return {**self._describe(backup_id), **made}

    def _describe(self, backup_id: str) -> dict[str, Any]:
        path = self._backup_file(backup_id)
        with open(path, "rb") as stream:
            head = stream.read(len(sealing.MAGIC))
            info = os.fstat(stream.fileno())
        created = datetime.datetime.fromtimestamp(info.st_mtime, datetime.UTC)
        return {"id": backup_id, "created": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "size": info.st_size, "encrypted": sealing.is_sealed(head)}

    def list_backups(self) -> list[dict[str, Any]]:
        """The backups kept on the server (``id``, ``created``, ``size``,
        ``encrypted``), newest first."""
        self._sweep()
        found = []
        for backup_id in self._backup_ids():
            try:
                found.append(self._describe(backup_id))
            except exceptions.NotFound:  # deleted meanwhile
                continue
        return sorted(found, key=lambda b: (b["created"], b["id"]), reverse=True)

    def _sweep(self) -> list[str]:
        """Remove the partial files of backups whose writing was killed (their process
        ended, or older than ``[api] stale_backup_age``)."""
        return backup_archive.sweep_partials(self.backups_dir, self.conf.api.stale_backup_age)

    def _backup_ids(self) -> list[str]:
        """The ids of the backups in :attr:`backups_dir` (other files left out)."""
        try:
            names = os.listdir(self.backups_dir)
        except FileNotFoundError:
            return []
        return [name[:-len(SUFFIX)] for name in names
                if name.endswith(SUFFIX) and BACKUP_ID.match(name[:-len(SUFFIX)])]

    def open_backup(self, backup_id: str) -> tuple[BinaryIO, dict[str, Any]]:
        """The archive of backup ``backup_id``, open for reading from its start, and its
        description; the caller closes it.

        :raises NotFound: no such backup
        :raises Conflict: it is not encrypted (put there by hand): never served
        """
        path = self._backup_file(backup_id)
        stream = open(path, "rb")  # noqa: SIM115 (returned open)
        try:
            if not sealing.is_sealed(stream.read(len(sealing.MAGIC))):
                raise exceptions.Conflict(
                    f"Backup {backup_id!r} is not encrypted, so it is not served: a backup "
                    "holds every password of the cloud. Make an encrypted one (with a "
                    "passphrase) and delete this one.")
            stream.seek(0)
            return stream, self._describe(backup_id)
        except BaseException:
            stream.close()
            raise

    def delete_backup(self, backup_id: str) -> None:
        """Delete backup ``backup_id``.

        :raises NotFound: no such backup
        """
        path = self._backup_file(backup_id)
        try:
            path.unlink()
        except FileNotFoundError:  # deleted meanwhile
            self._backup_file(backup_id)


__all__ = ["BACKUP_ID", "SUFFIX", "StoredBackupsMixin"]
