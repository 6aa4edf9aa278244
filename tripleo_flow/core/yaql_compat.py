"""yaql expressions of older templates made to run on yaql 3 (pure, no I/O).

yaql 3 removed the string ``format`` method (CVE-2024-29156: a format spec
such as ``{0.__class__}`` reached any Python attribute, so a template author
could run code in heat-engine).  THT 12.1.0 and 18.0.0 still use it, as
``str("{0}".format($.data).split("/")[-1])``, and their stacks fail minutes
into a create with ``No method "format"``.

Heat is not given ``format`` back.  Before the request is sent, each yaql
``expression`` calling ``format`` on a string literal is rewritten, when it has
the one recognised form (literal text with ``{}`` or ``{N}`` fields, positional
arguments only), into the same string built with yaql 3's own ``concat`` and
``str``: ``"a{0}b".format(X)`` becomes ``concat("a", str(X), "b")``.  Any other
field (attribute, index, conversion, format spec, name) is refused before Heat
is launched, naming the file and the expression.  The plan keeps its files as
uploaded; only the request changes, and it asks Heat for nothing that a
template could not already ask for.

One difference remains: yaql's ``str`` writes ``null``/``true`` where Python's
``format`` wrote ``None``/``True`` (THT formats strings and numbers only).
``format`` on anything but a string literal (``now().format("%Y")``, yaql 3's
date formatting) is left alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from tripleo_flow import exceptions

_QUOTES = "\"'`"
_OPEN = {"(": ")", "[": "]", "{": "}"}
_FORMAT_CALL = re.compile(r"\s*\.\s*format\s*\(")
_FIELD = re.compile(r"\{\{|\}\}|\{([0-9]*)\}|[{}]")
_REMEDY = ("use yaql's concat() and str() instead (yaql 3 removed str.format, "
           "CVE-2024-29156)")


class UnsupportedFormat(ValueError):
    """A ``format`` call this module does not rewrite (the message says why)."""


def _literal_end(text: str, start: int) -> int:
    """The index just past the quoted literal opening at ``start``."""
    quote, index = text[start], start + 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == quote:
            return index + 1
        index += 1
    raise UnsupportedFormat("a string literal is not closed")


def _arguments(text: str, start: int) -> tuple[list[str], int]:
    """The top-level arguments of the call whose ``(`` is just before ``start``,
    and the index just past its ``)``."""
    args: list[str] = []
    begin, index, closers = start, start, [")"]
    while index < len(text):
        char = text[index]
        if char in _QUOTES:
            index = _literal_end(text, index)
            continue
        if char in _OPEN:
            closers.append(_OPEN[char])
        elif char in ")]}":
            if char != closers.pop():
                raise UnsupportedFormat("its brackets do not match")
            if not closers:
                args.append(text[begin:index].strip())
                if args == [""]:
                    return [], index + 1
                if "" in args:
                    raise UnsupportedFormat("an argument of format( is empty")
                return args, index + 1
        elif char == "," and len(closers) == 1:
            args.append(text[begin:index].strip())
            begin = index + 1
        index += 1
    raise UnsupportedFormat("a format( call is not closed")


def _pieces(literal: str, args: list[str]) -> list[str]:
    """The yaql pieces of ``literal`` (quotes included) formatted with ``args``."""
    quote, body = literal[0], literal[1:-1]
    pieces: list[str] = []
    text, auto, explicit, last = "", 0, False, 0
    for match in _FIELD.finditer(body):
        text += body[last:match.start()]
        last = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            text += token[0]
            continue
        if match.group(1) is None:
            raise UnsupportedFormat(
                f"the field at {body[match.start():match.start() + 12]!r} is not a plain "
                "{} or {N} (attribute, index, conversion, format spec and named fields "
                "are refused)")
        if match.group(1):
            index, explicit = int(match.group(1)), True
        else:
            index, auto = auto, auto + 1
        if explicit and auto:
            raise UnsupportedFormat("it mixes {} and {N} fields")
        if index >= len(args):
            raise UnsupportedFormat(f"field {{{index}}} has no argument")
        if text:
            pieces.append(quote + text + quote)
            text = ""
        pieces.append(f"str({args[index]})")
    text += body[last:]
    if text:
        pieces.append(quote + text + quote)
    return pieces


def rewrite(expression: str) -> str:
    """``expression`` with each ``"literal".format(...)`` call rewritten with
    ``concat`` and ``str``; unchanged when it has none.

    :raises UnsupportedFormat: for a call this module does not rewrite.
    """
    out, index, last = [], 0, 0
    while index < len(expression):
        if expression[index] not in _QUOTES:
            index += 1
            continue
        end = _literal_end(expression, index)
        call = _FORMAT_CALL.match(expression, end)
        if call is None:
            index = end
            continue
        args, after = _arguments(expression, call.end())
        if any("=>" in arg for arg in args):
            raise UnsupportedFormat("keyword arguments (name => value) are refused")
        pieces = _pieces(expression[index:end], args)
        out.append(expression[last:index])
        out.append(f"concat({', '.join(pieces)})" if pieces else '""')
        index = last = after
    out.append(expression[last:])
    return rewrite("".join(out)) if last else expression


def _yaql_nodes(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        spec = node.get("yaql")
        if len(node) == 1 and isinstance(spec, dict) and isinstance(spec.get("expression"), str):
            yield spec
        for value in node.values():
            yield from _yaql_nodes(value)
    elif isinstance(node, list):
        for item in node:
            yield from _yaql_nodes(item)


def _rewrite_template(template: Any, name: str) -> bool:
    changed = False
    for spec in _yaql_nodes(template):
        expression = spec["expression"]
        try:
            new = rewrite(expression)
        except UnsupportedFormat as exc:
            raise exceptions.InvalidTemplate(
                name, f"its yaql expression {expression!r} cannot run on yaql 3: {exc}; "
                f"{_REMEDY}") from None
        if new != expression:
            spec["expression"] = new
            changed = True
    return changed


def rewrite_request(request: Mapping[str, Any],
                    object_name: Any = lambda url: url) -> dict[str, Any]:
    """A copy of a stack ``request`` (``template`` a mapping, templates in
    ``files`` as JSON text) whose yaql expressions run on yaql 3.

    :param object_name: maps a file's URL to the name the error shows.
    :raises InvalidTemplate: naming the file and the expression that cannot be rewritten.
    """
    template = request["template"]
    if "format" in json.dumps(template, default=str):
        template = json.loads(json.dumps(template, default=str))
        _rewrite_template(template, "the root template")
    files = dict(request["files"])
    for url, text in request["files"].items():
        if "format" not in text or not text.startswith("{"):
            continue
        try:
            data = json.loads(text)
        except ValueError:
            continue  # a get_file'd file, not a template
        if isinstance(data, dict) and "heat_template_version" in data \
                and _rewrite_template(data, object_name(url)):
            files[url] = json.dumps(data, default=str)
    return {**request, "template": template, "files": files}
