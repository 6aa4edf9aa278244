"""YAQL and Jinja expression evaluation (table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.engine.lang import expressions

DATA = {"n": 2, "names": ["a", "b"], "plan": "overcloud", "env": {"k": "v"}}


def _tasks(name: str | None) -> dict[str, Any]:
    return {"result": f"result-of-{name}", "state": "SUCCESS"}


@pytest.mark.parametrize("value, expected", [
    ("<% $.n + 1 %>", 3),
    ("<% $.names.len() %>", 2),
    ("<% $.names.select($.toUpper()) %>", ["A", "B"]),
    ("plan <% $.plan %> has <% $.n %>", "plan overcloud has 2"),
    ("list: <% $.names %>", 'list: ["a", "b"]'),
    ("{{ _.n * 3 }}", 6),
    ("{{ n }}-{{ _.plan }}", "2-overcloud"),
    ("{% if n > 1 %}many{% endif %}", "many"),
    ("<% task('x').result %>", "result-of-x"),
    ("{{ task('y').result }}", "result-of-y"),
    ("<% execution().id %>", "exec-1"),
    ("<% json_dump($.env) %>", '{"k": "v"}'),
    ("<% json_parse('[1]') %>", [1]),
    ({"k": ["<% $.n %>", "x"]}, {"k": [2, "x"]}),
    ("no expression", "no expression"),
    ("<% task(x).result %>", "result-of-x"),
    ("<% json_pp({a => [1]}) %>", '{\n    "a": [\n        1\n    ]\n}'),
    ("{{ json_pp({'a': 1}) }}", '{\n    "a": 1\n}'),
    ("<% len(uuid()) %>", 36),
    ("{{ uuid() | length }}", 36),
    ("<% env() %>", {}),
    ("<% global(x) %>", None),
    ("<% tasks() %>", []),
    ("<% executions().select($.id) %>", ["exec-1"]),
    (7, 7),
])
def test_evaluate(value: Any, expected: Any) -> None:
    evaluator = expressions.Evaluator(DATA, _tasks, {"id": "exec-1"})
    assert evaluator.evaluate(value) == expected


@pytest.mark.parametrize("value, message", [
    ("<% $.missing %>", "no value 'missing'"),
    ("{{ _.missing }}", "undefined"),
    ("<% $.n + %>", "Parse error"),
    ("{{ n + }}", "unexpected"),
])
def test_evaluation_errors(value: str, message: str) -> None:
    with pytest.raises(expressions.ExpressionError, match=message):
        expressions.Evaluator(DATA).evaluate(value)


@pytest.mark.parametrize("value, problems", [
    ("<% $.a %>", 0),
    (["<% $.a + %>", "{{ ok }}", "{% if %}"], 2),
    ({"k": "{{ a ]] }}"}, 1),
    (None, 0),
])
def test_check(value: Any, problems: int) -> None:
    assert len(expressions.check(value)) == problems


@pytest.mark.parametrize("value, names, dynamic", [
    ("<% task('a').result %> {{ task(\"b\") }}", {"a", "b"}, False),
    ("<% task().result %>", set(), False),
    ("<% task($.x).result %>", set(), True),
    ("<% task(get_parameters).result %>", {"get_parameters"}, False),  # YAQL: a string
    ("<% task( get_parameters ) %> <% task(null) %>", {"get_parameters"}, False),
    ("{{ task(get_parameters) }}", set(), True),  # Jinja: a variable
    ("<% subtask(x) %> <% tasks() %>", set(), False),
])
def test_task_references(value: str, names: set[str], dynamic: bool) -> None:
    assert expressions.task_references(value) == (names, dynamic)


#: Expressions that would build gigabytes from a few characters (a workbook may come
#: from anyone who can write to the HTTP API), and the limit each one meets.
BOMBS = [
    ("{{ 'a' * 3000000000 }}", "render_max_size"),
    ("x {{ 'ab' * 1500000000 }}", "render_max_size"),
    ("{{ [1, 2] * 3000000000 }}", "render_max_size"),
    ("{{ 'a' ~ ('b' * 3000000000) }}", "render_max_size"),
    ("{{ 'x'.center(3000000000) }}", "render_max_size"),
    ("{{ '%3000000000s' % 'a' }}", "render_max_size"),
    ("<% 'a' * 3000000000 %>", "render_max_size"),
    ("<% range(0, 3000000000) %>", "expression_max_items"),
    ("<% len(range(0, 3000000000).toList()) %>", "expression_max_items"),
]


@pytest.mark.parametrize("value, limit", BOMBS)
def test_expressions_cannot_build_huge_values(value: str, limit: str) -> None:
    assert expressions.check(value) == []  # checking never evaluates (nor folds) it
    with pytest.raises(expressions.ExpressionError, match=limit):
        expressions.Evaluator(DATA).evaluate(value)


@pytest.mark.parametrize("value", [
    "{{ 'a' * 2000 }}", "<% 'a' * 2000 %>", "<% range(0, 2000).sum() %>", "{{ names * 800 }}",
])
def test_limits_are_the_configured_ones(value: str) -> None:
    small = expressions.Limits(max_size=1000, max_items=1000)
    assert expressions.Evaluator(DATA).evaluate(value)  # fine within the defaults
    with pytest.raises(expressions.ExpressionError, match=r"\[limits\]"):
        expressions.Evaluator(DATA, limits=small).evaluate(value)


#: Expressions that build nothing large but would run for hours.
SLOW = [
    "<% range(0, 100000).select(range(0, 100000).len()).sum() %>",
    "{{ range(100000)|map('string')|list|length }}x" * 100,
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
]


@pytest.mark.parametrize("value", SLOW)
def test_expressions_stop_at_their_time_limit(value: str) -> None:
    quick = expressions.Limits(timeout=0.2)
    with pytest.raises(expressions.ExpressionError,
                       match=r"over 0\.2 s \(\[limits\] expression_timeout\)"):
        expressions.Evaluator(DATA, limits=quick).evaluate(value)
