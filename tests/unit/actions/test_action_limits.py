"""The ``[limits]`` options reach the actions that enforce them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tripleo_flow import config, exceptions
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.actions.plan import CreatePlan
from tripleo_flow.actions.templates import ProcessTemplates
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow.plans.plan import PlanRepository


def _context(tmp_path: Path, conf: Any = None) -> ActionContext:
    return ActionContext(store=LocalStore(tmp_path / "plans"),
                         locks=PlanLocks(f"file://{tmp_path / 'locks'}", 5),
                         conf=conf if conf is not None else config.load([]))


def test_limit_of_a_configuration_that_sets_none_is_the_option_default(tmp_path: Path
                                                                       ) -> None:
    assert _context(tmp_path).limit("render_max_size") == 16 << 20
    assert _context(tmp_path).limit("plan_history_max") == 100


def test_configured_render_limit_refuses_what_the_default_allows(tmp_path: Path) -> None:
    conf = config.load([])
    conf.set_override("render_max_size", 1000, group="limits")
    context = _context(tmp_path, conf)
    store = context.store
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "big.j2.yaml").write_text("x: {{ 'a' * 5000 }}\n")
    (tree / "plan-environment.yaml").write_text("name: p\n")
    (tree / "roles_data.yaml").write_text("- name: Controller\n")
    CreatePlan(context).execute(plan="p", templates=str(tree))
    before = PlanRepository(store).names("p")
    action = ProcessTemplates(context)
    with pytest.raises(exceptions.InvalidTemplate, match="big.j2.yaml"):
        action.execute(plan="p")
    assert PlanRepository(store).names("p") == before

    unlimited = ProcessTemplates(_context(tmp_path))
    unlimited.execute(plan="p")
    assert "big.yaml" in PlanRepository(store).names("p")
