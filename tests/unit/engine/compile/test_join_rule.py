"""Mistral's join rule (tripleo_flow.engine.compile.join_rule), table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.engine.compile import join_rule

# a and b lead to the join j; c leads to b; s (a start task) leads to c.
INBOUND = {"s": [], "a": [], "c": ["s"], "b": ["c"], "j": ["a", "b"]}


@pytest.mark.parametrize("rule, fired, ready, expected", [
    # join: all
    ("all", {"a": ["j"], "b": ["j"]}, set(), "RUNNING"),
    ("all", {"a": ["j"]}, {"b"}, "WAITING"),            # b is about to run
    ("all", {"a": ["j"], "b": None}, set(), "WAITING"),  # b runs
    ("all", {"a": ["j"], "b": []}, set(), "ERROR"),      # b ended without firing j
    ("all", {"a": ["j"], "s": ["c"]}, set(), "WAITING"),  # c may still lead to b
    ("all", {"a": ["j"], "s": [], "c": None}, set(), "WAITING"),
    ("all", {"a": ["j"], "s": []}, set(), "ERROR"),       # no route to b any more
    # join: 1 / one
    ("one", {"a": ["j"]}, {"b"}, "RUNNING"),
    (1, {"a": [], "b": None}, set(), "WAITING"),
    (1, {"a": [], "b": []}, set(), "ERROR"),
    # join: 2 of two
    (2, {"a": ["j"], "b": None}, set(), "WAITING"),
    (2, {"a": [], "b": None}, set(), "ERROR"),
])
def test_join_state(rule: Any, fired: dict[str, Any], ready: set[str], expected: str
                    ) -> None:
    assert join_rule.Runs(fired, ready, INBOUND).state("j", rule) == expected


def test_blocking_names_the_tasks_that_did_not_fire_it() -> None:
    runs = join_rule.Runs({"a": ["j"], "b": []}, set(), INBOUND)
    assert runs.blocking("j") == ["b"]
