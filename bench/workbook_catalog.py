"""Loading (parsing and checking) a user workbook, against the YAML parse alone.

    python bench/workbook_catalog.py [--tasks 1000 10000]

``workflow list`` reads every workbook file when the catalog is built; this prints,
for a chain of N std.noop tasks, the seconds of the YAML parse alone and of the
whole load (parse, model, checks), and their ratio: checking should cost about as
much as parsing, growing linearly with N (it was quadratic: 10,000 tasks 49 s).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.unit.engine.lang.test_workbook_limits import workbook  # noqa: E402
from tripleo_flow.actions.registry import ActionRegistry  # noqa: E402
from tripleo_flow.engine.lang import workbook_loader  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    registry = ActionRegistry.load()
    limits = workbook_loader.WorkbookLimits(1 << 40, 1 << 40)
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.tasks:
            path = Path(tmp) / f"chain{count}.yaml"
            path.write_text(workbook(count, name=f"chain{count}"))
            start = time.perf_counter()
            yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            parsed = time.perf_counter() - start
            start = time.perf_counter()
            catalog = workbook_loader.load_catalog([], registry.classes(), registry.broken(),
                                                   extra_files=[path], limits=limits)
            loaded = time.perf_counter() - start
            problems = [p for e in catalog.entries.values() for p in e.problems]
            print(f"{count:6d} tasks: parse {parsed:6.2f} s, load {loaded:6.2f} s, "
                  f"ratio {loaded / parsed:5.1f}x, problems {len(problems)}")


if __name__ == "__main__":
    main()
