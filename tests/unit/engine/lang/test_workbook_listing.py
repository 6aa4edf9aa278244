"""Listing workflows reads the workbook files without checking them (issue 30: the
checks compiled every expression of ~40 workflows each time): the same workflows, in
the same order, as the checked catalog lists, with the shipped workbooks and user
ones that fail the checks, do not parse, share a name or would shadow a shipped
workflow.  A check's problem never hides a workflow from the list (running it
raises the problem)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.engine_helpers import ACTIONS, WORKBOOKS, Host
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.engine.lang import workbook_loader

SHADOWING = """\
version: '2.0'
name: mine
workflows:
  tripleo.plan.create_deployment_plan:
    tasks:
      t:
        action: std.noop
"""


def _user_dir(tmp_path: Path) -> Path:
    """Every good and broken test workbook, and one that shadows a shipped workflow."""
    user = tmp_path / "workbooks"
    user.mkdir()
    for kind in ("good", "broken"):
        for path in sorted((WORKBOOKS / kind).iterdir()):
            shutil.copy(path, user / f"{kind}_{path.name}")
    (user / "shadowing.yaml").write_text(SHADOWING)
    (user / "again.yaml").write_bytes((WORKBOOKS / "good" / "naps.yaml").read_bytes())
    return user


def test_reading_lists_the_workflows_the_checked_catalog_lists(tmp_path: Path) -> None:
    directories = [(workbook_loader.SHIPPED_DIR, True), (_user_dir(tmp_path), False)]
    registry = ActionRegistry.from_classes(ACTIONS)
    checked = workbook_loader.load_catalog(directories, registry.classes(), registry.broken())
    read = workbook_loader.read_catalog(directories)
    assert read.workflows() == checked.workflows()
    assert len(read.workflows()) > 40
    # Workbooks the checks found problems in are listed all the same.
    flagged = {name for name, entry in checked.entries.items()
               if entry.problems and not read.entries[name].problems}
    listed = {wf.workbook for wf in read.workflows()}
    assert flagged & listed


def test_listing_workflows_runs_no_check(tmp_path: Path) -> None:
    host = Host(tmp_path / "data", ACTIONS)
    shutil.copytree(_user_dir(tmp_path), host._session.workbooks_dir)
    try:
        listed = host.workflows.list()
        assert "catalog" not in host._session.opened()  # nothing was checked for it
        assert listed == sorted(host._session.catalog().workflows(), key=lambda w: w.full_name)
        assert host.workflows.list() == listed  # from the checked catalog, up to date
    finally:
        host._session.close_workflows()
