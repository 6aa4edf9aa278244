"""How many cases each property-based suite ran, printed at the end of the test run.

A suite adds to :data:`CASES` under its own name; the pytest plugin hook below
prints the totals (``fuzz cases: <suite> <count>``) in the terminal summary, so
a CI log says how much was tried, not only that nothing failed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

#: Cases run so far, by suite name.
CASES: Counter[str] = Counter()


def count(suite: str, n: int = 1) -> None:
    CASES[suite] += n


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not CASES:
        return
    terminalreporter.section("property-based cases")
    for suite, n in sorted(CASES.items()):
        terminalreporter.write_line(f"fuzz cases: {suite} {n}")
    terminalreporter.write_line(f"fuzz cases: total {sum(CASES.values())}")
