"""The workbooks and actions the workflows are read from: ``client.workbooks``
(list, create, update, delete, validate, check) and ``client.actions`` (list, get).
The catalog itself (shipped and user workbooks, re-read when a file changes) and
the action registry are the session's (:mod:`tripleo_flow.client.session`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from tripleo_flow import exceptions
from tripleo_flow.client import workbooks
from tripleo_flow.client.base import Manager

if TYPE_CHECKING:
    import builtins

    from tripleo_flow.actions.registry import ActionInfo
    from tripleo_flow.engine.lang.workbook_loader import Entry
    from tripleo_flow.engine.lang.workbook_model import Problem

# The workbook language is imported by the methods that use it, on first use
# (tests/unit/test_cli_startup.py).


class ActionManager(Manager):
    """The installed actions (``client.actions``)."""

    def list(self) -> list[ActionInfo]:
        return self._session.action_registry.infos()

    def get(self, name: str) -> ActionInfo:
        if name not in self._session.action_registry:
            raise exceptions.ActionNotFound(name)
        return self._session.action_registry.info(name)


class WorkbookManager(Manager):
    """Shipped and user workbooks (``client.workbooks``)."""

    def list(self) -> list[Entry]:
        return sorted(self._session.catalog().entries.values(), key=lambda e: e.name)

    def validate(self, paths: Iterable[str | os.PathLike[str]]) -> builtins.list[Problem]:
        """Problems of the given files, checked with the installed workbooks (empty: fine).

        A file whose workbook name matches a user workbook is checked as its
        replacement.
        """
        from tripleo_flow.engine.lang import workbook_loader

        files = [Path(p) for p in paths]
        registry = self._session.action_registry
        resolved = {p.resolve() for p in files}
        limits = self._session.workbook_limits()
        names = {wb.name for wb in (workbook_loader.read_file(p, limits)[0] for p in files)
                 if wb}
        others = list(workbook_loader.workbook_files(workbook_loader.SHIPPED_DIR))
        for user_file in workbook_loader.workbook_files(self._session.workbooks_dir):
            workbook = workbook_loader.read_file(user_file, limits)[0]
            if user_file.resolve() not in resolved and not (workbook and workbook.name in names):
                others.append(user_file)
        catalog = workbook_loader.load_catalog(
            [], registry.classes(), registry.broken(),
            extra_files=[f for f in others if f.resolve() not in resolved] + files,
            limits=limits, made=workbooks.ACTION_WORKFLOWS)
        problems: list[Problem] = []
        for entry in catalog.entries.values():
            if entry.path.resolve() in resolved:
                problems += entry.problems
        return problems

    def check(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        """Raise InvalidWorkbook listing every problem of ``paths`` (nothing when fine)."""
        from tripleo_flow.engine.lang import workbook_loader

        problems = self.validate(paths)
        if problems:
            raise workbook_loader.invalid(problems)

    def create(self, path: str | os.PathLike[str]) -> Entry:
        """Add a user workbook (checked first); Conflict when its name exists."""
        return self._install_workbook(Path(path), replace=False)

    def update(self, path: str | os.PathLike[str]) -> Entry:
        """Replace a user workbook with the file at ``path`` (checked first)."""
        return self._install_workbook(Path(path), replace=True)

    def delete(self, name: str) -> None:
        entry = self._session.catalog().entries.get(name)
        if entry is None:
            raise exceptions.NotFound(
                f"Workbook {name!r} does not exist.",
                hints=[exceptions.Hint("List workbooks with", "workbook.list")])
        if entry.shipped:
            raise exceptions.Conflict(f"Workbook {name!r} ships with tripleo-flow and cannot "
                                      "be deleted.")
        entry.path.unlink()

    def _install_workbook(self, path: Path, replace: bool) -> Entry:
        from tripleo_flow.engine.lang import workbook_loader

        workbook, problems = workbook_loader.read_file(path, self._session.workbook_limits())
        if workbook is None:
            raise workbook_loader.invalid(problems)
        catalog = self._session.catalog()
        existing = catalog.entries.get(workbook.name)
        if existing is not None and existing.shipped:
            raise exceptions.Conflict(
                f"Workbook {workbook.name!r} ships with tripleo-flow; give yours another name.")
        taken = workbook_loader.shadowed(workbook, (
            wf.full_name for wf in catalog.workflows() if catalog.entry_of(wf).shipped))
        if taken:
            raise exceptions.Conflict(
                f"Workbook {workbook.name!r} would replace workflow(s) that ship with "
                f"tripleo-flow: {', '.join(taken)}. Give the workbook another name.")
        if existing is not None and not replace:
            raise exceptions.Conflict(
                f"Workbook {workbook.name!r} already exists.",
                hints=[exceptions.Hint("Replace it with", "workbook.update", {"path": path})])
        if existing is None and replace:
            raise exceptions.NotFound(
                f"Workbook {workbook.name!r} does not exist.",
                hints=[exceptions.Hint("Add it with", "workbook.create", {"path": path})])
        problems = self.validate([path])
        if problems:
            raise workbook_loader.invalid(problems)
        target = self._session.workbooks_dir / f"{_safe(workbook.name)}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        if existing is not None and existing.path.resolve() != target.resolve():
            existing.path.unlink()
        with tempfile.NamedTemporaryFile("wb", dir=target.parent, delete=False) as tmp:
            tmp.write(path.read_bytes())
        shutil.move(tmp.name, target)
        entry = self._session.catalog().entries[workbook.name]
        return entry


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)
