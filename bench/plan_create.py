"""Benchmark: ``plan create`` of a real template tree into Swift, against
``swift upload --object-threads 8`` of the same tree, in the same run.

``plan create`` does more than the upload (reads and checks every YAML file,
renders the j2 templates, generates passwords, writes plan-environment.yaml):
the goal (issue 31) is that all of it costs at most 0.6x the CLI's bare upload
(ratio <= 0.6); at 1.0 it costs as much::

    python bench/plan_create.py                 # tripleo-heat-templates 18.0.0
    python bench/plan_create.py --version 12.1.0 --repeat 5

Both write to the same Swift (one process per server).  Besides the times it
prints the CPU seconds each run cost, by process (this one or the ``swift``
CLI, and each Swift server), and their ratio: on a machine other work keeps
busy the times follow the share of the cores each run gets, the CPU seconds
much less so.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.plan_upload import compare, print_report  # noqa: E402
from tests.fixtures_plans import make_client  # noqa: E402
from tests.swift_server import SwiftServer  # noqa: E402
from tripleo_flow.plans.swift import SwiftStore  # noqa: E402

CLIENT = "client"
"""The CPU of this process and of the commands it ran (the ``swift`` CLI)."""


def fetch_tree(version: str) -> Path:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "fetch_tht.py"), version],
                         check=True, capture_output=True, text=True).stdout
    return Path(out.strip().splitlines()[-1])


def cpu_seconds(server: SwiftServer) -> dict[str, float]:
    """CPU seconds (user + system) used so far by the client and each Swift server."""
    used: dict[str, float] = {}
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)  # children: those waited for (the CLI runs)
        used[CLIENT] = used.get(CLIENT, 0.0) + usage.ru_utime + usage.ru_stime
    tick = os.sysconf("SC_CLK_TCK")
    for name, pid in server.server_pids.items():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        used[name] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return used


def with_cpu(server: SwiftServer, run: Callable[[str], None],
             record: list[dict[str, float]]) -> Callable[[str], None]:
    """``run``, appending to ``record`` the CPU seconds each call cost, by process."""
    def measured(target: str) -> None:
        before = cpu_seconds(server)
        run(target)
        after = cpu_seconds(server)
        record.append({name: after[name] - before[name] for name in after})
    return measured


def print_cpu(cpu: Mapping[str, list[dict[str, float]]], baseline: str,
              count: int) -> float:
    """Print the median CPU seconds of each variant by process, per file too;
    return the ratio of the first variant's total to the baseline's."""
    names = list(next(iter(cpu.values()))[0])
    print(f"\n{'CPU seconds (median)':<30}" + "".join(f"{n:>10}" for n in names)
          + f"{'total':>9}{'ms/file':>9}")
    totals = {}
    for variant, runs in cpu.items():
        medians = [statistics.median(run[n] for run in runs) for n in names]
        totals[variant] = statistics.median(sum(run.values()) for run in runs)
        print(f"{variant:<30}" + "".join(f"{m:>10.2f}" for m in medians)
              + f"{totals[variant]:>9.2f}{1000 * totals[variant] / count:>9.2f}")
    first = next(iter(cpu))
    return totals[first] / totals[baseline]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--version", default="18.0.0", help="tripleo-heat-templates version")
    parser.add_argument("--tree", type=Path, help="a template tree (instead of --version)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args(argv)

    tree = args.tree or fetch_tree(args.version)
    count = sum(len(files) for _, _, files in os.walk(tree))
    print(f"tree {tree}: {count} files", flush=True)
    entries = sorted(os.listdir(tree))
    with tempfile.TemporaryDirectory() as tmp, SwiftServer() as server:
        store = SwiftStore(server.auth_url, server.user, server.key,
                           upload_threads=args.threads)
        client = make_client(Path(tmp), store)
        swift_cli = str(server.bin_dir / "swift")
        cli_env = dict(os.environ, **server.env_for_cli())

        def plan_create(name: str) -> None:
            client.plans.create(name, tree)

        def swift_upload(name: str) -> None:
            subprocess.run([swift_cli, "upload", "--object-threads", str(args.threads),
                            name, *entries], cwd=tree, env=cli_env, check=True,
                           stdout=subprocess.DEVNULL)

        def verify(name: str) -> None:
            stored = len(store.list_objects(name))
            if stored < count:
                raise SystemExit(f"{name}: {stored} objects stored, at least {count} expected")

        variants = {"tripleo-flow plan create": plan_create,
                    "swift upload (baseline)": swift_upload}
        cpu: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        timings = compare({name: with_cpu(server, run, cpu[name])
                           for name, run in variants.items()},
                          repeat=args.repeat, cleanup=store.delete_container, verify=verify)
        ratios = print_report(timings, baseline="swift upload (baseline)")
        cpu_ratio = print_cpu(cpu, "swift upload (baseline)", count)
        client.close()
        store.close()
    print(f"\nplan create / swift upload = {ratios['tripleo-flow plan create']:.2f} "
          f"(goal <= 0.6); in CPU seconds {cpu_ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
