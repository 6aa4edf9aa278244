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

Some expressions fail on Python 3.7+ only with some data: yaql's ``first()``
without a default raises ``StopIteration`` on an empty collection, which Heat's
task generators turn into ``generator raised StopIteration`` (PEP 479) and its
property validation into an error with an empty message.  THT
12.1.0 does it on data it expects to be missing
(``coalesce($.data, []).where(not isEmpty($)).first()``, the network CIDRs).
Whether the collection is empty is known only in Heat, so :func:`risky` names
these expressions, with their file, for the deploy to say before Heat starts.
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
#: Forms that fail with some data on Python 3.7+: (pattern, what happens, what to do).
RISKY = (
    (re.compile(r"coalesce\(.*\[\s*\].*\.first\(\s*\)", re.S),
     "calls first() without a default on a collection it expects may be empty; on an "
     "empty one yaql raises StopIteration, which Heat reports as an empty property error "
     "or as 'generator raised StopIteration' (PEP 479, Python 3.7+)",
     "give first() a default, e.g. first(null), or set the value it reads"),
)
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


def rewrite_request(request: Mapping[str, Any], object_name: Any = lambda url: url,
                    root: str = "the root template") -> dict[str, Any]:
    """A copy of a stack ``request`` (``template`` a mapping, templates in
    ``files`` as JSON text) whose yaql expressions run on yaql 3.

    :param object_name: maps a file's URL to the name the error shows.
    :param root: the name the error shows for the request's ``template``.
    :raises InvalidTemplate: naming the file and the expression that cannot be rewritten.
    """
    template = request["template"]
    if "format" in json.dumps(template, default=str):
        template = json.loads(json.dumps(template, default=str))
        _rewrite_template(template, root)
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


def _templates(request: Mapping[str, Any], root: str) -> Iterator[tuple[str, Any]]:
    yield root, request["template"]
    for url, text in request["files"].items():
        if text.startswith("{") and "first(" in text:
            try:
                data = json.loads(text)
            except ValueError:
                continue
            if isinstance(data, dict) and "heat_template_version" in data:
                yield url, data


def risky(request: Mapping[str, Any], object_name: Any = lambda url: url,
          root: str = "the root template") -> list[str]:
    """What each yaql expression of ``request`` with a form of :data:`RISKY` may do,
    one sentence naming its file (``root`` for the request's template) and the
    expression, deduplicated, in file order."""
    found: list[str] = []
    for url, template in _templates(request, root):
        for spec in _yaql_nodes(template):
            for pattern, problem, remedy in RISKY:
                if pattern.search(spec["expression"]):
                    text = (f"{object_name(url)}: the yaql expression {spec['expression']!r} "
                            f"{problem}; {remedy}.")
                    if text not in found:
                        found.append(text)
    return found
