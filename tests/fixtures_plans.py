"""Fixtures for plan tests: a Python API client over each plan store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.plan_trees import basic_tree, write_tree
from tripleo_flow import config
from tripleo_flow.client import Client
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow.plans.store import PlanStore


def make_client(tmp_path: Path, store: PlanStore, lock_url: str | None = None) -> Client:
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("data_dir", str(tmp_path / "data"))
    locks = PlanLocks(lock_url or f"file://{tmp_path / 'locks'}", timeout=30)
    return Client(conf, store=store, locks=locks)


@pytest.fixture
def client(tmp_path: Path, plan_store: PlanStore) -> Iterator[Client]:
    c = make_client(tmp_path, plan_store)
    yield c
    c.close()


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    """A small valid template tree in a directory."""
    return write_tree(tmp_path / "templates", basic_tree())


def snapshot(store: PlanStore, container: str) -> dict[str, bytes]:
    """Every object of a container, for 'left exactly as it was' checks."""
    return {n: store.get_object(container, n) for n in store.list_objects(container)}

