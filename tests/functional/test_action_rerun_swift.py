"""The plan actions run twice, and reverted after a second run
(``tests/unit/actions/test_action_rerun.py``), on a real Swift: the same tests, with
the action context on the test Swift's plan store instead of the local one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.actions.test_action_rerun import (  # noqa: F401  (collected here too)
    _context,
    test_a_revert_after_a_second_run_restores_the_state_before_the_first,
    test_a_second_run_changes_nothing_more,
)
from tripleo_flow.actions.context import ActionContext
from tripleo_flow.plans.swift import SwiftStore


@pytest.fixture
def any_context(tmp_path: Path, swift_store: SwiftStore) -> ActionContext:
    """On the test Swift's plan store."""
    return _context(tmp_path, swift_store)
