"""The Python API of the workbooks and actions the workflows are read from: the
catalog (shipped and user workbooks, re-read when a file changes), the action
registry, and the workbooks' create/update/delete/validate.

:class:`CatalogMixin` needs ``conf`` (oslo ConfigOpts) and ``data_dir`` (a
:class:`pathlib.Path`) on its host.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions

if TYPE_CHECKING:
    from tripleo_flow.actions.registry import ActionInfo, ActionRegistry
    from tripleo_flow.engine.lang.workbook_loader import Catalog, Entry, WorkbookLimits
    from tripleo_flow.engine.lang.workbook_model import Problem

# The workbook language is imported by the methods that use it, on first use
# (tests/unit/test_cli_startup.py).


class CatalogMixin:
    """Workbooks and actions."""

    conf: Any
    data_dir: Path

    # -- wiring -----------------------------------------------------------------

    def _wf_state(self) -> dict[str, Any]:
        state = self.__dict__.get("_workflows_state")
        if state is None:
            state = {}
            self.__dict__["_workflows_state"] = state
        return state

    @property
    def action_registry(self) -> ActionRegistry:
        state = self._wf_state()
        if "registry" not in state:
            from tripleo_flow.actions.registry import ActionRegistry

            state["registry"] = ActionRegistry.load()
        return state["registry"]  # type: ignore[no-any-return]

    def _wf_conf(self, name: str) -> Any:
        return getattr(self.conf.workflows, name)

    def _limit(self, name: str) -> int:
        """``[limits] name``."""
        return int(getattr(self.conf.limits, name))

    def _workbook_limits(self) -> WorkbookLimits:
        from tripleo_flow.engine.lang import workbook_loader

        return workbook_loader.WorkbookLimits(self._limit("workbook_max_size"),
                                              self._limit("workbook_max_tasks"))

    @property
    def workbooks_dir(self) -> Path:
        configured = self._wf_conf("workbooks_dir")
        return Path(configured) if configured else Path(self.data_dir) / "workbooks"

    def _catalog_files(self) -> tuple[list[tuple[Path, bool]], tuple[Any, ...]]:
        """The workbook directories (``(dir, shipped)``) and the stamp of their files
        (names, times, sizes: a catalog read with another stamp is stale)."""
        from tripleo_flow.engine.lang import workbook_loader

        directories = [(workbook_loader.SHIPPED_DIR, True), (self.workbooks_dir, False)]
        stamp = tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size)
                      for d, _ in directories for f in workbook_loader.workbook_files(d))
        return directories, stamp

    def _catalog(self) -> Catalog:
        """The catalog, re-read only when a workbook file changed."""
        from tripleo_flow.engine.lang import workbook_loader

        directories, stamp = self._catalog_files()
        state = self._wf_state()
        cached = state.get("catalog")
        if cached is not None and cached[0] == stamp:
            return cached[1]  # type: ignore[no-any-return]
        registry = self.action_registry
        catalog = workbook_loader.load_catalog(directories, registry.classes(),
                                               registry.broken(),
                                               limits=self._workbook_limits())
        state["catalog"] = (stamp, catalog)
        return catalog

    def _listed_catalog(self) -> Catalog:
        """The workflows' catalog for listing them: the checked one when this process
        has it up to date, else the files read without the checks (no action
        registry, no expression compiled: :func:`~tripleo_flow.engine.lang.workbook_loader.
        read_catalog` lists the same workflows)."""
        from tripleo_flow.engine.lang import workbook_loader

        directories, stamp = self._catalog_files()
        cached = self._wf_state().get("catalog")
        if cached is not None and cached[0] == stamp:
            return cached[1]  # type: ignore[no-any-return]
        return workbook_loader.read_catalog(directories, limits=self._workbook_limits())

    # -- actions -------------------------------------------------------------------

    def list_actions(self) -> list[ActionInfo]:
        return self.action_registry.infos()

    def get_action(self, name: str) -> ActionInfo:
        if name not in self.action_registry:
            raise exceptions.ActionNotFound(name)
        return self.action_registry.info(name)

    # -- workbooks -----------------------------------------------------------------

    def list_workbooks(self) -> list[Entry]:
        return sorted(self._catalog().entries.values(), key=lambda e: e.name)

    def validate_workbooks(self, paths: Iterable[str | os.PathLike[str]]) -> list[Problem]:
        """Problems of the given files, checked with the installed workbooks (empty: fine).

        A file whose workbook name matches a user workbook is checked as its
        replacement.
        """
        from tripleo_flow.engine.lang import workbook_loader

        files = [Path(p) for p in paths]
        registry = self.action_registry
        resolved = {p.resolve() for p in files}
        limits = self._workbook_limits()
        names = {wb.name for wb in (workbook_loader.read_file(p, limits)[0] for p in files)
                 if wb}
        others = list(workbook_loader.workbook_files(workbook_loader.SHIPPED_DIR))
        for user_file in workbook_loader.workbook_files(self.workbooks_dir):
            workbook = workbook_loader.read_file(user_file, limits)[0]
            if user_file.resolve() not in resolved and not (workbook and workbook.name in names):
                others.append(user_file)
        catalog = workbook_loader.load_catalog(
            [], registry.classes(), registry.broken(),
            extra_files=[f for f in others if f.resolve() not in resolved] + files,
            limits=limits)
        problems: list[Problem] = []
        for entry in catalog.entries.values():
            if entry.path.resolve() in resolved:
                problems += entry.problems
        return problems

    def check_workbooks(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        """Raise InvalidWorkbook listing every problem of ``paths`` (nothing when fine)."""
        from tripleo_flow.engine.lang import workbook_loader

        problems = self.validate_workbooks(paths)
        if problems:
            raise workbook_loader.invalid(problems)

    def create_workbook(self, path: str | os.PathLike[str]) -> Entry:
        """Add a user workbook (checked first); Conflict when its name exists."""
        return self._install_workbook(Path(path), replace=False)

    def update_workbook(self, path: str | os.PathLike[str]) -> Entry:
        """Replace a user workbook with the file at ``path`` (checked first)."""
        return self._install_workbook(Path(path), replace=True)

    def delete_workbook(self, name: str) -> None:
        entry = self._catalog().entries.get(name)
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

        workbook, problems = workbook_loader.read_file(path, self._workbook_limits())
        if workbook is None:
            raise workbook_loader.invalid(problems)
        catalog = self._catalog()
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
        problems = self.validate_workbooks([path])
        if problems:
            raise workbook_loader.invalid(problems)
        target = self.workbooks_dir / f"{_safe(workbook.name)}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        if existing is not None and existing.path.resolve() != target.resolve():
            existing.path.unlink()
        with tempfile.NamedTemporaryFile("wb", dir=target.parent, delete=False) as tmp:
            tmp.write(path.read_bytes())
        shutil.move(tmp.name, target)
        entry = self._catalog().entries[workbook.name]
        return entry


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)
