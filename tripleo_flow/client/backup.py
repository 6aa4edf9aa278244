"""Backup and restore of what tripleo-flow keeps (TripleO's ``undercloud backup``).

:meth:`BackupMixin.create_backup` writes one archive of the data directory: the
local plan store with its plan history, the executions database (SQLite's online
backup API), the deployments' work dirs (Heat database dumps, config-download
projects), the HTTP API's work dirs, validation results, user workbooks and the
local Ironic's saved node database.  :meth:`BackupMixin.restore_backup` puts such an
archive back as the data directory.  The archive format lives in
:mod:`tripleo_flow.workspace.backup_archive`.

Consistency: a backup is refused while an execution runs (RUNNING or PENDING in
the executions database) or a launched Heat or Ironic runs from the data directory
(its database is live, off the dumps); the executions are read again once the
archive is written, and an execution started or changed meanwhile discards it.
Only the embedded defaults are backed up: a Swift plan store, another executions
database, an external Ironic, or state configured outside the data directory is
refused by name rather than left out silently.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oslo_config import cfg

from tripleo_flow import exceptions
from tripleo_flow.workspace import backup_archive, start_gate

if TYPE_CHECKING:
    from tripleo_flow.engine.store.executions import Execution

#: Execution states that mean something still writes.
_ACTIVE = ("RUNNING", "PENDING")


class BackupMixin:
    """Back up and restore the data directory."""

    conf: cfg.ConfigOpts
    data_dir: Path

    if TYPE_CHECKING:
        def list_executions(self, workflow: str | None = None) -> list[Execution]: ...

        def list_plans(self) -> list[dict[str, Any]]: ...

        def deployment_status(self, plan: str) -> dict[str, Any]: ...

        def close_workflows(self) -> None: ...

    def _limits(self) -> tuple[int, int]:
        return self.conf.limits.archive_max_size, self.conf.limits.archive_max_members

    def _inside(self, path: str | os.PathLike[str]) -> bool:
        return Path(path).expanduser().absolute().is_relative_to(self.data_dir.absolute())

    def _check_embedded(self, doing: str) -> None:
        """Refuse a configuration whose state is not all in the data directory."""
        conf = self.conf
        outside: list[str] = []
        if conf.plan_store.backend == "swift":
            outside.append("the plans, kept in Swift ([plan_store] backend = swift)")
        elif conf.plan_store.local_root and not self._inside(conf.plan_store.local_root):
            outside.append(f"the plans, kept in {conf.plan_store.local_root!r} "
                           "([plan_store] local_root)")
        url = conf.workflows.connection
        default_db = self.data_dir.absolute() / backup_archive.EXECUTIONS_DB
        if url and url not in (f"sqlite:///{default_db}", f"sqlite:///{self.data_dir}/"
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
                f"({str(self.data_dir)!r}) is backed up, and this configuration keeps "
                f"{'; '.join(outside)} elsewhere, which a backup does not hold yet. Back "
                "that up with its own tools, or use the default for it.")

    def _check_quiet(self) -> list[tuple[str, str, Any]]:
        """Refuse while an execution or a launched service runs; return the executions'
        (id, state, updated_at) to compare after the copy."""
        executions = self.list_executions()
        active = [e for e in executions if e.state in _ACTIVE or e.pausing]
        if active:
            shown = ", ".join(f"{e.id} ({e.workflow}, {e.state})" for e in active[:5])
            raise exceptions.Conflict(
                f"Refusing to back up or restore while executions run: {shown}. Wait for them "
                "to end", hints=[exceptions.Hint("", "execution.list", sep=" (",
                                                  tail="), then retry.")])
        for name in ("heat-launcher", "ironic-launcher"):
            records = (r for top in backup_archive.KEPT
                       for r in sorted((self.data_dir / top).glob(f"**/{name}/run.json")))
            for record in records:
                service = name.split("-")[0]
                raise exceptions.Conflict(
                    f"Refusing to back up or restore while a launched {service} runs from "
                    f"{str(record.parent.parent)!r} (its database is live, not in its dump).",
                    hints=[exceptions.Hint("Stop it first", f"{service}.kill",
                                           {f"{service}_dir": record.parent.parent})])
        return sorted((e.id, e.state, repr(e.updated_at)) for e in executions)

    def create_backup(self, output: str | os.PathLike[str],
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
        if target.is_relative_to(self.data_dir.absolute()):
            raise exceptions.InvalidInput(
                f"Write the backup outside the data directory {str(self.data_dir)!r}.")
        return self._write_backup(target, passphrase)

    def _write_backup(self, target: Path, passphrase: str | None) -> dict[str, Any]:
        """:meth:`create_backup` to ``target`` (an absolute path, checked by the caller)."""
        self._check_embedded("back up")
        if not self.data_dir.is_dir():
            raise exceptions.NotFound(
                f"Data directory {str(self.data_dir)!r} does not exist: nothing to back up.")
        before = self._check_quiet()
        plans = sorted(p["name"] for p in self.list_plans())
        for plan in plans:
            work_dir = self.deployment_status(plan).get("work_dir")
            if work_dir and not self._inside(work_dir):
                raise exceptions.InvalidInput(
                    f"Cannot back up: plan {plan!r} was deployed with the work dir "
                    f"{work_dir!r}, outside the data directory {str(self.data_dir)!r}, which "
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
            self.data_dir, target, {"plans": plans, "executions": len(before)},
            max_size, max_members, before_publish=unchanged, passphrase=passphrase)
        return {"path": str(target), "size": target.stat().st_size,
                "encrypted": bool(passphrase),
                "files": len(manifest["files"]), "plans": plans,
                "executions": len(before), "kept": manifest["kept"],
                "left_out": manifest["left_out"]}

    def restore_backup(self, archive: str | os.PathLike[str], force: bool = False,
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
        self._check_embedded("restore")
        source = Path(archive).expanduser()
        if not source.is_file():
            raise exceptions.NotFound(f"Backup archive {str(source)!r} does not exist.")
        max_size, max_members = self._limits()
        manifest, files = backup_archive.read_archive(source, max_size, max_members,
                                                      passphrase)
        target = self.data_dir.absolute()
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
        if target.is_dir() and any(target.iterdir()):
            kept, _ = backup_archive.sort_entries(target)
            # An executions database without executions (a server made it) holds nothing.
            holding = [k for k in kept
                       if k != backup_archive.EXECUTIONS_DB or self.list_executions()]
            if holding and not force:
                raise exceptions.RestoreWouldReplace(str(target), holding, str(source))
            if kept:
                self._check_quiet()
                self.close_workflows()
        staging = backup_archive.stage(files, manifest, target)
        return backup_archive.swap_in(staging, target)


__all__ = ["BackupMixin"]
