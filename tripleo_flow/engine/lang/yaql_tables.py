"""YAQL's parser made from LR tables that ship with tripleo-flow.

yaql makes its parser with PLY whenever a process creates an engine, and PLY
computes the LALR tables of YAQL's grammar each time: about 0.07 s of CPU in every
process that checks or evaluates an expression (every command that runs a
workflow).  The tables depend on the grammar alone, so ``yaql_tables.json`` holds
them, with a digest of the grammar they were computed from: PLY's signature of it
(start symbol, precedence, tokens and every rule), and PLY's version.

:func:`create` makes an engine as :meth:`yaql.language.factory.YaqlFactory.create`
does, with the shipped tables when the installed yaql's grammar has that digest;
otherwise (another yaql release, a file that does not read as tables) PLY
computes them as yaql would.  The file is package data, as trusted as this module;
``python -m tripleo_flow.engine.lang.yaql_tables`` writes it again, and
``tests/unit/engine/test_yaql_tables.py`` checks that it holds the tables PLY
computes for the installed yaql.
"""

from __future__ import annotations

import collections.abc  # noqa: F401  (yaql 3.2 uses collections.abc without importing it)
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from yaql import _ply
from yaql._ply import lex, yacc
from yaql.language import factory

#: The shipped tables (see the module).
TABLES = Path(__file__).with_name("yaql_tables.json")


class Production:
    """A rule of the grammar as PLY's parser uses it: its name, how many symbols
    it reduces, and the function that builds its value."""

    def __init__(self, name: str, length: int, func: str | None) -> None:
        self.name = name
        self.len = length
        self.func = func
        self.callable: Any = None
        self.str = name  # what PLY's parser prints of a rule when it debugs

    def bind(self, pdict: dict[str, Any]) -> None:
        if self.func:
            self.callable = pdict[self.func]


class ShippedTable:
    """What :class:`yacc.LRParser` reads of PLY's ``LRTable``, from saved tables."""

    def __init__(self, productions: list[Production], action: dict[int, dict[str, int]],
                 goto: dict[int, dict[str, int]]) -> None:
        self.lr_productions = productions
        self.lr_action = action
        self.lr_goto = goto


def digest(module: Any) -> tuple[str, dict[str, Any]]:
    """The digest of the grammar of yaql's parser ``module`` (with PLY's version), and
    the parser's functions by name (what PLY binds the rules to)."""
    pdict = {name: getattr(module, name) for name in dir(module)}
    reflect = yacc.ParserReflect(pdict, log=yacc.NullLogger())
    reflect.get_all()
    signature = f"{_ply.__version__}\n{reflect.signature()}"
    return hashlib.sha256(signature.encode()).hexdigest(), pdict


def read(path: Path, grammar: str) -> ShippedTable | None:
    """The tables saved at ``path`` if they are those of ``grammar`` (a digest); None
    when they are another grammar's, or the file is missing or not such tables."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved["grammar"] != grammar:
            return None
        productions = [Production(str(name), int(length), func and str(func))
                       for name, length, func in saved["productions"]]
        action = {int(state): {str(t): int(n) for t, n in row.items()}
                  for state, row in saved["action"]}
        goto = {int(state): {str(t): int(n) for t, n in row.items()}
                for state, row in saved["goto"]}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return ShippedTable(productions, action, goto)


def parser(module: Any, path: Path = TABLES) -> Any:
    """PLY's parser of yaql's parser ``module``, from the tables at ``path`` when they
    are its grammar's, else from the tables PLY computes."""
    grammar, pdict = digest(module)
    table = read(path, grammar)
    if table is None:
        return yacc.yacc(module=module, debug=False)
    for production in table.lr_productions:
        production.bind(pdict)
    return yacc.LRParser(table, pdict.get("p_error"))


def _grammar(yaql_factory: factory.YaqlFactory) -> tuple[Any, Any]:
    """The lexer rules and the parser module ``yaql_factory`` makes (as its
    ``create`` does)."""
    operators = yaql_factory._build_operator_table(yaql_factory._name_generator())
    rules = yaql_factory._create_lexer(operators)
    return rules, yaql_factory._create_parser(rules, operators)


def create(yaql_factory: factory.YaqlFactory, options: dict[str, Any] | None = None,
           path: Path = TABLES) -> factory.YaqlEngine:
    """A YAQL engine, as ``yaql_factory.create(options)`` makes it, its parser from
    :func:`parser`."""
    rules, module = _grammar(yaql_factory)
    ply_lexer = lex.lex(object=rules, reflags=re.UNICODE | re.VERBOSE)
    return factory.YaqlEngine(ply_lexer, parser(module, path), options, yaql_factory)


def computed(yaql_factory: factory.YaqlFactory) -> dict[str, Any]:
    """The tables PLY computes for ``yaql_factory``'s grammar, as the file holds them."""
    module = _grammar(yaql_factory)[1]
    built = yacc.yacc(module=module, debug=False)
    return {
        "grammar": digest(module)[0],
        "productions": [[p.name, p.len, p.func] for p in built.productions],
        "action": sorted([state, row] for state, row in built.action.items()),
        "goto": sorted([state, row] for state, row in built.goto.items()),
    }


if __name__ == "__main__":
    TABLES.write_text(json.dumps(computed(factory.YaqlFactory()), sort_keys=True) + "\n",
                      encoding="utf-8")
