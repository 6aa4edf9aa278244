"""Simple YAQL expressions computed without YAQL's function dispatch.

YAQL runs every operator of an expression (``$``, ``.``, ``+``, ``<``...) as a
function call: it collects the overloads of that name through the context chain
and checks each one's parameter types, and ``$`` first converts the whole
context into frozen containers.  ``<% $.i + 1 %>`` costs ~0.3 ms that way: two
thirds of an iteration of a polling loop (a direct workflow whose transition
leads back to its task), and most of a ``with-items`` task's per-item cost.

:func:`compile` turns a parsed expression made only of ``$``, ``.name``,
literals, parentheses, ``+ - < <= > >= = != and or not`` and unary ``-`` into a
Python function.  It computes what YAQL computes in the cases where the one
overload YAQL picks is plain Python: a key present in a plain ``dict``, numbers
(never a bool) with numbers for arithmetic and ordering, plain values (text,
numbers, booleans, null) for equality, truth and ``and``/``or``.  Anything else
(a missing key, a list as an operand, null in an ordering, a bool in arithmetic, a
value over YAQL's memory quota) gives :data:`UNSURE`, and the caller evaluates the
expression with YAQL, which gives its own result or error.

A container read whole (``<% $.specs %>``, ``<% $.node %>``: a ``with-items``
task's input per item) is what YAQL gives too, given the limits
(:func:`compile`'s ``max_items``): YAQL's copy (a new ``dict`` or ``list`` at every
level, the same plain values), when every mapping in it is a plain ``dict`` of text
keys, every sequence a plain ``list``, every other value plain, no container
holds more than ``max_items`` entries (YAQL's ``CollectionTooLargeException``)
and none is near the memory quota (YAQL checks each container it walks).
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from typing import Any

from yaql.language import expressions as yx

#: What a compiled expression gives when YAQL itself must evaluate it.
UNSURE = object()

#: The plain values an operand or a result may be (exact types: no subclasses).
_PLAIN: frozenset[type] = frozenset({str, int, float, bool, type(None)})
_NUMBER: frozenset[type] = frozenset({int, float})

_ORDER = {"#operator_<": operator.lt, "#operator_<=": operator.le,
          "#operator_>": operator.gt, "#operator_>=": operator.ge}
_ARITHMETIC = {"#operator_+": operator.add, "#operator_-": operator.sub}
_EQUALITY = {"*equal": operator.eq, "*not_equal": operator.ne}

#: A compiled node: (data, memory quota) -> its value, or raises _Unsure.
_Node = Callable[[Any, int], Any]


class _Unsure(Exception):
    """Raised inside a compiled expression: YAQL must evaluate it."""


class _NotSimple(Exception):
    """Raised while compiling: the expression is outside the simple subset."""


def compile(expression: Any, max_items: int | None = None
            ) -> Callable[[Any, int], Any] | None:
    """A function ``(data, memory quota) -> value or UNSURE`` computing the parsed
    YAQL ``expression`` over ``data`` as YAQL does, or None when the expression is
    not of the simple kind (see the module).

    :param max_items: YAQL's ``yaql.limitIterators`` (negative: none); None: a
        container as the result is left to YAQL"""
    if not isinstance(expression, yx.Statement):
        return None
    try:
        node = _compile(expression.expression)
    except (_NotSimple, RecursionError):
        return None

    def run(data: Any, quota: int) -> Any:
        try:
            value = node(data, quota)
            if type(value) in _CONTAINERS and max_items is not None:
                return _copy(value, quota, max_items)
            return _plain(value, quota)
        except (_Unsure, RecursionError):
            return UNSURE

    return run


#: The containers a result may be (exact types).
_CONTAINERS: frozenset[type] = frozenset({dict, list})
#: Bytes per entry, and per container, above a container's size as YAQL measures it
#: (``sys.getsizeof`` of its tuple, FrozenDict, items or output ``dict``/``list``: at
#: most 64 per entry plus 120 on CPython 3.11, from 0 to 5,000 entries).
_ENTRY_BYTES, _CONTAINER_BYTES = 64, 256


def _copy(value: Any, quota: int, max_items: int) -> Any:
    """YAQL's output for the container ``value`` read from the data (a copy of it),
    or raises _Unsure (see the module)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind not in _CONTAINERS or 0 <= max_items < len(value) or (
            quota > 0 and _ENTRY_BYTES * len(value) + _CONTAINER_BYTES > quota):
        raise _Unsure
    if kind is list:
        return [_copy(item, quota, max_items) for item in value]
    if any(type(key) is not str for key in value):
        raise _Unsure
    return {key: _copy(item, quota, max_items) for key, item in value.items()}


def _plain(value: Any, quota: int) -> Any:
    """``value`` when it is a plain value within the quota YAQL checks every function's
    result against; else YAQL must compute it."""
    if type(value) not in _PLAIN or (quota > 0 and sys.getsizeof(value, 0) > quota):
        raise _Unsure
    return value


def _compile(node: Any) -> _Node:
    kind = type(node)
    if kind is yx.Wrap:
        return _compile(node.expr)
    if kind is yx.Constant:
        value = node.value
        if type(value) not in _PLAIN:
            raise _NotSimple
        return lambda _data, _quota: value
    if kind is yx.GetContextValue:
        path = node.path
        if type(path) is not yx.Constant or path.value != "$":
            raise _NotSimple
        return lambda data, _quota: data
    if kind is yx.BinaryOperator:
        return _binary(node)
    if kind is yx.UnaryOperator:
        return _unary(node)
    raise _NotSimple


def _binary(node: Any) -> _Node:
    name, (left_node, right_node) = node.name, node.args
    if name == "#operator_.":
        if type(right_node) is not yx.KeywordConstant or not isinstance(right_node.value, str):
            raise _NotSimple
        receiver, key = _compile(left_node), right_node.value

        def attribute(data: Any, quota: int) -> Any:
            mapping = receiver(data, quota)
            if type(mapping) is not dict or key not in mapping:
                raise _Unsure
            value = mapping[key]
            # A container goes on to the next ``.`` (a dict) or is the result (run).
            return value if type(value) in _CONTAINERS else _plain(value, quota)

        return attribute
    left, right = _compile(left_node), _compile(right_node)
    if name in ("#operator_and", "#operator_or"):
        stop_when = name == "#operator_or"

        def logical(data: Any, quota: int) -> Any:
            first = _plain(left(data, quota), quota)
            if bool(first) is stop_when:
                return first
            return _plain(right(data, quota), quota)

        return logical
    for table, kinds in ((_ARITHMETIC, _NUMBER), (_ORDER, _NUMBER), (_EQUALITY, _PLAIN)):
        func = table.get(name)
        if func is not None:
            return _operation(func, left, right, kinds)
    raise _NotSimple


def _operation(func: Callable[[Any, Any], Any], left: _Node, right: _Node,
               kinds: frozenset[type]) -> _Node:
    def run(data: Any, quota: int) -> Any:
        a, b = left(data, quota), right(data, quota)
        if type(a) not in kinds or type(b) not in kinds:
            raise _Unsure
        return _plain(func(a, b), quota)

    return run


def _unary(node: Any) -> _Node:
    operand = _compile(node.args[0])
    if node.name == "#unary_operator_not":
        return lambda data, quota: not _plain(operand(data, quota), quota)
    if node.name == "#unary_operator_-":
        def negative(data: Any, quota: int) -> Any:
            value = operand(data, quota)
            if type(value) not in _NUMBER:
                raise _Unsure
            return -value

        return negative
    raise _NotSimple
