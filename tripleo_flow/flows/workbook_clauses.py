"""Pieces of the workbook language shared by its parsers: problems, and the
``on-success``/``on-error``/``on-complete`` clauses.

A clause is a list of targets (task names, ``{task: condition}``, engine
commands with parameters: ``fail msg="disk full"``) or Mistral's advanced form
``{publish: {branch: {...}, global: {...}, atomic: {...}}, next: [...]}``.
No I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Engine commands usable as a transition target (``fail``/``succeed``/``pause`` take
#: ``msg``: ``fail msg="disk full"``).
COMMANDS = ("fail", "succeed", "pause", "noop")
#: Publish scopes of the advanced transition form (``atomic`` is published like
#: ``global``: every publish of a task is one locked update here).
PUBLISH_SCOPES = ("branch", "global", "atomic")

_INLINE_PARAM_RE = re.compile(
    r"""([A-Za-z_][A-Za-z0-9_]*)=(<%.*?%>|\{\{.*?\}\}|"[^"]*"|'[^']*'|\S+)""", re.S)


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
    target, params = split_inline(text)
    if params and target not in COMMANDS:
        out.add(f"'{key}' entry {text!r}: only the engine commands "
                f"({', '.join(COMMANDS)}) take parameters", wf, task)
    for unknown in sorted(set(params) - {"msg"}):
        out.add(f"'{key}' entry {text!r}: unknown parameter {unknown!r} (commands take "
                "'msg')", wf, task)
    return Transition(target, condition, params)


def split_inline(ref: str) -> tuple[str, dict[str, Any]]:
    head, _, rest = ref.strip().partition(" ")
    params: dict[str, Any] = {}
    for key, value in _INLINE_PARAM_RE.findall(rest):
        if value[:1] in "\"'" and value[-1:] == value[:1]:
            params[key] = value[1:-1]
        else:
            params[key] = _scalar(value)
    return head, params


def _scalar(text: str) -> Any:
    if text.startswith(("<%", "{{")):
        return text
    import yaml

    from tripleo_flow.core import planenv

    try:
        return planenv.parse_yaml(text)
    except yaml.YAMLError:
        return text
