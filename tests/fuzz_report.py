"""How many cases each property-based suite ran, printed at the end of the test run.

A suite adds to :data:`CASES` under its own name; the pytest plugin hook below
prints the totals (``fuzz cases: <suite> <count>``) in the terminal summary, so
a CI log says how much was tried, not only that nothing failed; under pytest-xdist
(``-n 2``) each worker sends its counts to the controlling process, which prints them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

#: Cases run so far, by suite name.
CASES: Counter[str] = Counter()


def count(suite: str, n: int = 1) -> None:
    CASES[suite] += n


def pytest_sessionfinish(session: Any) -> None:
    """In a pytest-xdist worker: its counts go back to the controlling process."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["fuzz_cases"] = dict(CASES)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """In pytest-xdist's controlling process: a worker's counts added (the hook is
    only called there; without pytest-xdist, never)."""
    CASES.update(getattr(node, "workeroutput", {}).get("fuzz_cases", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not CASES:
        return
    terminalreporter.section("property-based cases")
    for suite, n in sorted(CASES.items()):
        terminalreporter.write_line(f"fuzz cases: {suite} {n}")
    terminalreporter.write_line(f"fuzz cases: total {sum(CASES.values())}")
