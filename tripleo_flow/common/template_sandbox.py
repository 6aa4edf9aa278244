"""The jinja2 sandbox templates from untrusted authors render in (a plan's templates,
a workflow's Jinja expressions).

Such a template comes from whoever can upload it, so it must neither reach
Python internals (``cycler.__init__.__globals__.os``) nor exhaust the server's
memory (``{{ 'a' * 3000000000 }}``).  :class:`TemplateSandbox` is jinja2's
immutable sandbox with two changes:

* the data a template is given (roles, networks) is read-only, but lists and
  dicts the template builds itself may be changed, as TripleO's own templates
  do (``{% set _ = _role_networks.append(key) %}``);
* every operation that can build a large value from a small template is
  checked against ``max_size`` characters *before* it runs: the operators
  ``+``, ``*``, ``**`` and ``%``, ``~``, ``str.format``, the string methods
  and filters that pad, repeat, join or replace, container growth, each
  ``{{ }}`` output and the whole rendered text.  Constant folding while a
  template is compiled goes through the same checks (intercepted operators
  are never folded; folded filters are the checked ones).

Refusals raise :class:`jinja2.sandbox.SecurityError`; the renderer turns them
into :class:`~tripleo_flow.exceptions.InvalidTemplate` with the file and line.

Time is bounded too: each ``{% for %}`` iteration, call (macros included) and
filter checks the thread's deadline (:mod:`tripleo_flow.common.time_budget`), so
nested ``range(100000)`` loops stop with
:class:`~tripleo_flow.common.time_budget.TimeLimitExceeded` once the caller's
limit has passed.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

import jinja2
import jinja2.compiler
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError, modifies_known_mutable
from jinja2.utils import Namespace

from tripleo_flow.common import time_budget

#: Default of ``[limits] render_max_size``: 16 MiB characters.
DEFAULT_MAX_SIZE = 16 << 20

_PRINTF_NUMBERS = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_SPEC_NUMBERS = re.compile(r"\d+")
#: str methods whose result can be much larger than their arguments.
_PADDING = frozenset({"center", "ljust", "rjust", "zfill"})


def _ints(args: Iterable[Any]) -> int:
    return sum(a for a in args if isinstance(a, int) and not isinstance(a, bool) and a > 0)


class _Meter:
    """Sizes of values, in characters their text would take (an upper estimate).

    A container counts its items, recursively; shared items count each time
    they appear (their text is repeated), but each is walked once.  Sizes of
    the template's read-only input are remembered for the whole render.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.frozen: set[int] = set()
        self._frozen_sizes: dict[int, int] = {}

    def freeze(self, data: Any) -> None:
        """Mark every container in ``data`` read-only (the template's input)."""
        self.frozen.clear()
        self._frozen_sizes.clear()
        stack = [data]
        while stack:
            value = stack.pop()
            if isinstance(value, (dict, list, set)) and id(value) not in self.frozen:
                self.frozen.add(id(value))
                stack.extend(value.values() if isinstance(value, dict) else value)

    def size(self, value: Any) -> int:
        if isinstance(value, str):
            return len(value)
        return self._size(value, {})

    def _size(self, value: Any, memo: dict[int, int]) -> int:
        if isinstance(value, (str, bytes)):
            return len(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value.bit_length() // 3 + 1
        if isinstance(value, Namespace):
            value = value._Namespace__attrs  # type: ignore[attr-defined]
        if not isinstance(value, Collection):
            return 1
        key = id(value)
        if key in memo:
            return memo[key]
        if key in self._frozen_sizes:
            return self._frozen_sizes[key]
        memo[key] = 2  # a cycle prints as [...]
        items: Iterable[Any] = value
        if isinstance(value, Mapping):
            items = (x for pair in value.items() for x in pair)
        total = 2
        for item in items:
            total += self._size(item, memo) + 2
            if total > self.limit:
                break
        memo[key] = total
        if key in self.frozen:
            self._frozen_sizes[key] = total
        return total

    def check(self, size: int, what: str) -> None:
        if size > self.limit:
            raise SecurityError(
                f"{what} would build a value of about {size} characters, over the limit of "
                f"{self.limit} ([limits] render_max_size)"
            )

    def checked(self, value: Any, what: str) -> Any:
        self.check(self.size(value), what)
        return value

    def args(self, args: Iterable[Any], what: str) -> int:
        total = sum(self.size(a) for a in args)
        self.check(total, what)
        return total

    def collect(self, items: Iterator[Any], what: str) -> list[Any]:
        """``items`` (a generator) as a list, refused as soon as it grows over the limit."""
        out: list[Any] = []
        total = 2
        for item in items:
            total += self.size(item) + 2
            self.check(total, what)
            out.append(item)
        return out


def _binop_size(meter: _Meter, op: str, left: Any, right: Any) -> int:
    """An upper estimate of the size of ``left <op> right``, before computing it."""
    if op == "+":
        return meter.size(left) + meter.size(right)
    if op == "*":
        if isinstance(left, int) and isinstance(right, int):
            return meter.size(left) + meter.size(right)
        if isinstance(right, int):
            return meter.size(left) * max(right, 0)
        if isinstance(left, int):
            return meter.size(right) * max(left, 0)
        return 1
    if op == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0:
            return meter.size(left) * right
        return 1
    if op == "%" and isinstance(left, str):
        values = right.values() if isinstance(right, Mapping) else (
            right if isinstance(right, tuple) else (right,))
        widths = 0
        for match in _PRINTF_NUMBERS.finditer(left):
            for number in match.groups():
                if number == "*":
                    widths += _ints(values)
                elif number:
                    widths += int(number)
        return len(left) + widths + meter._size(right, {})
    return 1


class _CodeGenerator(jinja2.compiler.CodeGenerator):
    """Compiles ``a ~ b`` to the environment's checked concatenation, and loops to
    iterate through the deadline check."""

    def visit_For(self, node: jinja2.nodes.For, frame: jinja2.compiler.Frame) -> None:
        timed = jinja2.nodes.Call(jinja2.nodes.EnvironmentAttribute("timed_iter"),
                                  [node.iter], [], None, None, lineno=node.lineno)
        node = jinja2.nodes.For(node.target, timed, node.body, node.else_, node.test,
                                node.recursive, lineno=node.lineno)
        super().visit_For(node, frame)

    def visit_Concat(self, node: jinja2.nodes.Concat, frame: jinja2.compiler.Frame) -> None:
        if frame.eval_ctx.volatile or frame.eval_ctx.autoescape:
            super().visit_Concat(node, frame)
            return
        self.write("environment.checked_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class TemplateSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, where only the template's own containers may change."""

    code_generator_class = _CodeGenerator
    intercepted_binops = frozenset({"+", "*", "**", "%"})

    def __init__(self, *, max_size: int = DEFAULT_MAX_SIZE, **options: Any) -> None:
        super().__init__(**options)
        #: sizes, and the containers of the template's input (see :meth:`freeze`)
        self.meter = _Meter(max_size)
        self.finalize = self._finalize
        self.globals["lipsum"] = self._lipsum
        self.filters = {name: self._checked_filter(name, func)
                        for name, func in self.filters.items()}

    # -- what is reachable ---------------------------------------------------

    def freeze(self, data: Any) -> None:
        """Make the containers in ``data`` (the next render's input) read-only."""
        self.meter.freeze(data)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if id(obj) in self.meter.frozen:
            return super().is_safe_attribute(obj, attr, value)
        # the template's own list, dict or set: allowed to change
        return jinja2.sandbox.SandboxedEnvironment.is_safe_attribute(self, obj, attr, value)

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        """Refuse at once (jinja2 returns an undefined that prints as '')."""
        raise SecurityError(
            f"access to attribute {attribute!r} of a {type(obj).__name__!r} object is refused"
        )

    # -- time -----------------------------------------------------------------

    @staticmethod
    def timed_iter(items: Iterable[Any]) -> Iterator[Any]:
        """``items``, checking the deadline before each (every loop goes through it)."""
        return time_budget.checked_iter(items)

    # -- sizes ----------------------------------------------------------------

    def call_binop(self, context: jinja2.runtime.Context, operator: str,
                   left: Any, right: Any) -> Any:
        self.meter.check(_binop_size(self.meter, operator, left, right), f"operator {operator!r}")
        return self.binop_table[operator](left, right)

    def checked_concat(self, parts: tuple[Any, ...]) -> str:
        self.meter.args(parts, "operator '~'")
        return "".join(map(str, parts))

    def concat(self, pieces: Iterable[str]) -> str:  # type: ignore[override]
        """Join rendered pieces, refusing an output over the limit."""
        out: list[str] = []
        total = 0
        for piece in pieces:
            total += len(piece)
            self.meter.check(total, "the rendered output")
            out.append(piece)
        return "".join(out)

    def _finalize(self, value: Any) -> Any:
        if isinstance(value, str):
            return value
        if callable(value) and not isinstance(value, jinja2.Undefined):
            # its text is Python's repr, with the server's memory address in it
            raise SecurityError(f"printing a function ({type(value).__name__}) is refused: "
                                "call it to print what it returns")
        return self.meter.checked(value, "printing a value")

    def _lipsum(self, n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
        """jinja2's ``lipsum``, checked: about 12 characters a word."""
        self.meter.check(_ints([n]) * _ints([max, min]) * 12, "lipsum")
        return str(jinja2.utils.generate_lorem_ipsum(n=n, html=html, min=min, max=max))

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        inner = super().wrap_str_format(value)
        if inner is None:
            return None
        text: str = value.__self__
        widths = 0
        nested = False
        for _literal, _field, spec, _conv in string.Formatter().parse(text):
            if spec:
                nested = nested or "{" in spec
                widths += sum(int(n) for n in _SPEC_NUMBERS.findall(spec))

        def checked(*args: Any, **kwargs: Any) -> str:
            values = [*args, *kwargs.values()]
            if values and isinstance(values[0], Mapping) and value.__name__ == "format_map":
                values = list(values[0].values())
            extra = _ints(values) if nested else 0
            self.meter.check(len(text) + widths + extra + self.meter.args(values, "format"),
                             "str.format")
            return inner(*args, **kwargs)

        return checked

    def call(__self, __context: jinja2.runtime.Context, __obj: Any,  # noqa: N805
             *args: Any, **kwargs: Any) -> Any:
        time_budget.check()
        meter = __self.meter
        owner = getattr(__obj, "__self__", None)
        name = getattr(__obj, "__name__", "")
        if name == "join" and isinstance(owner, str) and args and isinstance(args[0], Iterator):
            args = (meter.collect(args[0], "str.join"), *args[1:])
        values = [*args, *kwargs.values()]
        if isinstance(owner, str) and name in _PADDING | {"expandtabs", "replace", "join"}:
            size = len(owner) + meter.args(values, f"str.{name}")
            if name in _PADDING:
                size += _ints(values[:1])
            elif name == "expandtabs":
                size += owner.count("\t") * _ints(values[:1] or [8])
            elif name == "replace" and len(values) >= 2:
                size += (owner.count(str(values[0])) + 1) * meter.size(values[1])
            elif name == "join" and values:
                size += len(owner) * len(values[0]) if isinstance(values[0], Collection) else 0
            meter.check(size, f"str.{name}")
        elif isinstance(owner, (list, dict, set)) and modifies_known_mutable(owner, name):
            meter.check(meter.size(owner) + meter.args(values, name), f"{name}()")
        return super().call(__context, __obj, *args, **kwargs)

    def _checked_filter(self, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
        pass_arg = getattr(func, "jinja_pass_arg", None)
        meter = self.meter
        what = f"filter {name!r}"

        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            time_budget.check()
            skip = 1 if pass_arg is not None else 0
            if len(args) > skip and isinstance(args[skip], Iterator):  # a generator: measure it
                args = (*args[:skip], meter.collect(args[skip], what), *args[skip + 1:])
            given = args[skip:]
            size = meter.args([*given, *kwargs.values()], what) + _filter_growth(
                meter, name, list(given), kwargs)
            meter.check(size, what)
            return meter.checked(func(*args, **kwargs), what)

        return checked


def _filter_growth(meter: _Meter, name: str, args: list[Any], kwargs: dict[str, Any]) -> int:
    """How much larger than its arguments the result of filter ``name`` may be."""
    value = args[0] if args else None
    rest = args[1:]
    lines = str(value).count("\n") + 1 if isinstance(value, str) else 1
    if name == "center":
        return _ints(rest[:1] or [kwargs.get("width", 80)])
    if name == "indent":
        width = rest[0] if rest else kwargs.get("width", 4)
        return lines * (len(width) if isinstance(width, str) else _ints([width]))
    if name == "replace" and len(rest) >= 2 and isinstance(value, str):
        return (value.count(str(rest[0])) + 1) * meter.size(rest[1])
    if name == "join":
        sep = rest[0] if rest else kwargs.get("d", "")
        count = len(value) if isinstance(value, Collection) else 0
        return meter.size(sep) * count
    if name == "format" and isinstance(value, str):
        return _binop_size(meter, "%", value, tuple(rest) or kwargs)
    if name in ("batch", "slice"):
        fill = rest[1] if len(rest) > 1 else kwargs.get("fill_with")
        return _ints(rest[:1]) * (meter.size(fill) + 2)
    if name == "wordwrap":
        wrap = kwargs.get("wrapstring") or (rest[2] if len(rest) > 2 else "\n")
        return meter.size(value) * meter.size(wrap)
    if name == "tojson":
        indent = kwargs.get("indent") or (rest[0] if rest else 0)
        return meter.size(value) * _ints([indent])
    if name == "pprint":
        return meter.size(value)
    return 0


__all__ = ["DEFAULT_MAX_SIZE", "TemplateSandbox", "SecurityError"]
