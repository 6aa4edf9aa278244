"""YAQL's parser from the shipped LR tables (:mod:`tripleo_flow.engine.lang.yaql_tables`):
the file holds the tables PLY computes for the installed yaql, the expressions'
engine parses with them, and tables of another grammar, or a file that does not
read as tables, are not used (PLY computes them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from yaql.language import factory

from tripleo_flow.engine.lang import expressions, yaql_tables

#: Expressions using every kind of rule: operators and their precedence, calls with
#: positional and keyword arguments, lambdas, indexers, lists and maps, literals.
EXPRESSIONS = [
    "$.a + 2 * $.b[1] - 3", "-$.a", "not $.c or $.a = 1 and $.b[0] > 2",
    "$.b.where($ > 1).select($ * 2)", "let(x => 3) -> $x + $.a",
    "{a => 1, b => [1, 2, 3]}", "$.s in list('x', 'y')", "'a' + str($.a)",
    "$.b.len() != 3", "$.missing", "$.b[1:]", "range(3).sum() mod 2", "null = $.n",
    "true and false", "1.5 * 2", "$.a < 2 and $.a >= 1", "$.d.k", "$.b.select([$, $ * $])",
]
DATA = {"a": 1, "b": [1, 2, 3], "c": False, "s": "x", "n": None, "d": {"k": "v"}}


def results(engine: factory.YaqlEngine) -> list[str]:
    """What each of :data:`EXPRESSIONS` gives over :data:`DATA` (or its error)."""
    context = expressions._yaql_root()
    found = []
    for text in EXPRESSIONS:
        try:
            value = engine(text).evaluate(data=DATA, context=context.create_child_context())
            found.append(repr(value))
        except Exception as error:  # the same error either way
            found.append(f"{type(error).__name__}: {error}")
    return found


def made_from_file(engine: factory.YaqlEngine) -> bool:
    return all(isinstance(p, yaql_tables.Production) for p in engine.parser.productions)


def test_the_shipped_tables_are_those_ply_computes_for_the_installed_yaql() -> None:
    # Stale after a yaql release that changed the grammar: run
    # python -m tripleo_flow.engine.lang.yaql_tables
    assert json.loads(yaql_tables.TABLES.read_text()) == json.loads(
        json.dumps(yaql_tables.computed(factory.YaqlFactory())))


def test_the_expressions_engine_parses_with_the_shipped_tables() -> None:
    engine = expressions._yaql_engine()
    assert made_from_file(engine)
    assert results(engine) == results(factory.YaqlFactory().create())


def test_tables_of_another_grammar_are_computed_again() -> None:
    # Delegates add a rule to yaql's grammar: the shipped tables are not its.
    yaql_factory = factory.YaqlFactory(allow_delegates=True)
    engine = yaql_tables.create(yaql_factory)
    assert not made_from_file(engine)
    assert results(engine) == results(factory.YaqlFactory(allow_delegates=True).create())


@pytest.mark.parametrize("text", [
    "", "not json", "[]", '{"grammar": null}',
    '{"grammar": "GRAMMAR", "productions": [[1]], "action": [], "goto": []}',
    '{"grammar": "GRAMMAR", "productions": [], "action": [[0, 1]], "goto": []}',
])
def test_a_file_that_does_not_read_as_tables_is_not_used(tmp_path: Path, text: str) -> None:
    yaql_factory = factory.YaqlFactory()
    grammar = yaql_tables.digest(yaql_tables._grammar(yaql_factory)[1])[0]
    path = tmp_path / "tables.json"
    path.write_text(text.replace("GRAMMAR", grammar))
    engine = yaql_tables.create(yaql_factory, path=path)
    assert not made_from_file(engine)
    assert results(engine) == results(factory.YaqlFactory().create())
