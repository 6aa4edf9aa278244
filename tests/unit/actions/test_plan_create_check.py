"""Plan create checks the YAML of its tree part by part while the parts before upload.

The store here is the local store writing in parts of a few objects, each part
once the create's ``check`` passed it (as the Swift store does with its parallel
chunks), and recording what it wrote; the create's progress reports are
recorded in the same list, so the order of checks and writes shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import config, exceptions
from tripleo_flow.actions.context import ActionContext
from tripleo_flow.actions.plan import CreatePlan
from tripleo_flow.core.deploy.progress import CountListener, PlanProgress
from tripleo_flow.core.plan import validation
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow.plans.store import PartCheck

PART = 10


class PartsStore(LocalStore):
    """The local store, writing ``put_objects`` in parts of :data:`PART` objects."""

    def __init__(self, root: Path, events: list[Any]) -> None:
        super().__init__(root)
        self.events = events

    def put_objects(self, container: str, objects: Mapping[str, bytes],
                    progress: CountListener | None = None,
                    check: PartCheck | None = None) -> None:
        names = list(objects)
        for start in range(0, len(names), PART):
            part = {name: objects[name] for name in names[start:start + PART]}
            if check is not None:
                check(part)
            super().put_objects(container, part)
            self.events.append(("written", sorted(part)))


def _tree(count: int = 60) -> dict[str, str]:
    tree = basic_tree()
    for i in range(count):
        tree[f"environments/gen/env-{i:03d}.yaml"] = f"parameter_defaults:\n  Gen{i}: {i}\n"
    return tree


def _create(tmp_path: Path, tree: dict[str, str], events: list[Any]) -> PartsStore:
    """Create plan ``oc`` of ``tree``, recording the writes and reports in ``events``."""
    store = PartsStore(tmp_path / "plans", events)

    def report(progress: Any) -> None:
        assert isinstance(progress, PlanProgress)
        events.append((progress.stage, progress.done, progress.total))

    context = ActionContext(store=store, locks=PlanLocks(f"file://{tmp_path / 'locks'}", 5),
                            conf=config.load([]), reporter=report)
    CreatePlan(context).execute(plan="oc", templates=str(write_tree(tmp_path / "t", tree)))
    return store


def _written(events: list[Any]) -> list[list[str]]:
    return [event[1] for event in events if event[0] == "written"]


def test_parts_upload_while_later_parts_are_checked(tmp_path: Path) -> None:
    tree = _tree()
    events: list[Any] = []
    store = _create(tmp_path, tree, events)
    written = [name for names in _written(events) for name in names]
    assert len(written) == len(set(written)) and set(tree) <= set(written)  # each once
    assert set(store.list_objects("oc")) >= set(tree)
    last_check = max(i for i, event in enumerate(events) if event[0] == "check")
    first_write = min(i for i, event in enumerate(events) if event[0] == "written")
    assert first_write < last_check, events  # the first part went before the check ended
    checks = [event for event in events if event[0] == "check"]
    assert checks[-1][1] == checks[-1][2] == validation.check_yaml_files(
        {p: t.encode() for p, t in tree.items()})


def test_a_bad_file_stops_the_upload_and_the_container_goes(tmp_path: Path) -> None:
    tree = _tree()
    bad = "environments/gen/env-055.yaml"
    tree[bad] = "parameter_defaults: [unclosed\n"
    tree["environments/gen/env-057.yaml"] = "also: [bad\n"  # later: not the one named
    with pytest.raises(exceptions.InvalidTemplate) as expected:
        validation.check_yaml_files({p: t.encode() for p, t in tree.items()})
    events: list[Any] = []
    with pytest.raises(exceptions.InvalidTemplate) as failed:
        _create(tmp_path, tree, events)
    assert str(failed.value) == str(expected.value) and bad in str(failed.value)
    assert PartsStore(tmp_path / "plans", []).list_containers() == []
    writes = _written(events)
    assert writes, events  # the parts before the bad one went up (and were removed)
    assert not any(bad in names for names in writes)
    assert sum(map(len, writes)) < len(tree)  # nothing after the bad part


def test_bad_data_files_write_nothing(tmp_path: Path) -> None:
    tree = _tree()
    tree["roles_data.yaml"] = "- name: Controller\n  CountDefault: -1\n"
    events: list[Any] = []
    with pytest.raises(exceptions.InvalidInput):
        _create(tmp_path, tree, events)
    assert events == []
    assert PartsStore(tmp_path / "plans", []).list_containers() == []


def test_a_bad_yaml_file_comes_before_bad_data_files(tmp_path: Path) -> None:
    tree = _tree()
    tree["roles_data.yaml"] = "- name: Controller\n  CountDefault: -1\n"
    tree["environments/gen/env-050.yaml"] = "x: [\n"
    with pytest.raises(exceptions.InvalidTemplate, match="env-050.yaml"):
        _create(tmp_path, tree, [])


def test_the_error_names_the_first_bad_file_of_the_tree_not_of_the_part() -> None:
    files = {"a.yaml": b"a: 1\n", "b.yaml": b"b: [\n", "c.yaml": b"c: 1\n", "y.yaml": b"y: [\n"}
    seen: list[tuple[int, int]] = []
    check = validation.YamlCheck(files, lambda done, total: seen.append((done, total)))
    check({"a.yaml": files["a.yaml"], "c.yaml": files["c.yaml"]})
    assert seen == [(1, 4), (2, 4)]
    with pytest.raises(exceptions.InvalidTemplate, match="'b.yaml'"):
        check({"y.yaml": files["y.yaml"]})
