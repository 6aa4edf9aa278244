"""TaskFlow's argument mapping without inspecting a signature per atom.

A TaskFlow atom works out, when it is built, which arguments its ``execute``
and ``revert`` take: three ``inspect.signature`` calls on each bound method,
~0.1 ms an atom.  A workbook of 10,000 tasks builds 10,000 atoms.
:class:`CachedSignatures` hands TaskFlow's mapping a stand-in carrying the
bound method's signature, computed once per function: TaskFlow's own mapping
code runs on the same signature, so the mapping and its errors are the same.
A function that takes
any keyword and no named argument of its own (a workbook atom's ``execute``,
its ``revert`` once TaskFlow's ignored ``result`` and ``flow_failures`` are
left out) takes each requirement as it is named, with nothing optional: that
mapping is written out directly, the requirements being the atom's own.
"""

from __future__ import annotations

import collections
import inspect
import weakref
from collections.abc import Callable
from typing import Any

from taskflow.types import sets

#: function -> stand-in with that function's bound signature (classes built at run
#: time, ad-hoc actions, take their entries with them when they go).
_STANDINS: weakref.WeakKeyDictionary[Any, Callable[..., Any]] = weakref.WeakKeyDictionary()
#: stand-in -> {ignore_list: whether it takes any keyword and nothing else named}.
_ANY_KEYWORD: weakref.WeakKeyDictionary[Any, dict[Any, bool]] = weakref.WeakKeyDictionary()


def _standin(signature: inspect.Signature) -> Callable[..., Any]:
    def inspected_only(*_args: Any, **_kwargs: Any) -> Any:
        raise TypeError("a signature stand-in is only inspected, never called")

    inspected_only.__signature__ = signature  # type: ignore[attr-defined]
    return inspected_only


def bound_signature(method: Any) -> Any:
    """A callable whose signature is ``method``'s (a bound method: without its first
    parameter), cached per underlying function; anything else as given."""
    func = getattr(method, "__func__", None)
    if func is None or getattr(method, "__self__", None) is None:
        return method
    try:
        return _STANDINS[func]
    except (KeyError, TypeError):
        pass
    standin = _standin(inspect.signature(method))
    try:
        _STANDINS[func] = standin
    except TypeError:  # not weakly referenceable: not cached
        pass
    return standin


def _any_keyword(standin: Any, ignore_list: Any) -> bool:
    """Whether the function takes any keyword and no named argument but ignored ones
    (worked out once per function and ignore list: every workbook atom asks, twice)."""
    known = _ANY_KEYWORD.setdefault(standin, {})
    key = tuple(ignore_list or ())
    answer = known.get(key)
    if answer is None:
        params = standin.__signature__.parameters.values()
        answer = known[key] = any(p.kind is p.VAR_KEYWORD for p in params) and all(
            p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or p.name in key for p in params)
    return answer


class CachedSignatures:
    """Mixin for TaskFlow atoms: their argument mapping inspects each function once."""

    def _build_arg_mapping(self, executor: Any, requires: Any = None, rebind: Any = None,
                           auto_extract: bool = True, ignore_list: Any = None) -> Any:
        standin = bound_signature(executor)
        build = super()._build_arg_mapping  # type: ignore[misc]
        if standin is not executor and rebind is None and not getattr(self, "inject", None):
            if isinstance(requires, (list, tuple)) and _any_keyword(standin, ignore_list):
                return (collections.OrderedDict((r, r) for r in requires),
                        sets.OrderedSet(requires), sets.OrderedSet())
        return build(standin, requires=requires, rebind=rebind, auto_extract=auto_extract,
                     ignore_list=ignore_list)
