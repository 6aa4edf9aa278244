"""Simple YAQL expressions computed directly (:mod:`tripleo_flow.engine.lang.yaql_fast`) give
exactly what YAQL gives, or leave the expression to YAQL (table-driven, YAQL itself is
the oracle)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tripleo_flow.engine.lang import expressions, yaql_fast

#: Contexts the expressions below are evaluated over (every kind of value YAQL treats
#: differently: numbers, bools, null, text, containers, a missing key).
DATA: list[Any] = [
    {"i": 3, "n": 1000, "f": 2.5, "s": "abc", "t": "abd", "b": True, "z": None,
     "d": {"x": "abc", "y": 0, "d": {"e": 1}}, "l": [1, 2], "e": {}, "o": [], "empty": ""},
    {"i": True, "n": 1.0, "f": -0.0, "s": "", "t": "", "b": False, "z": 0,
     "d": {"x": None}, "l": {"not": "a list"}, "e": [], "o": {}, "empty": 0},
    {"i": "3", "n": None, "f": float("inf"), "s": 7, "t": "7", "b": 0, "z": "",
     "d": [1], "l": "text", "e": None, "o": 0.0, "empty": False},
    {"i": 10**30, "n": -(10**30), "f": 1e308, "s": "é", "t": "e", "b": 1, "z": False},
    {},
]

EXPRESSIONS = [
    "$", "$.i", "$.missing", "$.d.x", "$.d.d.e", "$.d.y", "$.l", "$.e",
    "$.i + 1", "$.i - 1", "$.f + $.i", "$.i + $.n", "$.s + $.t", "-$.i", "-$.s",
    "$.i < $.n", "$.i <= 3", "$.f > $.i", "$.n >= $.i", "$.s < $.t", "$.z < 1", "1 > $.z",
    "$.i = 3", "$.i != 3", "$.s = 'abc'", "$.b = true", "$.z = null", "$.d.x = $.s",
    "$.l = $.l", "$.d = $.d",
    "not $.b", "not $.e", "not $.empty", "$.b and $.i", "$.b or $.i", "$.z or $.s",
    "$.z and $.missing", "$.b and $.l", "$.e or $.i", "($.i + 1) - 2",
    "$.i + 1 < $.n and not $.b", "1 + 2", "'text'", "null", "true", "1.5 - $.f",
]


def _by_yaql(text: str, data: Any) -> tuple[str, Any]:
    """What YAQL itself gives (its dispatch, as the evaluator ran before): the value
    with its type, or the kind of error."""
    expression = expressions._parse_yaql(text)
    context = expressions._yaql_root().create_child_context()
    context["$__evaluator"] = expressions.Evaluator(data)
    try:
        value = expression.evaluate(data=data, context=context)
    except Exception as exc:
        return "error", type(exc).__name__
    return type(value).__name__, value


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_a_simple_expression_gives_what_yaql_gives_or_leaves_it_to_yaql(text: str) -> None:
    fast = yaql_fast.compile(expressions._parse_yaql(text))
    assert fast is not None, text
    for data in DATA:
        got = fast(data, expressions.DEFAULT_LIMITS.max_size)
        if got is not yaql_fast.UNSURE:
            assert (type(got).__name__, got) == _by_yaql(text, data), (text, data)


def test_the_simple_kinds_are_computed_directly() -> None:
    """Not everything is left to YAQL: each operator is computed over plain values."""
    data = DATA[0]
    computed = {text for text in EXPRESSIONS
                if yaql_fast.compile(expressions._parse_yaql(text))(
                    data, expressions.DEFAULT_LIMITS.max_size) is not yaql_fast.UNSURE}
    assert computed >= {"$.i", "$.d.x", "$.d.d.e", "$.i + 1", "$.i - 1", "-$.i", "$.i < $.n",
                        "$.f > $.i", "$.i = 3", "$.i != 3", "$.s = 'abc'", "not $.b",
                        "$.b and $.i", "$.z or $.s", "($.i + 1) - 2", "'text'", "null"}
    assert not computed & {"$", "$.missing", "$.l", "$.d", "$.s + $.t", "$.s < $.t",
                           "$.b and $.l", "$.z < 1"}


@pytest.mark.parametrize("text", [
    "$.l[0]", "len($.l)", "$.l.len()", "$x", "task().result", "$.i * 2", "$.s in $.l",
    "[1, 2]", "{a => 1}", "$.d.get(x)", "range(3)",
])
def test_other_expressions_are_left_to_yaql(text: str) -> None:
    assert yaql_fast.compile(expressions._parse_yaql(text)) is None


def test_a_value_over_the_memory_quota_is_left_to_yaql() -> None:
    """YAQL checks every function's result against its memory quota
    (``[limits] render_max_size``): a large text read is its error, not a value."""
    limits = expressions.Limits(max_size=1000)
    data = {"big": "x" * 5000, "small": "x"}
    evaluator = expressions.Evaluator(data, limits=limits)
    assert evaluator.evaluate("<% $.small %>") == "x"
    with pytest.raises(expressions.ExpressionError, match="render_max_size"):
        evaluator.evaluate("<% $.big %>")
    with pytest.raises(expressions.ExpressionError, match="render_max_size"):
        evaluator.evaluate("<% $.big = $.small %>")


def test_the_evaluator_gives_the_same_results_with_or_without_the_shortcut() -> None:
    for text, data in itertools.product(EXPRESSIONS, DATA):
        kind, expected = _by_yaql(text, data)
        try:
            got: Any = expressions.Evaluator(data).evaluate(f"<% {text} %>")
        except expressions.ExpressionError:
            assert kind == "error", (text, data)
            continue
        assert kind != "error", (text, data, got)
        assert got == expected and type(got).__name__ == kind, (text, data)


def test_a_simple_expression_runs_none_of_yaqls_function_calls() -> None:
    """Every function YAQL calls checks the expression's deadline first; a simple
    expression computed directly calls none, so it is done even with a deadline that
    has passed, while one that YAQL evaluates stops at its first call."""
    spent = expressions.Limits(timeout=1e-9)
    evaluator = expressions.Evaluator({"i": 3, "n": 10, "l": [1]}, limits=spent)
    assert evaluator.evaluate("<% $.i + 1 < $.n %>") is True
    assert evaluator.evaluate("<% $.i %>") == 3
    with pytest.raises(expressions.ExpressionError, match="expression_timeout"):
        evaluator.evaluate("<% $.l.len() %>")


#: Containers read whole: every kind YAQL copies differently (tuples, sets, keys that
#: are not text, nesting), as the data and inside it.
CONTAINERS: list[Any] = [
    *DATA,
    {"n": {"a": [1, {"b": (1, 2)}], "c": None}, "k": {1: "int key"}, "s": {1, 2},
     "t": (1,), "x": {"y": [{"z": [None, 1.5, "z", True, -0.0]}], "w": []},
     "f": frozenset({1}), "u": {"v": {"w": {"x": {}}}}},
    {"l": [[[[]]]], "d": {"": {"": ""}}},
]
WHOLE = ["$", "$.n", "$.n.a", "$.k", "$.s", "$.t", "$.x", "$.x.y", "$.f", "$.u", "$.u.v",
         "$.l", "$.d", "$.e", "$.o", "$.d.d"]


@pytest.mark.parametrize("text", WHOLE)
def test_a_container_read_whole_is_yaqls_copy_of_it_or_left_to_yaql(text: str) -> None:
    fast = yaql_fast.compile(expressions._parse_yaql(text),
                             expressions.DEFAULT_LIMITS.max_items)
    assert fast is not None
    for data in CONTAINERS:
        got = fast(data, expressions.DEFAULT_LIMITS.max_size)
        if got is yaql_fast.UNSURE:
            continue
        assert (type(got).__name__, got) == _by_yaql(text, data), (text, data)
        assert repr(got) == repr(_by_yaql(text, data)[1])  # lists, not tuples, all down


def test_plain_containers_read_whole_are_computed_directly_as_copies() -> None:
    data = CONTAINERS[-1] | {"x": {"y": [{"z": [None, 1.5, "z"]}]}}
    for text in ("$", "$.l", "$.d", "$.x", "$.x.y"):
        fast = yaql_fast.compile(expressions._parse_yaql(text),
                                 expressions.DEFAULT_LIMITS.max_items)
        assert fast is not None
        got = fast(data, expressions.DEFAULT_LIMITS.max_size)
        assert got is not yaql_fast.UNSURE, text
        assert got == _by_yaql(text, data)[1]
    got = expressions.Evaluator(data).evaluate("<% $.x %>")
    got["y"][0]["z"].append("mine")  # a copy: the data is left as it was
    assert data["x"] == {"y": [{"z": [None, 1.5, "z"]}]}


def test_a_container_over_the_limits_is_left_to_yaql() -> None:
    """YAQL's limits on what it walks (``[limits] expression_max_items``) and on each
    container's size (``[limits] render_max_size``) give its error, not a value."""
    data = {"many": list(range(50)), "deep": {"in": [list(range(50))]}, "few": [1, 2]}
    quota = expressions.DEFAULT_LIMITS.max_size
    for text, expected in (("$.few", [1, 2]), ("$.many", yaql_fast.UNSURE),
                           ("$.deep", yaql_fast.UNSURE)):
        fast = yaql_fast.compile(expressions._parse_yaql(text), 10)
        assert fast is not None and fast(data, quota) == expected, text
    fast = yaql_fast.compile(expressions._parse_yaql("$.many"), 100)
    assert fast is not None and fast(data, 300) is yaql_fast.UNSURE
    items = expressions.Evaluator(data, limits=expressions.Limits(max_items=10))
    assert items.evaluate("<% $.few %>") == [1, 2]
    for text in ("<% $.many %>", "<% $.deep %>"):
        with pytest.raises(expressions.ExpressionError, match="expression_max_items"):
            items.evaluate(text)
    size = expressions.Evaluator(data, limits=expressions.Limits(max_size=300))
    assert size.evaluate("<% $.few %>") == [1, 2]
    with pytest.raises(expressions.ExpressionError, match="render_max_size"):
        size.evaluate("<% $.many %>")
