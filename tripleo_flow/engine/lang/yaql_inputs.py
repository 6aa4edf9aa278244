"""YAQL's frozen ``$``, each value of the context copied when the expression reads it.

Before it evaluates anything, YAQL copies the whole data it is given into frozen
containers (``convert_input_data``: every mapping a ``FrozenDict``, every list a
tuple, walked to the leaves), whatever the expression reads.  A workflow context
holds everything published so far, so each expression over it copied all of it: a
50-node import's ``with-items`` task, whose input is evaluated once per item over
its context plus that item (as Mistral does), copied its 50 node specs 50 times
(2,500 spec copies) before its first item could start, and each ``publish``,
transition and output copied the node list, the specs and the results again.

:func:`freeze` gives YAQL the same ``FrozenDict`` with each top-level value copied
when the expression first reads it (:class:`LazyFrozenDict`): the same keys in the
same order, and any value read equal to YAQL's own copy of it.  The copy is made
during the evaluation, from the data as it is then (an evaluation runs in one
thread; nothing changes its data meanwhile).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from yaql.language import utils


class LazyFrozenDict(utils.FrozenDict):  # type: ignore[misc]
    """``FrozenDict(convert_input_data(data))`` whose values are converted as read."""

    def __init__(self, data: Mapping[Any, Any]) -> None:
        # The keys converted now (a text key is itself), the values kept as they are.
        super().__init__((k if type(k) is str else utils.convert_input_data(k), v)
                         for k, v in data.items())
        self._copies: dict[Any, Any] = {}

    def __getitem__(self, key: Any) -> Any:
        try:
            return self._copies[key]
        except KeyError:
            pass
        copy = self._copies[key] = utils.convert_input_data(self._d[key])
        return copy

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self._d else default

    def __iter__(self) -> Iterator[Any]:
        return iter(self._d)

    def __repr__(self) -> str:
        return repr(dict(self.items()))


def freeze(data: Any) -> Any:
    """What YAQL's ``Statement.evaluate(data=...)`` sets ``$`` to: a plain ``dict`` as a
    :class:`LazyFrozenDict`, anything else converted at once."""
    if type(data) is dict:
        return LazyFrozenDict(data)
    return utils.convert_input_data(data)


__all__ = ["LazyFrozenDict", "freeze"]
