"""YAQL's ``$`` with each value copied when read (:mod:`tripleo_flow.engine.lang.yaql_inputs`):
the same results as YAQL's own copy of the whole data (YAQL itself is the oracle), and
a value no expression reads is never walked, in an evaluator and in a ``with-items``
task's items."""

from __future__ import annotations

import sys
import textwrap
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from yaql.language import utils

from tests.engine_helpers import Host
from tripleo_flow.engine.lang import expressions, yaql_inputs

DATA: list[Any] = [
    {"s": "abc", "i": 3, "z": None, "l": [1, [2, 3], {"k": "v"}], "d": {"x": [1], "y": {}},
     "e": {}, "set": {1, 2}, "t": (1, 2), 7: "seven", "b": b"ab"},
    {"l": "text", "d": [1], "s": {"nested": {"deep": [True]}}},
    {},
]

EXPRESSIONS = [
    "$", "$.s", "$.l", "$.d", "$.d.x", "$.d.y", "$.missing", "$.l[1]", "$.l.len()",
    "$.keys()", "$.values()", "$.items()", "len($)", "$.get('s')", "$.get('nope', 5)",
    "'s' in $", "$ = $", "$.set('n', 1)", "dict($)", "$.l.select($)", "$.d.x.first()",
    "$.s.nested.deep", "$.t", "$.set", "$.b", "let(a => $.l) -> $a", "$.where($ != 3)",
    "$.d + {'w' => 1}", "str($)", "$.sum()",
]


def _evaluate(text: str, dollar: Any) -> tuple[str, Any]:
    """``text`` evaluated with ``$`` set to ``dollar``: its value with its type, or the
    kind of error."""
    expression = expressions._parse_yaql(text)
    context = expressions._yaql_root().create_child_context()
    context["$__evaluator"] = expressions.Evaluator({})
    context["$"] = dollar
    try:
        value = expression.evaluate(context=context)
    except Exception as exc:
        return "error", type(exc).__name__
    return type(value).__name__, value


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_an_expression_gives_what_yaql_gives_over_its_own_copy(text: str) -> None:
    for data in DATA:
        assert _evaluate(text, yaql_inputs.freeze(data)) == \
            _evaluate(text, utils.convert_input_data(data)), (text, data)


class Watched(Sequence[int]):
    """A list that counts how often it is walked (YAQL's copy walks it)."""

    def __init__(self, size: int) -> None:
        self.items = list(range(size))
        self.walks = 0

    def __getitem__(self, index: Any) -> Any:
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[int]:
        self.walks += 1
        return iter(self.items)


def test_a_value_the_expression_does_not_read_is_not_copied() -> None:
    big = Watched(1000)
    evaluator = expressions.Evaluator({"big": big, "small": [1, 2]})
    assert evaluator.evaluate("<% $.small.len() %>") == 2
    assert evaluator.evaluate({"a": "<% $.small.select($ + 1) %>"}) == {"a": [2, 3]}
    assert big.walks == 0
    assert evaluator.evaluate("<% $.big.len() %>") == 1000
    assert big.walks == 1  # read: copied once for that evaluation


def test_the_items_of_a_with_items_task_do_not_copy_the_rest_of_the_context(
        tmp_path: Path) -> None:
    """A 50-node import copied its node specs once per item before its first item
    started: each item's input is evaluated over the whole context plus the item."""
    host = Host(tmp_path / "data")
    path = tmp_path / "items.yaml"
    path.write_text("version: '2.0'\nname: items\n" + textwrap.dedent("""
        workflows:
          wf:
            input: [big, things]
            tasks:
              each:
                action: std.echo
                with-items: thing in <% $.things %>
                input:
                  output: <% [$.thing] %>
                publish:
                  got: <% task().result %>
            output:
              got: <% $.got %>
        """))
    host.workbooks.create(path)
    big = [{"n": n} for n in range(997)]  # a length nothing else has
    things = [{"i": i} for i in range(20)]
    copies = 0

    def count(frame: Any, event: str, _arg: Any) -> None:
        nonlocal copies
        if event == "call" and frame.f_code is utils.convert_input_data.__code__:
            value = frame.f_locals.get("obj")
            copies += isinstance(value, (list, tuple)) and len(value) == 997
    threading.setprofile(count)
    sys.setprofile(count)
    try:
        execution = host.executions.create("items.wf", {"big": big, "things": things})
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        host._session.close_workflows()
    assert execution.output == {"got": [[thing] for thing in things]}
    assert copies == 0
