"""YAQL ``<% %>`` and Jinja ``{{ }}`` expressions over a workflow's data.

A string that is one whole expression evaluates to a typed value
(``'<% $.count + 1 %>'`` gives an int); a string with expressions inside text
is rendered as text.  Mappings and lists are evaluated recursively.  The data
is the workflow context: its inputs and the values published so far, reachable
as ``$.name`` in YAQL and ``_.name`` in Jinja.  Functions, as in Mistral:
``task('name')`` or ``task(name)`` (a bare identifier is a string in YAQL; its
``result``, ``state``, ``published``; ``task()`` is the current task),
``tasks()``, ``execution()`` (``id``, ``input``, ``name``), ``executions()``
(the current execution only), ``global('name')``, ``env()``, ``uuid()``,
``json_pp``, ``json_dump`` / ``json_parse``, ``yaml_dump`` / ``yaml_parse``.
Functions that need the running execution come as *hooks* from the caller
(:mod:`tripleo_flow.engine.compile.execution_scope`).

A workbook may come from anyone who can write to the HTTP API, so expressions
are bounded by :class:`Limits` (``[limits] render_max_size``,
``expression_max_items`` and ``expression_timeout``): Jinja runs in the
size-checked sandbox plan templates render in too
(:class:`~tripleo_flow.common.template_sandbox.TemplateSandbox`, which also never
folds ``'a' * 10**9`` while a workbook is checked), YAQL with its memory quota
and collection limit; both check the deadline of
:mod:`~tripleo_flow.common.time_budget` at every call (in YAQL, every function
looked up in the root context), so ``range(0, 100000).select(range(0,
100000).len()).sum()`` stops after ``expression_timeout`` seconds.
"""

from __future__ import annotations

import collections.abc  # noqa: F401  (yaql 3.2 uses collections.abc without importing it)
import functools
import json
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jinja2
import jinja2.sandbox
import yaml
import yaql
from yaql.language import contexts, conventions, factory, specs, yaqltypes
from yaql.language import exceptions as yaql_exc

from tripleo_flow.common import safe_yaml, time_budget, yaql_compat
from tripleo_flow.common.template_sandbox import DEFAULT_MAX_SIZE, TemplateSandbox
from tripleo_flow.engine.lang import yaql_fast, yaql_inputs, yaql_tables
from tripleo_flow.exceptions import ExpressionError

#: Default of ``[limits] expression_max_items``.
DEFAULT_MAX_ITEMS = 100_000
#: Default of ``[limits] expression_timeout``, in seconds.
DEFAULT_TIMEOUT = 10.0
#: The option named when an expression runs out of time.
TIMEOUT_OPTION = "[limits] expression_timeout"

_YAQL_RE = re.compile(r"<%(.*?)%>", re.S)
_JINJA_RE = re.compile(r"{{(.*?)}}|{%(.*?)%}", re.S)
_TASK_REF_RE = re.compile(r"""task\(\s*(?:'([^']*)'|"([^"]*)")\s*\)""")
_TASK_ANY_RE = re.compile(r"(?<![\w.$])task\(\s*([^)\s][^)]*)?\)")
_TASK_BARE_RE = re.compile(r"task\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)")
#: Functions that need the running execution (given to :class:`Evaluator` as hooks).
HOOKS = ("tasks", "executions", "global", "env")


@dataclass(frozen=True)
class Limits:
    """How large a value one expression may build.

    :param max_size: characters (Jinja) or bytes (YAQL's memory quota) of a value
        built by one operation (``[limits] render_max_size``).
    :param max_items: items of a collection YAQL builds or walks
        (``[limits] expression_max_items``).
    :param timeout: seconds one expression may run (``[limits] expression_timeout``;
        0: no limit).
    """

    max_size: int = DEFAULT_MAX_SIZE
    max_items: int = DEFAULT_MAX_ITEMS
    timeout: float = DEFAULT_TIMEOUT


DEFAULT_LIMITS = Limits()


@functools.cache
def _yaql_engine(limits: Limits = DEFAULT_LIMITS) -> Any:
    return yaql_tables.create(factory.YaqlFactory(), options={
        "yaql.limitIterators": limits.max_items, "yaql.memoryQuota": limits.max_size})


_root_lock = threading.Lock()
_root_context: Any = None


class _TimedContext(contexts.Context):  # type: ignore[misc]
    """The root context: every function call looks its name up here (through the
    child contexts), so each one first checks the thread's deadline."""

    def get_functions(self, name: str, predicate: Any = None,
                      use_convention: bool = False) -> Any:
        time_budget.check()
        return super().get_functions(name, predicate, use_convention)


def _yaql_root() -> Any:
    global _root_context
    with _root_lock:
        if _root_context is None:
            # camelCase standard library, as in Mistral
            context = yaql.create_context(
                context=_TimedContext(convention=conventions.CamelCaseConvention()))
            for name, func in (("task", _y_task), ("execution", _y_execution),
                               ("json_dump", _y_json_dump), ("json_parse", _y_json_parse),
                               ("yaml_dump", _y_yaml_dump), ("yaml_parse", _y_yaml_parse),
                               ("tasks", _y_tasks), ("executions", _y_executions),
                               ("global", _y_global), ("env", _y_env), ("uuid", _uuid),
                               ("json_pp", _y_json_pp)):
                context.register_function(func, name=name)
            _root_context = context
        return _root_context


@specs.parameter("name", nullable=True)
@specs.inject("context", yaqltypes.Context())
def _y_task(context: Any, name: str | None = None) -> Any:
    return context["$__evaluator"].task(name)


@specs.inject("context", yaqltypes.Context())
def _y_execution(context: Any) -> Any:
    return context["$__evaluator"].execution()


@specs.parameter("workflow_execution_id", nullable=True)
@specs.parameter("state", nullable=True)
@specs.inject("context", yaqltypes.Context())
def _y_tasks(context: Any, workflow_execution_id: str | None = None, recursive: bool = False,
             state: str | None = None, flat: bool = False) -> Any:
    return context["$__evaluator"].call("tasks", workflow_execution_id, recursive, state, flat)


@specs.parameter("id", nullable=True)
@specs.parameter("root_execution_id", nullable=True)
@specs.parameter("state", nullable=True)
@specs.parameter("from_time", nullable=True)
@specs.parameter("to_time", nullable=True)
@specs.inject("context", yaqltypes.Context())
def _y_executions(context: Any, id: str | None = None, root_execution_id: str | None = None,
                  state: str | None = None, from_time: Any = None, to_time: Any = None) -> Any:
    return context["$__evaluator"].call("executions", id, root_execution_id, state, from_time,
                                        to_time)


@specs.inject("context", yaqltypes.Context())
def _y_global(context: Any, name: str) -> Any:
    return context["$__evaluator"].call("global", name)


@specs.inject("context", yaqltypes.Context())
def _y_env(context: Any) -> Any:
    return context["$__evaluator"].call("env")


@specs.parameter("data", nullable=True)
@specs.inject("context", yaqltypes.Context())
def _y_json_pp(context: Any, data: Any = None) -> str:
    return _json_pp(context["$__evaluator"].data if data is None else data)


def _uuid() -> str:
    return str(uuid.uuid4())


def _json_pp(value: Any) -> str:
    """Mistral's ``json_pp``: indented JSON with its escaped line breaks made real."""
    text = json.dumps(_plain(value), indent=4)
    return text.replace("\\n", "\n").replace(" \n", "\n")


def _y_json_dump(value: Any) -> str:
    return json.dumps(_plain(value), sort_keys=True)


def _y_json_parse(text: str) -> Any:
    return json.loads(text)


def _y_yaml_dump(value: Any) -> str:
    return str(yaml.safe_dump(_plain(value), default_flow_style=False))


def _plain(value: Any) -> Any:
    """YAQL's frozen containers as plain dicts and lists."""
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _y_yaml_parse(text: str) -> Any:
    """``text`` as YAML, within the default ``[limits]`` (no billion laughs)."""
    try:
        return safe_yaml.parse_yaml(text)
    except yaml.YAMLError as exc:
        raise ExpressionError(f"yaml_parse({text[:40]!r})",
                              safe_yaml.describe_yaml_error(exc)) from exc


#: yaql's parser (ply) keeps its state in the lexer: one parse at a time.
_parse_lock = threading.Lock()


@functools.lru_cache(maxsize=4096)
def _parse_yaql(text: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Parse a YAQL expression; a ``"literal".format(...)`` in it (Mistral's workbooks of
    the yaql 1 days, TripleO's among them) is read as :mod:`yaql_compat` reads it for
    Heat: positional fields only, the only ones that cannot reach an attribute."""
    try:
        rewritten = yaql_compat.rewrite(text)
    except yaql_compat.UnsupportedFormat as exc:
        raise ExpressionError(f"<%{text}%>", str(exc)) from exc
    try:
        with _parse_lock:
            return _yaql_engine(limits)(rewritten.strip())
    except yaql_exc.YaqlException as exc:
        raise ExpressionError(f"<%{text}%>", str(exc)) from exc


@functools.lru_cache(maxsize=4096)
def _fast_yaql(text: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """The expression compiled to Python when it is simple (:mod:`.yaql_fast`), or None."""
    return yaql_fast.compile(_parse_yaql(text, limits), limits.max_items)


@functools.cache
def _jinja_env(limits: Limits = DEFAULT_LIMITS) -> TemplateSandbox:
    """The size-checked sandbox; nothing in a workflow's data is frozen (as in Mistral)."""
    return TemplateSandbox(max_size=limits.max_size, undefined=jinja2.StrictUndefined)


@functools.lru_cache(maxsize=4096)
def _parse_jinja_expression(text: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    try:
        return _jinja_env(limits).compile_expression(text.strip(), undefined_to_none=False)
    except (jinja2.TemplateSyntaxError, jinja2.sandbox.SecurityError) as exc:
        raise ExpressionError("{{" + text + "}}", str(exc)) from exc


@functools.lru_cache(maxsize=4096)
def _parse_jinja_template(text: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    try:
        return _jinja_env(limits).from_string(text)
    except (jinja2.TemplateSyntaxError, jinja2.sandbox.SecurityError) as exc:
        raise ExpressionError(text, str(exc)) from exc


def _whole(regex: re.Pattern[str], text: str) -> str | None:
    stripped = text.strip()
    match = regex.fullmatch(stripped)
    if match and match.group(1) is not None and len(regex.findall(stripped)) == 1:
        return match.group(1)
    return None


def has_expression(value: Any) -> bool:
    """True when ``value`` (or anything inside it) holds an expression."""
    if isinstance(value, str):
        return "<%" in value or "{{" in value or "{%" in value
    if isinstance(value, Mapping):
        return any(has_expression(k) or has_expression(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(has_expression(v) for v in value)
    return False


def check(value: Any) -> list[str]:
    """Syntax problems of every expression inside ``value`` (empty when fine)."""
    problems: list[str] = []
    for text in _strings(value):
        try:
            if "<%" in text:
                for inner in _YAQL_RE.findall(text):
                    _parse_yaql(inner)
            if "{{" in text or "{%" in text:
                inner = _whole(_JINJA_RE, text)
                if inner is not None:
                    _parse_jinja_expression(inner)
                else:
                    _parse_jinja_template(text)
        except ExpressionError as exc:
            problems.append(str(exc))
    return problems


def task_references(value: Any) -> tuple[set[str], bool]:
    """Task names used as ``task('name')`` in ``value`` (in YAQL also ``task(name)``: a
    bare identifier is a string there), and whether a dynamic one is used."""
    names: set[str] = set()
    dynamic = False
    for text in _strings(value):
        yaql_spans = [m.span(1) for m in _YAQL_RE.finditer(text)]
        for match in _TASK_ANY_RE.finditer(text):
            arg = (match.group(1) or "").strip()
            literal = _TASK_REF_RE.fullmatch(match.group(0))
            bare = _TASK_BARE_RE.fullmatch(match.group(0))
            if literal:
                names.add(literal.group(1) or literal.group(2))
            elif bare and any(a <= match.start() < b for a, b in yaql_spans):
                if bare.group(1) != "null":  # task(null) is the current task
                    names.add(bare.group(1))
            elif arg:
                dynamic = True
    return names, dynamic


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in _strings(k) + _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


class Evaluator:
    """Evaluates expressions over ``data`` with Mistral's helper functions."""

    def __init__(self, data: Mapping[str, Any],
                 tasks: Callable[[str | None], Any] | None = None,
                 execution: Mapping[str, Any] | None = None,
                 limits: Limits = DEFAULT_LIMITS,
                 hooks: Mapping[str, Callable[..., Any]] | None = None) -> None:
        """:param hooks: the functions of :data:`HOOKS` for the running execution
            (without them ``tasks()`` and ``executions()`` are empty, ``env()`` is
            ``{}`` and ``global()`` is null)"""
        self.data = data
        self._tasks = tasks
        self._execution = dict(execution or {})
        self.limits = limits
        self._hooks = hooks or {}

    def call(self, name: str, *args: Any) -> Any:
        """The hook ``name`` (one of :data:`HOOKS`) called with ``args``."""
        hook = self._hooks.get(name)
        if hook is not None:
            return hook(*args)
        if name == "executions":  # (id, root_execution_id, state, ...): the current one
            ident, root, state = (list(args) + [None] * 3)[:3]
            keep = self._execution and ident in (None, self._execution.get("id")) and \
                root is None and state in (None, "RUNNING")
            return [self._execution] if keep else []
        return {"tasks": [], "env": {}}.get(name)

    def task(self, name: str | None = None) -> Any:
        if self._tasks is None:
            raise ExpressionError(f"task({name!r})", "no task results are available here")
        return self._tasks(name)

    def execution(self) -> dict[str, Any]:
        return self._execution

    def evaluate(self, value: Any) -> Any:
        """``value`` with every expression inside it evaluated."""
        if isinstance(value, str):
            return self._string(value)
        if isinstance(value, Mapping):
            return {self.evaluate(k): self.evaluate(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.evaluate(v) for v in value]
        return value

    def _string(self, text: str) -> Any:
        if "<%" in text:
            inner = _whole(_YAQL_RE, text)
            if inner is not None:
                return self._yaql(inner)
            return _YAQL_RE.sub(lambda m: _text(self._yaql(m.group(1))), text)
        if "{{" in text or "{%" in text:
            inner = _whole(_JINJA_RE, text)
            if inner is not None:
                return self._jinja_value(inner)
            return self._jinja_text(text)
        return text

    def _functions(self) -> dict[str, Callable[..., Any]]:
        return {"task": self.task, "execution": self.execution,
                "json_dump": lambda v: json.dumps(v, sort_keys=True),
                "json_parse": json.loads,
                "yaml_dump": lambda v: yaml.safe_dump(v, default_flow_style=False),
                "yaml_parse": _y_yaml_parse, "uuid": _uuid,
                "json_pp": lambda v=None: _json_pp(self.data if v is None else v),
                "tasks": lambda workflow_execution_id=None, recursive=False, state=None,
                flat=False: self.call("tasks", workflow_execution_id, recursive, state, flat),
                "executions": lambda id=None, root_execution_id=None, state=None,
                from_time=None, to_time=None: self.call("executions", id, root_execution_id,
                                                        state, from_time, to_time),
                "global": lambda name: self.call("global", name),
                "env": lambda: self.call("env")}

    def _yaql(self, text: str) -> Any:
        fast = _fast_yaql(text, self.limits)
        if fast is not None:  # a simple expression: YAQL's result, without its dispatch
            value = fast(self.data, self.limits.max_size)
            if value is not yaql_fast.UNSURE:
                return value
        expression = _parse_yaql(text, self.limits)
        context = _yaql_root().create_child_context()
        context["$__evaluator"] = self
        try:
            with time_budget.limit(self.limits.timeout, TIMEOUT_OPTION):
                # ``data=self.data`` would copy all of it first, whatever is read
                context["$"] = yaql_inputs.freeze(self.data)
                return expression.evaluate(context=context)
        except ExpressionError:
            raise
        except time_budget.TimeLimitExceeded as exc:
            raise ExpressionError(f"<%{text}%>", _too_long(exc)) from exc
        except yaql_exc.MemoryQuotaExceededException as exc:
            raise ExpressionError(f"<%{text}%>", f"{exc}: it would build a value over "
                                  f"{self.limits.max_size} bytes ([limits] render_max_size)"
                                  ) from exc
        except yaql_exc.CollectionTooLargeException as exc:
            raise ExpressionError(f"<%{text}%>", f"{exc} ([limits] expression_max_items)"
                                  ) from exc
        except Exception as exc:  # YAQL raises KeyError, TypeError ... for bad data
            reason = f"no value {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ExpressionError(f"<%{text}%>", reason or type(exc).__name__) from exc

    def _jinja_vars(self) -> dict[str, Any]:
        data = self.data if isinstance(self.data, Mapping) else {}
        return {**data, "_": self.data, **self._functions()}

    def _jinja_value(self, text: str) -> Any:
        try:
            with time_budget.limit(self.limits.timeout, TIMEOUT_OPTION):
                value = _parse_jinja_expression(text, self.limits)(**self._jinja_vars())
        except ExpressionError:
            raise
        except time_budget.TimeLimitExceeded as exc:
            raise ExpressionError("{{" + text + "}}", _too_long(exc)) from exc
        except Exception as exc:
            raise ExpressionError("{{" + text + "}}", str(exc)) from exc
        if isinstance(value, jinja2.Undefined):
            raise ExpressionError("{{" + text + "}}", "the value is undefined")
        return value

    def _jinja_text(self, text: str) -> str:
        try:
            with time_budget.limit(self.limits.timeout, TIMEOUT_OPTION):
                template = _parse_jinja_template(text, self.limits)
                return str(template.render(**self._jinja_vars()))
        except ExpressionError:
            raise
        except time_budget.TimeLimitExceeded as exc:
            raise ExpressionError(text, _too_long(exc)) from exc
        except Exception as exc:
            raise ExpressionError(text, str(exc)) from exc


def _too_long(exc: time_budget.TimeLimitExceeded) -> str:
    return (f"stopped: {exc}. Make the expression do less (smaller ranges, fewer nested "
            "loops), or raise that option in the configuration of what runs the workflow")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
