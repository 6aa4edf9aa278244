"""Pieces of the workbook language shared by its parsers: problems, and the
``on-success``/``on-error``/``on-complete`` clauses.

A clause is a list of targets (task names, ``{task: condition}``, engine
commands with parameters: ``fail msg="disk full"`` or ``fail(msg="disk full")``)
or Mistral's advanced form ``{publish: {branch: {...}, global: {...}, atomic:
{...}}, next: [...]}``.
No I/O here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Engine commands usable as a transition target (``fail``/``succeed``/``pause`` take
#: ``msg``: ``fail msg="disk full"``).
COMMANDS = ("fail", "succeed", "pause", "noop")


def fail_message(task: str, msg: str | None, error: str | None) -> str:
    """What a ``fail`` taken by ``task`` says: its ``msg``, and the task's error."""
    return (f"task {task!r} reached a 'fail' transition" + (f": {msg}" if msg is not None
            else "") + (f" after an error: {error}" if error else ""))


#: Publish scopes of the advanced transition form (``atomic`` is published like
#: ``global``: every publish of a task is one locked update here).
PUBLISH_SCOPES = ("branch", "global", "atomic")

#: Inline parameters (``std.echo output="hi" count=2``), read as Mistral reads them: a
#: value is a quoted string (kept as written, quotes removed), an expression, a
#: ``[...]`` to the last ``]`` (JSON when it parses, else the text), ``true``, ``false``,
#: ``null`` or digits; the order of the alternatives is Mistral's.
_INLINE_VALUE = "|".join((r'"[^"]*"\s*', r"'[^']*'\s*", r"\{\{.*\}\}|\{%.*%\}|<%.*?%>",
                          r"\[.*\]\s*", "true", "false", "null", r"\d+"))
_INLINE_PARAM_RE = re.compile(rf"([-_\w]+)=({_INLINE_VALUE})")
#: ``NAME(KEY=VALUE ...)``: Mistral's other way to give inline parameters.
_CALL_RE = re.compile(r"([\w.]+)\((.*)\)$", re.DOTALL)
#: What an inline value may be, for the message of text that is none of them.
INLINE_FORMS = ("KEY=VALUE with a quoted string, a [JSON list], digits, true, false, "
                "null or an expression")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a workbook, located as precisely as known."""

    path: str
    message: str
    workflow: str | None = None
    task: str | None = None

    def __str__(self) -> str:
        where = [self.path or "<workbook>"]
        if self.workflow:
            where.append(f"workflow {self.workflow!r}")
        if self.task:
            where.append(f"task {self.task!r}")
        return f"{', '.join(where)}: {self.message}"


@dataclass(frozen=True)
class Transition:
    """``on-success``/``on-error``/``on-complete`` entry: a target and an optional condition."""

    target: str
    condition: Any = None
    #: Parameters of an engine command (``msg``).
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_command(self) -> bool:
        return self.target in COMMANDS


class Collector:
    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[Problem] = []

    def add(self, message: str, workflow: str | None = None, task: str | None = None) -> None:
        self.problems.append(Problem(self.path, message, workflow, task))


def parse_clause(raw: dict[str, Any], key: str, wf: str, task: str, out: Collector
            ) -> tuple[tuple[Transition, ...], dict[str, dict[str, Any]]]:
    """An ``on-*`` clause: a list of targets, or the advanced form
    ``{publish: {branch: ..., global: ..., atomic: ...}, next: [...]}``."""
    value = raw.get(key)
    if isinstance(value, dict) and value and set(value) <= {"publish", "next"}:
        return (_transitions(value.get("next"), key, wf, task, out),
                _scopes(value.get("publish"), key, wf, task, out))
    return _transitions(value, key, wf, task, out), {}


def _scopes(value: Any, key: str, wf: str, task: str, out: Collector
            ) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, dict) or set(value) - set(PUBLISH_SCOPES):
        out.add(f"'publish' in '{key}' must be a mapping of scopes "
                f"({', '.join(PUBLISH_SCOPES)}) to variables", wf, task)
        return {}
    scopes: dict[str, dict[str, Any]] = {}
    for scope in PUBLISH_SCOPES:
        variables = value.get(scope) or {}
        if not isinstance(variables, dict):
            out.add(f"'publish: {scope}' in '{key}' must be a mapping of names to values",
                    wf, task)
            continue
        target = "branch" if scope == "branch" else "global"
        if variables:
            scopes.setdefault(target, {}).update({str(k): v for k, v in variables.items()})
    return scopes


def _transitions(value: Any, key: str, wf: str, task: str,
                 out: Collector) -> tuple[Transition, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list):
        out.add(f"'{key}' must be a list of task names", wf, task)
        return ()
    result = []
    for item in value:
        if isinstance(item, str):
            result.append(_target(item, None, key, wf, task, out))
        elif isinstance(item, dict) and len(item) == 1:
            (target, condition), = item.items()
            result.append(_target(str(target), condition, key, wf, task, out))
        else:
            out.add(f"bad '{key}' entry {item!r}: use a task name or {{task: condition}}",
                    wf, task)
    return tuple(result)


def _target(text: str, condition: Any, key: str, wf: str, task: str,
            out: Collector) -> Transition:
    target, params, unread = split_inline(text)
    if unread:
        out.add(f"'{key}' entry {text!r}: cannot read {unread!r} as a parameter "
                f"({INLINE_FORMS})", wf, task)
    if params and target not in COMMANDS:
        out.add(f"'{key}' entry {text!r}: only the engine commands "
                f"({', '.join(COMMANDS)}) take parameters", wf, task)
    for unknown in sorted(set(params) - {"msg"}):
        out.add(f"'{key}' entry {text!r}: unknown parameter {unknown!r} (commands take "
                "'msg')", wf, task)
    return Transition(target, condition, params)


def _name_end(text: str) -> int:
    """Where the name at the start of ``text`` ends: at the first white space outside
    the ``<% %>`` and ``{{ }}`` expressions it holds."""
    pos = 0
    while pos < len(text):
        for opener, closer in (("<%", "%>"), ("{{", "}}")):
            if text.startswith(opener, pos):
                end = text.find(closer, pos + 2)
                if end < 0:
                    return len(text)
                pos = end + 2
                break
        else:
            if text[pos].isspace():
                return pos
            pos += 1
    return pos


def split_inline(ref: str) -> tuple[str, dict[str, Any], str]:
    """``NAME KEY=VALUE ...`` or ``NAME(KEY=VALUE ...)``: the name, the parameters
    and the text no parameter took (Mistral ignores it silently; our parsers report
    it, see :data:`INLINE_FORMS`).  Without a space or parentheses there are no
    parameters."""
    text = ref.strip()
    call = _CALL_RE.match(text)
    named = _name_end(text)
    if call:  # fail(msg="disk full"), as Mistral's on-clauses write engine commands
        head, rest = call.group(1), call.group(2)
    elif "<%" in text[:named] or "{{" in text[:named]:
        # a name given by an expression (``<% $.action %>``, ``std.<% $.kind %>``)
        head, rest = text[:named], text[named:]
        if not rest.strip():
            return head, {}, ""
    elif " " not in text:
        return text, {}, ""
    else:
        head, _, rest = text.partition(" ")
    params: dict[str, Any] = {}
    unread, pos = [], 0
    for match in _INLINE_PARAM_RE.finditer(rest):
        unread.append(rest[pos:match.start()])
        pos = match.end()
        value = match.group(2).strip()
        if value[0] in "\"'":
            params[match.group(1)] = value[1:-1]
            continue
        try:  # [JSON], true, false, null, digits; an expression stays text
            params[match.group(1)] = json.loads(value)
        except ValueError:
            params[match.group(1)] = value
    unread.append(rest[pos:])
    return head, params, " ".join("".join(unread).split())


def merge_inline(given: Mapping[str, Any], inline: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` (``input``, ``base-input``) with the inline parameters merged over it,
    as Mistral merges them: an inline value wins, mappings merge key by key."""
    merged = dict(given)
    for key, value in inline.items():
        if isinstance(merged.get(key), Mapping) and isinstance(value, Mapping):
            merged[key] = merge_inline(merged[key], value)
        else:
            merged[key] = value
    return merged
