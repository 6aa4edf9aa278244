"""Benchmark: upload a template tree to Swift, ours against ``swift upload``.

Starts its own one-machine Swift (``tests/swift_server.py``), then uploads
the same tree with :meth:`SwiftStore.put_objects` (bulk extract-archive in
parallel chunks), with :meth:`SwiftStore.put_objects_single` (parallel single
PUTs) and with the ``swift`` CLI (``swift upload --object-threads N``, the
baseline), interleaving the runs.  Prints every timing, the medians and the
ratio ours / baseline (goal: at most 1.0)::

    python bench/plan_upload.py --tree /tmp/tht/tripleo-heat-templates-18.0.0

:func:`compare` and :func:`print_report` take plain callables so other
benchmarks (e.g. a whole ``plan create``) can reuse them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.swift_server import SwiftServer  # noqa: E402
from tripleo_flow.plans.swift import SwiftStore  # noqa: E402

Run = Callable[[str], None]


def compare(variants: Mapping[str, Run], repeat: int = 3,
            cleanup: Callable[[str], None] | None = None,
            verify: Callable[[str], None] | None = None) -> dict[str, list[float]]:
    """Time each variant ``repeat`` times, interleaved (A B C A B C ...).

    :param variants: name -> callable taking a fresh target name (a container
        or plan) to create; only the call is timed.
    :param cleanup: called with the target name after each run (not timed).
    :param verify: called with the target name after each run, before cleanup
        (not timed); raise to mark the run as wrong.
    :returns: name -> list of seconds, in run order.
    """
    timings: dict[str, list[float]] = {name: [] for name in variants}
    for rep in range(repeat):
        for index, (name, run) in enumerate(variants.items()):
            target = f"bench-{index}-{rep}-{time.monotonic_ns()}"
            start = time.perf_counter()
            run(target)
            elapsed = time.perf_counter() - start
            timings[name].append(elapsed)
            print(f"  {name:<28} run {rep + 1}: {elapsed:7.2f} s", flush=True)
            if verify is not None:
                verify(target)
            if cleanup is not None:
                cleanup(target)
    return timings


def print_report(timings: Mapping[str, list[float]], baseline: str) -> dict[str, float]:
    """Print medians and the ratio of each variant's median to the baseline's.

    :returns: name -> ratio (baseline is 1.0).
    """
    base = statistics.median(timings[baseline])
    ratios = {}
    print(f"\n{'variant':<30}{'median s':>10}{'min s':>9}{'ratio':>8}")
    for name, values in timings.items():
        median = statistics.median(values)
        ratios[name] = median / base
        print(f"{name:<30}{median:>10.2f}{min(values):>9.2f}{ratios[name]:>8.2f}")
    return ratios


def read_tree(tree: Path) -> dict[str, bytes]:
    """Every file under ``tree`` by its relative ``/``-separated name."""
    objects = {}
    for dirpath, _dirs, files in os.walk(tree):
        for filename in files:
            path = Path(dirpath, filename)
            objects[path.relative_to(tree).as_posix()] = path.read_bytes()
    return objects


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", required=True, type=Path, help="template tree to upload")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=8,
                        help="our upload threads and the CLI's --object-threads")
    parser.add_argument("--state-dir", help="Swift state dir (default: a temporary one)")
    args = parser.parse_args(argv)

    objects = read_tree(args.tree)
    entries = sorted(os.listdir(args.tree))
    print(f"tree {args.tree}: {len(objects)} files, "
          f"{sum(map(len, objects.values())) / 1e6:.1f} MB", flush=True)

    with SwiftServer(args.state_dir) as server:
        swift_cli = str(server.bin_dir / "swift")
        if not os.access(swift_cli, os.X_OK):
            raise SystemExit(f"{swift_cli} not found: install python-swiftclient in the Swift "
                             "venv (pip install python-swiftclient) for the baseline.")
        cli_env = dict(os.environ, **server.env_for_cli())
        store = SwiftStore(server.auth_url, server.user, server.key,
                           upload_threads=args.threads)

        def ours(container: str) -> None:
            store.create_container(container)
            store.put_objects(container, objects)

        def ours_single(container: str) -> None:
            store.create_container(container)
            store.put_objects_single(container, objects)

        def baseline(container: str) -> None:
            subprocess.run([swift_cli, "upload", "--object-threads", str(args.threads),
                            container, *entries], cwd=args.tree, env=cli_env, check=True,
                           stdout=subprocess.DEVNULL)

        def verify(container: str) -> None:
            count = len(store.list_objects(container))
            if count != len(objects):
                raise SystemExit(f"{container}: {count} objects stored, {len(objects)} expected")

        variants = {"ours (put_objects, bulk)": ours,
                    "ours (put_objects_single)": ours_single,
                    "swift upload (baseline)": baseline}
        timings = compare(variants, repeat=args.repeat, cleanup=store.delete_container,
                          verify=verify)
        ratios = print_report(timings, baseline="swift upload (baseline)")
        store.close()
    goal = ratios["ours (put_objects, bulk)"]
    print(f"\nours / baseline = {goal:.2f} (goal <= 1.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
