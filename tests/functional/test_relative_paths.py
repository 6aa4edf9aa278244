"""A relative path given to a plan operation or a workflow (``--templates tht``) is
stored absolute in the execution, so that ``execution resume`` from another directory
reads the same files (issue 29)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures_plans import make_client
from tests.plan_trees import basic_tree, write_tree
from tripleo_flow.client import Client
from tripleo_flow.plans.local import LocalStore


@pytest.fixture
def local_client(tmp_path: Path) -> Iterator[Client]:
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    yield client
    client.close()


def test_a_relative_templates_path_is_stored_absolute(
        local_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path / "work" / "tht", basic_tree())
    monkeypatch.chdir(tmp_path / "work")
    local_client.plans.create("rel", "tht")
    local_client.plans.update("rel", "./tht/../tht")
    monkeypatch.chdir(tmp_path)  # elsewhere: the stored paths still name the tree
    runs = [e for e in local_client.executions.list() if "templates" in e.input]
    assert len(runs) == 2
    for run in runs:
        stored = run.input["templates"]
        assert os.path.isabs(stored), run.input
        assert Path(stored).resolve() == (tmp_path / "work" / "tht").resolve()


def test_a_workflow_run_stores_absolute_paths_and_leaves_other_inputs(
        local_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path / "tht", basic_tree())
    monkeypatch.chdir(tmp_path)
    inputs = {"plan": "wfrel", "templates": "tht"}
    try:
        local_client.executions.create("tripleo.plan.create_deployment_plan", inputs)
    except Exception:  # noqa: BLE001 - only what was stored matters here
        pass
    [run] = local_client.executions.list("create_deployment_plan")
    assert run.input["templates"] == str(tmp_path / "tht")
    assert run.input["plan"] == "wfrel"
