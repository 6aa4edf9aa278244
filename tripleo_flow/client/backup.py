"""Backup and restore of what tripleo-flow keeps (TripleO's ``undercloud backup``).

:meth:`BackupManager.create` writes one archive of the data directory: the
local plan store with its plan history, the executions database (SQLite's online
backup API), the deployments' work dirs (Heat database dumps, config-download
projects), the HTTP API's work dirs, validation results, user workbooks and the
local Ironic's saved node database.  :meth:`BackupManager.restore` puts such an
archive back as the data directory.  The archive format lives in
:mod:`tripleo_flow.workspace.backup_archive`.

Consistency: a backup is refused while an execution runs (RUNNING or PENDING in
the executions database) or a launched Heat or Ironic runs from the data directory
(its database is live, off the dumps); the executions are read again once the
archive is written, and an execution started or changed meanwhile discards it.
Only the embedded defaults are backed up: a Swift plan store, another executions
database, an external Ironic, or state configured outside the data directory is
refused by name rather than left out silently.

Backups kept on the server, for the HTTP API and the GUI: always encrypted.

A backup holds every password of the cloud, and nothing secret leaves the server
in clear: :meth:`BackupManager.store` writes the same archive as
:meth:`BackupManager.create` (same checks, same
refusals), sealed with a passphrase of at least ``[api] backup_passphrase_min_length``
characters, to ``<data_dir>/backups/<id>.tfbackup`` under an id the server draws.
A backup is named only by that id (32 hex digits), never by a path, and is served
(:meth:`~BackupManager.open`) only when it is sealed.  The backups
directory is never inside a backup and moves along when one is restored
(:data:`~tripleo_flow.workspace.backup_archive.REBUILT`).  The partial file of a backup
whose writer was killed (kill -9) is removed at the next backup made or listed.

The archive's code, and the cryptography that seals it, are imported by the methods
that use them: a command that makes no backup loads neither
(tests/functional/cli/test_cli_startup.py).
"""

from __future__ import annotations

import datetime
import os
import re
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from tripleo_flow import exceptions
from tripleo_flow.client.base import Manager
from tripleo_flow.workspace import start_gate

if TYPE_CHECKING:
    import builtins

    from tripleo_flow.client.deploy import DeploymentManager
    from tripleo_flow.client.executions import ExecutionManager
    from tripleo_flow.client.plans import PlanManager
    from tripleo_flow.client.session import Session
    pass

#: What a stored backup is called: ``<id>`` + :data:`SUFFIX`.
BACKUP_ID = re.compile(r"^[0-9a-f]{32}$")
SUFFIX = ".tfbackup"

#: Execution states that mean something still writes.
_ACTIVE = ("RUNNING", "PENDING")


class BackupManager(Manager):
    """Back up and restore the data directory; the backups kept on the server
    (``client.backups``)."""

    def __init__(self, session: Session, executions: ExecutionManager, plans: PlanManager,
                 deployments: DeploymentManager) -> None:
        super().__init__(session)
        self._executions = executions
        self._plans = plans
        self._deployments = deployments

    def _limits(self) -> tuple[int, int]:
        limits = self._session.conf.limits
        return limits.archive_max_size, limits.archive_max_members

    def _inside(self, path: str | os.PathLike[str]) -> bool:
        return Path(path).expanduser().absolute().is_relative_to(self._session.data_dir.absolute())

    def _check_embedded(self, doing: str) -> None:
        """Refuse a configuration whose state is not all in the data directory."""
        from tripleo_flow.workspace import backup_archive

        conf = self._session.conf
        outside: list[str] = []
        if conf.plan_store.backend == "swift":
            outside.append("the plans, kept in Swift ([plan_store] backend = swift)")
        elif conf.plan_store.local_root and not self._inside(conf.plan_store.local_root):
            outside.append(f"the plans, kept in {conf.plan_store.local_root!r} "
                           "([plan_store] local_root)")
        url = conf.workflows.connection
        default_db = self._session.data_dir.absolute() / backup_archive.EXECUTIONS_DB
        if url and url not in (f"sqlite:///{default_db}", f"sqlite:///{self._session.data_dir}/"
                               f"{backup_archive.EXECUTIONS_DB}"):
            scheme = url.split(":", 1)[0]
            outside.append(f"the executions database ({scheme} at [workflows] connection)")
        if conf.workflows.workbooks_dir and not self._inside(conf.workflows.workbooks_dir):
            outside.append(f"the user workbooks in {conf.workflows.workbooks_dir!r}")
        if conf.ironic.endpoint:
            outside.append(f"the node database of the external Ironic at {conf.ironic.endpoint}")
        elif conf.ironic.ironic_dir and not self._inside(conf.ironic.ironic_dir):
            outside.append(f"the local Ironic's node database in {conf.ironic.ironic_dir!r}")
        if outside:
            raise exceptions.InvalidInput(
                f"Cannot {doing}: only what tripleo-flow keeps in its data directory "
                f"({str(self._session.data_dir)!r}) is backed up, and this configuration keeps "
                f"{'; '.join(outside)} elsewhere, which a backup does not hold yet. Back "
                "that up with its own tools, or use the default for it.")

    def _check_quiet(self) -> list[tuple[str, str, Any]]:
        """Refuse while an execution or a launched service runs; return the executions'
        (id, state, updated_at) to compare after the copy."""
        from tripleo_flow.workspace import backup_archive

        executions = self._executions.list()
        active = [e for e in executions if e.state in _ACTIVE or e.pausing]
        if active:
            shown = ", ".join(f"{e.id} ({e.workflow}, {e.state})" for e in active[:5])
            raise exceptions.Conflict(
                f"Refusing to back up or restore while executions run: {shown}. Wait for them "
                "to end", hints=[exceptions.Hint("", "execution.list", sep=" (",
                                                  tail="), then retry.")])
        for name in ("heat-launcher", "ironic-launcher"):
            records = (r for top in backup_archive.KEPT
                       for r in sorted((self._session.data_dir / top).glob(f"**/{name}/run.json")))
            for record in records:
                service = name.split("-")[0]
                raise exceptions.Conflict(
                    f"Refusing to back up or restore while a launched {service} runs from "
                    f"{str(record.parent.parent)!r} (its database is live, not in its dump).",
                    hints=[exceptions.Hint("Stop it first", f"{service}.kill",
                                           {f"{service}_dir": record.parent.parent})])
        return sorted((e.id, e.state, repr(e.updated_at)) for e in executions)

    def create(self, output: str | os.PathLike[str],
               passphrase: str | None = None) -> dict[str, Any]:
        """Write a backup archive of everything tripleo-flow keeps to ``output``
        (a new file, 0600 from its creation, renamed into place once complete),
        encrypted with ``passphrase`` when given.

        :returns: ``path``, ``size``, ``files`` (count), ``plans``, ``executions``,
            ``kept`` and ``left_out`` (top-level entries of the data directory).
        :raises InvalidInput: the configuration keeps state outside the data directory,
            or ``output`` exists.
        :raises Conflict: an execution, a launched Heat or Ironic runs, or an execution
            started or changed while the archive was written (nothing is left behind).
        """
        target = Path(output).expanduser().absolute()
        if target.is_relative_to(self._session.data_dir.absolute()):
            raise exceptions.InvalidInput(
                f"Write the backup outside the data directory {str(self._session.data_dir)!r}.")
        return self._write_backup(target, passphrase)

    def _write_backup(self, target: Path, passphrase: str | None) -> dict[str, Any]:
        """:meth:`create` to ``target`` (an absolute path, checked by the caller)."""
        from tripleo_flow.workspace import backup_archive

        self._check_embedded("back up")
        if not self._session.data_dir.is_dir():
            raise exceptions.NotFound(
                f"Data directory {str(self._session.data_dir)!r} does not exist: nothing to "
                "back up.")
        before = self._check_quiet()
        plans = sorted(p["name"] for p in self._plans.list())
        for plan in plans:
            work_dir = self._deployments.status(plan).get("work_dir")
            if work_dir and not self._inside(work_dir):
                raise exceptions.InvalidInput(
                    f"Cannot back up: plan {plan!r} was deployed with the work dir "
                    f"{work_dir!r}, outside the data directory "
                    f"{str(self._session.data_dir)!r}, which "
                    "a backup does not hold yet. Copy that directory yourself, or deploy "
                    "with the default work dir.")

        def unchanged() -> None:
            if self._check_quiet() != before:
                raise exceptions.Conflict(
                    "Refusing the backup: an execution started or changed while it was "
                    "written, so the archive may not be consistent; nothing was written. "
                    "Retry when no workflow runs.")

        max_size, max_members = self._limits()
        manifest = backup_archive.write_archive(
            self._session.data_dir, target, {"plans": plans, "executions": len(before)},
            max_size, max_members, before_publish=unchanged, passphrase=passphrase)
        return {"path": str(target), "size": target.stat().st_size,
                "encrypted": bool(passphrase),
                "files": len(manifest["files"]), "plans": plans,
                "executions": len(before), "kept": manifest["kept"],
                "left_out": manifest["left_out"]}

    def restore(self, archive: str | os.PathLike[str], force: bool = False,
                passphrase: str | None = None) -> dict[str, Any]:
        """Make the data directory what the backup ``archive`` holds.

        The archive is read and checked whole (manifest, checksums, ``[limits]``,
        no unsafe member) before anything is written; the files are written to a new
        directory beside the data directory, which is then swapped in.  A non-empty
        data directory is replaced only with ``force`` (an executions database without
        executions counts as empty): its kept state is moved aside
        (``previous``), its other entries (virtualenvs ...) move into the new one.

        :returns: ``data_dir``, ``files``, ``plans``, ``executions``, ``created_at``,
            ``tripleo_flow_version``, ``backed_up_from`` and ``previous``.
        :param passphrase: the passphrase of an encrypted archive (required for one,
            refused for one that is not).
        :raises InvalidArchive: the archive is unreadable, unsafe, truncated or changed,
            or does not open with ``passphrase``.
        :raises Conflict: the data directory is not empty and ``force`` is not given,
            or executions or a launched Heat or Ironic run in it.
        """
        from tripleo_flow.workspace import backup_archive

        self._check_embedded("restore")
        source = Path(archive).expanduser()
        if not source.is_file():
            raise exceptions.NotFound(f"Backup archive {str(source)!r} does not exist.")
        max_size, max_members = self._limits()
        manifest, files = backup_archive.read_archive(source, max_size, max_members,
                                                      passphrase)
        target = self._session.data_dir.absolute()
        # From the check that nothing runs to the swap, no workflow starts (any process).
        with start_gate.restoring(target):
            previous = self._replace(target, source, files, manifest, force)
        return {"data_dir": str(target), "files": len(files),
                "plans": list(manifest.get("plans", [])),
                "executions": manifest.get("executions"),
                "created_at": manifest.get("created_at"),
                "tripleo_flow_version": manifest.get("tripleo_flow_version"),
                "backed_up_from": manifest.get("data_dir"),
                "previous": None if previous is None else str(previous)}

    def _replace(self, target: Path, source: Path, files: dict[str, bytes],
                 manifest: dict[str, Any], force: bool) -> Path | None:
        """Swap the checked archive's ``files`` in as ``target`` (the start gate held)."""
        from tripleo_flow.workspace import backup_archive

        if target.is_dir() and any(target.iterdir()):
            kept, _ = backup_archive.sort_entries(target)
            # An executions database without executions (a server made it) holds nothing.
            holding = [k for k in kept
                       if k != backup_archive.EXECUTIONS_DB or self._executions.list()]
            if holding and not force:
                raise exceptions.RestoreWouldReplace(str(target), holding, str(source))
            if kept:
                self._check_quiet()
                self._session.close_workflows()
        staging = backup_archive.stage(files, manifest, target)
        return backup_archive.swap_in(staging, target)


    # -- backups kept on the server ------------------------------------------------

    def _backup_file(self, backup_id: str) -> Path:
        path = self._session.backups_dir / f"{backup_id}{SUFFIX}"
        if not (isinstance(backup_id, str) and BACKUP_ID.match(backup_id)) or \
                not path.is_file():
            raise exceptions.NotFound(
                f"Backup {str(backup_id)[:64]!r} does not exist: a backup is named by "
                "the id it was given when made; list the backups for theirs.")
        return path

    def store(self, passphrase: str) -> dict[str, Any]:
        """Back up the data directory into a new backup kept on the server, encrypted
        with ``passphrase`` (as :meth:`create`: refused while a workflow runs).

        :returns: ``id``, ``created``, ``size``, ``encrypted`` (true), ``files``,
            ``plans``, ``executions``, ``kept`` and ``left_out``.
        :raises InvalidInput: no passphrase, or one shorter than ``[api]
            backup_passphrase_min_length``; or what :meth:`create` refuses.
        """
        least = self._session.conf.api.backup_passphrase_min_length
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
        if kept >= self._session.conf.api.max_stored_backups:
            raise exceptions.Conflict(
                f"The server keeps {kept} backups already, the most it may keep ([api] "
                "max_stored_backups): download and delete one first.")
        backup_id = uuid.uuid4().hex
        made = self._write_backup(self._session.backups_dir / f"{backup_id}{SUFFIX}", passphrase)
        made.pop("path", None)
        return {**self._describe(backup_id), **made}

    def _describe(self, backup_id: str) -> dict[str, Any]:
        from tripleo_flow.common import sealing

        path = self._backup_file(backup_id)
        with open(path, "rb") as stream:
            head = stream.read(len(sealing.MAGIC))
            info = os.fstat(stream.fileno())
        created = datetime.datetime.fromtimestamp(info.st_mtime, datetime.UTC)
        return {"id": backup_id, "created": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "size": info.st_size, "encrypted": sealing.is_sealed(head)}

    def list(self) -> list[dict[str, Any]]:
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

    def _sweep(self) -> builtins.list[str]:
        """Remove the partial files of backups whose writing was killed (their process
        ended, or older than ``[api] stale_backup_age``)."""
        from tripleo_flow.workspace import backup_archive

        return backup_archive.sweep_partials(self._session.backups_dir,
                                             self._session.conf.api.stale_backup_age)

    def _backup_ids(self) -> builtins.list[str]:
        """The ids of the backups in :attr:`backups_dir` (other files left out)."""
        try:
            names = os.listdir(self._session.backups_dir)
        except FileNotFoundError:
            return []
        return [name[:-len(SUFFIX)] for name in names
                if name.endswith(SUFFIX) and BACKUP_ID.match(name[:-len(SUFFIX)])]

    def open(self, backup_id: str) -> tuple[BinaryIO, dict[str, Any]]:
        """The archive of backup ``backup_id``, open for reading from its start, and its
        description; the caller closes it.

        :raises NotFound: no such backup
        :raises Conflict: it is not encrypted (put there by hand): never served
        """
        from tripleo_flow.common import sealing

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

    def delete(self, backup_id: str) -> None:
        """Delete backup ``backup_id``.

        :raises NotFound: no such backup
        """
        path = self._backup_file(backup_id)
        try:
            path.unlink()
        except FileNotFoundError:  # deleted meanwhile
            self._backup_file(backup_id)


__all__ = ["BACKUP_ID", "SUFFIX", "BackupManager"]
