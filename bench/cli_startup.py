"""Benchmark: start-up of ``tripleo-flow`` commands, against ``python -c pass`` and
``openstack --version``.

    python bench/cli_startup.py [--repeat 10]

Makes a local store in a temporary directory with the sample plan (not timed),
then runs each command ``--repeat`` times, interleaved (A B C ... A B C ...), as
separate processes of this tree (``python -m tripleo_flow.cli.main``; ``--tree``
names another checkout): ``--help``,
``plan list``, ``plan show``, ``parameters show``.  The baselines run in the same
loop: ``python -c pass`` (the interpreter alone) and ``openstack --version`` (the
command TripleO operators know, from the virtualenv of this Python), or, when the
openstack client is not installed there, ``python -c 'import yaml'``.

Bytecode is cached as for an installed package (``PYTHONDONTWRITEBYTECODE`` is
dropped; the cache goes to a temporary ``PYTHONPYCACHEPREFIX``, never into a tree)
and each command runs once untimed first, so compiling is not measured.

Prints every run's wall-clock and CPU seconds (user + system, of the child), then
the medians and each median's ratio to the baseline's.  A command that reads a plan
should cost about what ``openstack --version`` costs (the issue's goal: under 0.3 s
of CPU on an idle machine); ``tests/unit/test_cli_startup.py`` keeps the workflow
engine out of such commands, this measures what they still cost.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Name -> arguments of the ``tripleo-flow`` commands timed (after ``--config-file``).
COMMANDS: dict[str, tuple[str, ...]] = {
    "tripleo-flow --help": ("--help",),
    "tripleo-flow plan list": ("plan", "list", "-f", "json"),
    "tripleo-flow plan show": ("plan", "show", "overcloud", "-f", "json"),
    "tripleo-flow parameters show": ("parameters", "show", "--plan", "overcloud", "-f", "json"),
}


def baselines(python: str) -> dict[str, list[str]]:
    """The baseline commands: the interpreter alone, then ``openstack --version`` (or
    ``import yaml`` when the openstack client is not beside ``python``)."""
    found = {"python -c pass": [python, "-c", "pass"]}
    openstack = shutil.which("openstack", path=os.path.dirname(python))
    if openstack:
        found["openstack --version"] = [openstack, "--version"]
    else:
        found["python -c 'import yaml'"] = [python, "-c", "import yaml"]
    return found


def timed(argv: Sequence[str], env: Mapping[str, str]) -> tuple[float, float]:
    """Run ``argv`` to its end; its wall-clock and CPU (user + system) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def compare(variants: Mapping[str, Sequence[str]], env: Mapping[str, str],
            repeat: int) -> dict[str, list[tuple[float, float]]]:
    """Time each variant ``repeat`` times, interleaved; name -> [(wall, cpu)] in run order."""
    timings: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for rep in range(repeat):
        for name, argv in variants.items():
            wall, cpu = timed(argv, env)
            timings[name].append((wall, cpu))
            print(f"  {name:<32} run {rep + 1}: wall {wall:6.3f} s  cpu {cpu:6.3f} s",
                  flush=True)
    return timings


def print_report(timings: Mapping[str, list[tuple[float, float]]], baseline: str) -> None:
    """Medians of wall and CPU seconds, and each one's ratio to ``baseline``'s."""
    base_wall = statistics.median(w for w, _ in timings[baseline])
    base_cpu = statistics.median(c for _, c in timings[baseline])
    print(f"\n{'command':<34}{'wall s':>8}{'ratio':>7}{'cpu s':>8}{'ratio':>7}{'min cpu':>9}")
    for name, values in timings.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(f"{name:<34}{wall:>8.3f}{wall / base_wall:>7.2f}{cpu:>8.3f}"
              f"{cpu / base_cpu:>7.2f}{min(c for _, c in values):>9.3f}")
    print(f"(ratios against {baseline})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=10, help="runs of each command")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter of the virtualenv to measure (default: this one)")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="source tree whose tripleo_flow is measured (default: this "
                        "one; another checkout gives the figures before a change)")
    args = parser.parse_args(argv)

    print(f"tree {args.tree}, {args.repeat} runs each", flush=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(args.tree)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    with tempfile.TemporaryDirectory(prefix="cli-startup-") as tmp:
        conf = Path(tmp) / "tripleo-flow.conf"
        conf.write_text(f"[DEFAULT]\ndata_dir = {Path(tmp) / 'data'}\n")
        env["HOME"] = str(Path(tmp) / "home")
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cli = [args.python, "-m", "tripleo_flow.cli.main", "--config-file", str(conf)]
        print("creating the sample plan (not timed) ...", flush=True)
        timed([*cli, "plan", "create", "overcloud", "--sample"], env)

        variants = {name: list(argv) for name, argv in baselines(args.python).items()}
        variants.update({name: [*cli, *command] for name, command in COMMANDS.items()})
        for argv in variants.values():  # untimed: bytecode written, files cached
            timed(argv, env)
        timings = compare(variants, env, args.repeat)
    print_report(timings, list(variants)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
