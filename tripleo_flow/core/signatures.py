"""TaskFlow's argument mapping without inspecting a signature per atom.

A TaskFlow atom works out, when it is built, which arguments its ``execute``
and ``revert`` take: three ``inspect.signature`` calls on each bound method,
~0.1 ms an atom.  A workbook of 10,000 tasks builds 10,000 atoms, and each of
its tasks builds its action (another atom) when it runs.
:class:`CachedSignatures` hands TaskFlow's mapping a stand-in carrying the
bound method's signature, computed once per function: TaskFlow's own mapping
code runs on the same signature, so the mapping and its errors are the same.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any

#: function -> stand-in with that function's bound signature (classes built at run
#: time, ad-hoc actions, take their entries with them when they go).
_STANDINS: weakref.WeakKeyDictionary[Any, Callable[..., Any]] = weakref.WeakKeyDictionary()


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


class CachedSignatures:
    """Mixin for TaskFlow atoms: their argument mapping inspects each function once."""

    def _build_arg_mapping(self, executor: Any, *args: Any, **kwargs: Any) -> Any:
        return super()._build_arg_mapping(  # type: ignore[misc]
            bound_signature(executor), *args, **kwargs)
