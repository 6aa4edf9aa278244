"""common.jsonvalues: strict checks on the way in, an encoding that never fails on the way out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.common import jsonvalues


def nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("value, words", [
    ({"a": "\ud800"}, "lone UTF-16 surrogate"),
    ({"\udfff": 1}, "lone UTF-16 surrogate"),
    ([float("nan")], "not a JSON number"),
    ({"a": float("-inf")}, "not a JSON number"),
    (nested(11), "deeper than 10 levels"),
    (list(range(20)), "more than 15 values"),
])
def test_check_value_refuses(value: Any, words: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=words.replace("(", r"\(")):
        jsonvalues.check_value(value, max_depth=10, max_nodes=15)


@pytest.mark.parametrize("value", [
    nested(10), list(range(9)), {"emoji": "\U0001F600", "n": 1.5, "b": None}, "",
])
def test_check_value_accepts(value: Any) -> None:
    jsonvalues.check_value(value, max_depth=10, max_nodes=15)


@pytest.mark.parametrize("text, words", [
    ('{"a": NaN}', "NaN is not a JSON number"),
    ('[Infinity]', "Infinity is not a JSON number"),
    ('{"a": "\\ud800"}', "lone UTF-16 surrogate"),
    ("[" * 5000 + "]" * 5000, "deeper than 100 levels"),
    ("{", "not valid JSON"),
])
def test_loads_refuses(text: str, words: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=words):
        jsonvalues.loads(text)


@pytest.mark.parametrize("value, expected", [
    ({"a": 1}, {"a": 1}),
    ({"a": float("nan"), "b": [float("inf")]}, {"a": None, "b": [None]}),
    ({"x\ud800": "y\udc00z"}, {"x\ufffd": "y\ufffdz"}),
    ({"pair": "\ud83d\ude00"}, {"pair": "\U0001F600"}),
    ({"set": {1}}, {"set": "{1}"}),
])
def test_dumps_always_writes_strict_json(value: Any, expected: Any) -> None:
    text = jsonvalues.dumps(value).decode("utf-8")
    assert json.loads(text, parse_constant=lambda c: pytest.fail(c)) == expected


def test_dumps_cuts_what_nests_too_deep() -> None:
    text = jsonvalues.dumps({"deep": nested(5000)}, max_depth=20).decode()
    assert "nested deeper than" in text
    assert text.count("[") <= 20 + jsonvalues.ANSWER_DEPTH_SLACK
