"""How large an execution's input is as stored, and the refusals before its record
(``[limits] input_max_size``, and ``parameters_max_size`` for the shipped workflows'
parameter values and user environment files)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.common import value_limits
from tripleo_flow.core.plan import input_size
from tripleo_flow.engine.lang import action_workflows


@pytest.mark.parametrize("value", [
    "", "abc", "\u20ac" * 10, "\U0001f600" * 3, "x" * 1000 + "\u20ac",
    "mixed \u00e9t\u00e9 \U0001f600",
    {"a": ["x", 1, None, True, 2.5]}, {"k\u20ac": "\u00e9", "n": 10 ** 30}, [[[]]], {},
])
def test_stored_size_is_the_stored_json_or_a_little_more(value: Any) -> None:
    stored = len(json.dumps(value, separators=(",", ":")))  # ensure_ascii, as stored
    assert stored <= value_limits.stored_size(value, 1 << 30) <= 2 * stored + 8


def test_stored_size_stops_counting_past_the_limit() -> None:
    assert 100 < value_limits.stored_size(["x" * 100] * 100_000, 100) < 1_000_000  # of 10 MB


def test_the_input_and_the_environment_are_each_within_the_limit() -> None:
    value_limits.check_execution_input("w", {"a": "x" * 90}, {"e": "y" * 90}, 100)
    for inputs, env, named in (({"a": "x" * 100}, None, "The input of workflow 'w'"),
                               ({}, {"e": "\u20ac" * 20}, r"The environment \(env\)")):
        with pytest.raises(exceptions.InvalidInput, match=named) as info:
            value_limits.check_execution_input("w", inputs, env, 100)
        assert "[limits] input_max_size" in str(info.value)


@pytest.mark.parametrize(("workflow", "inputs"), [
    ("tripleo.parameters.update_parameters", {"parameters": {"P": "x" * 100}}),
    ("tripleo.deploy.deploy", {"user_environments": [{"name": "a"}, {"f": "x" * 100}]}),
    # The actions' own executions (POST /v1/action_executions) are checked the same.
    (action_workflows.execution_name("parameters.update"), {"parameters": {"P": "x" * 100}}),
    (action_workflows.execution_name("environments.add"),
     {"user_environments": [{"name": "a"}, {"f": "x" * 100}]}),
])
def test_shipped_workflows_inputs_are_within_their_actions_limit(
        workflow: str, inputs: dict[str, Any]) -> None:
    input_size.check_parameter_sizes(workflow, inputs, 1000)
    with pytest.raises(exceptions.InvalidParameter, match=r"\[limits\] parameters_max_size"):
        input_size.check_parameter_sizes(workflow, inputs, 50)
    input_size.check_parameter_sizes("mine.update_parameters", inputs, 50)
