"""Plan create on a real Swift checks its tree's YAML part by part while the parts
before upload (:class:`~tripleo_flow.core.plan.validation.YamlCheck`), and a bad
file still fails it with the error of a whole-tree check, leaving no container."""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_plans import make_client
from tests.plan_trees import basic_tree, write_tree
from tests.tht import fetch_tree_dir
from tripleo_flow import config, exceptions
from tripleo_flow.actions.context import ActionContext
from tripleo_flow.actions.plan import CreatePlan
from tripleo_flow.core.deploy.progress import PlanProgress
from tripleo_flow.core.plan import validation
from tripleo_flow.plans import sources
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow.plans.swift import SwiftStore

pytestmark = pytest.mark.functional


def _tree(count: int = 200) -> dict[str, str]:
    tree = basic_tree()
    for i in range(count):
        tree[f"environments/gen/env-{i:03d}.yaml"] = (
            f"parameter_defaults:\n  Gen{i}: {'x' * (100 + 37 * i)}\n")
    return tree


def _wait_for_objects(store: SwiftStore, container: str) -> bool:
    """Whether ``container`` lists objects within a minute."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if store.container_exists(container) and store.list_objects(container):
            return True
        time.sleep(0.1)
    return False


def test_parts_are_in_swift_before_the_check_ends(swift_store: SwiftStore,
                                                   tmp_path: Path) -> None:
    tree = _tree()
    events: list[tuple[str, int, int]] = []
    uploading: list[bool] = []

    def report(progress: Any) -> None:
        assert isinstance(progress, PlanProgress)
        events.append((progress.stage, progress.done, progress.total))
        if progress.stage == "check" and progress.done == progress.total:
            # the last file is checked; the check has not returned yet
            uploading.append(_wait_for_objects(swift_store, "oc"))

    context = ActionContext(store=swift_store,
                            locks=PlanLocks(f"file://{tmp_path / 'locks'}", 5),
                            conf=config.load([]), reporter=report)
    CreatePlan(context).execute(plan="oc", templates=str(write_tree(tmp_path / "t", tree)))
    assert uploading == [True]
    assert set(swift_store.list_objects("oc")) >= set(tree)
    stages = [stage for stage, _, _ in events]
    assert stages == sorted(stages) and "upload" in stages, events  # check, then upload
    assert events[-1][0] == "upload" and events[-1][1] == events[-1][2]


def test_a_refused_part_stops_the_upload(swift_store: SwiftStore) -> None:
    objects = {f"obj-{i:03d}": b"x" * (10 + i) for i in range(80)}
    swift_store.create_container("c")
    parts: list[Mapping[str, bytes]] = []

    def check(part: Mapping[str, bytes]) -> None:
        parts.append(part)
        if len(parts) == 3:
            assert _wait_for_objects(swift_store, "c")  # the first parts upload meanwhile
            raise exceptions.InvalidTemplate(sorted(part)[0], "refused")

    with pytest.raises(exceptions.InvalidTemplate, match="refused"):
        swift_store.put_objects("c", objects, check=check)
    assert len(parts) == 3
    allowed = {name for part in parts[:2] for name in part}
    stored = set(swift_store.list_objects("c"))
    assert stored and stored <= allowed  # no object of the refused part or after it


@pytest.mark.parametrize("size", ["small", "tht"])
def test_a_bad_file_leaves_no_container_and_the_same_error(
        swift_store: SwiftStore, tmp_path: Path, size: str) -> None:
    root = tmp_path / "t"
    if size == "tht":
        shutil.copytree(fetch_tree_dir("18.0.0"), root)
    else:
        write_tree(root, _tree())
    files = sources.read_templates(str(root), max_size=1 << 30, max_members=100000)
    checked = sorted(p for p in files if p.endswith((".yaml", ".yml"))
                     and not validation.is_j2(p))
    for bad in checked[-3], checked[-1]:  # near the end; the first of them is named
        (root / bad).write_text("parameter_defaults: [unclosed\n")
        files[bad] = (root / bad).read_bytes()
    with pytest.raises(exceptions.InvalidTemplate) as expected:
        validation.check_yaml_files(files)
    assert repr(checked[-3]) in str(expected.value)
    client = make_client(tmp_path, swift_store)
    try:
        with pytest.raises(exceptions.InvalidTemplate) as failed:
            client.plans.create("oc", root)
    finally:
        client.close()
    assert str(failed.value) == str(expected.value)
    assert swift_store.list_containers() == []
