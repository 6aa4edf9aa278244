"""YAQL and Jinja expression evaluation (table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.flows import expressions

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
])
def test_task_references(value: str, names: set[str], dynamic: bool) -> None:
    assert expressions.task_references(value) == (names, dynamic)
