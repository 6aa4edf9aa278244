"""Benchmark: start-up of ``tripleo-flow`` commands, against ``python -c pass`` and
``openstack --version``.

    python bench/cli_startup.py [--repeat 10] [--against OTHER_CHECKOUT]

Makes a local store in a temporary directory with the sample plan and a few
executions (not timed), then runs each command ``--repeat`` times, interleaved
(A B C ... A B C ...), as separate processes of this tree (``python -m
tripleo_flow.cli.main``; ``--tree`` names another checkout): ``--help``, ``help``,
``plan list --help``, ``plan list``, ``plan show``, ``parameters show``,
``execution list``, ``execution show``, ``workflow list`` and ``parameters set`` (a
command that runs a workflow).  The baselines run in the same loop: ``python -c
pass`` (the interpreter alone) and ``openstack --version`` (the command TripleO
operators know, from the virtualenv of this Python), or, when the openstack client
is not installed there, ``python -c 'import yaml'``.  ``--against`` runs every
command of another checkout (the tree before a change) in the same loop too, on the
same store, and prints each command's ratio to its run there.

Bytecode is cached as for an installed package (``PYTHONDONTWRITEBYTECODE`` is
dropped; the cache goes to a temporary ``PYTHONPYCACHEPREFIX``, never into a tree)
and each command runs once untimed first, so compiling is not measured, nor the
first build of stevedore's entry point cache (under the temporary HOME, keyed by
the Python path and the times of its directories: ``python -m`` puts the working
directory first, here the temporary one, which stays unchanged once the store is
made; timed by hand from a directory others write to, such as /tmp, a command may
rebuild it every run: 0.17 s more of CPU here).

Prints every run's wall-clock and CPU seconds (user + system, of the child), then
the medians and each median's ratio to the baseline's.  A command that reads a plan
should cost about what ``openstack --version`` costs (the issue's goal: under 0.3 s
of CPU on an idle machine); ``tests/functional/cli/test_cli_startup.py`` keeps the workflow
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

#: Name -> arguments of the ``tripleo-flow`` commands timed (after ``--config-file``);
#: ``{execution}`` is the id of an execution of the store.
COMMANDS: dict[str, tuple[str, ...]] = {
    "--help": ("--help",),
    "help": ("help",),
    "plan list --help": ("plan", "list", "--help"),
    "plan list": ("plan", "list", "-f", "json"),
    "plan show": ("plan", "show", "overcloud", "-f", "json"),
    "parameters show": ("parameters", "show", "--plan", "overcloud", "-f", "json"),
    "execution list": ("execution", "list", "-f", "json"),
    "execution show": ("execution", "show", "{execution}", "-f", "json"),
    "workflow list": ("workflow", "list", "-f", "json"),
    "parameters set (workflow)": ("parameters", "set", "--plan", "overcloud",
                                  "ComputeCount=1", "-f", "json"),
}

#: Executions made before timing (besides the plan's creation).
SETUP_RUNS = 3


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


def compare(variants: Mapping[str, tuple[Sequence[str], Mapping[str, str]]],
            repeat: int) -> dict[str, list[tuple[float, float]]]:
    """Time each variant (its argv and environment) ``repeat`` times, interleaved;
    name -> [(wall, cpu)] in run order."""
    timings: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for rep in range(repeat):
        for name, (argv, env) in variants.items():
            wall, cpu = timed(argv, env)
            timings[name].append((wall, cpu))
            print(f"  {name:<40} run {rep + 1}: wall {wall:6.3f} s  cpu {cpu:6.3f} s",
                  flush=True)
    return timings


def print_report(timings: Mapping[str, list[tuple[float, float]]], baseline: str,
                 against: Mapping[str, str] | None = None) -> None:
    """Medians of wall and CPU seconds, and each one's ratio to ``baseline``'s (and,
    for a command of this tree, to its CPU median in the other tree: ``against`` maps
    its name to that variant's)."""
    base_wall = statistics.median(w for w, _ in timings[baseline])
    base_cpu = statistics.median(c for _, c in timings[baseline])
    print(f"\n{'command':<42}{'wall s':>8}{'ratio':>7}{'cpu s':>8}{'ratio':>7}"
          f"{'min cpu':>9}{'/other':>8}")
    for name, values in timings.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        other = ""
        if against and name in against:
            other = f"{cpu / statistics.median(c for _, c in timings[against[name]]):>8.2f}"
        print(f"{name:<42}{wall:>8.3f}{wall / base_wall:>7.2f}{cpu:>8.3f}"
              f"{cpu / base_cpu:>7.2f}{min(c for _, c in values):>9.3f}{other}")
    print(f"(ratios against {baseline}; /other: CPU against the same command of the "
          "other tree)" if against else f"(ratios against {baseline})")


def tree_env(base: Mapping[str, str], tree: Path) -> dict[str, str]:
    """``base`` with ``tree`` first on the Python path."""
    return dict(base, PYTHONPATH=os.pathsep.join(
        [str(tree)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


def first_execution(cli: Sequence[str], env: Mapping[str, str]) -> str:
    """The id of the store's first execution."""
    done = subprocess.run([*cli, "execution", "list", "-f", "value", "-c", "ID"], env=env,
                          capture_output=True, text=True, check=True)
    return done.stdout.split()[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=10, help="runs of each command")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter of the virtualenv to measure (default: this one)")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="source tree whose tripleo_flow is measured (default: this "
                        "one; another checkout gives the figures before a change)")
    parser.add_argument("--against", type=Path, default=None, metavar="OTHER_TREE",
                        help="another checkout (the tree before a change) whose commands "
                        "run in the same loop, on the same store")
    args = parser.parse_args(argv)

    print(f"tree {args.tree}, {args.repeat} runs each"
          + (f", against {args.against}" if args.against else ""), flush=True)
    with tempfile.TemporaryDirectory(prefix="cli-startup-") as tmp:
        conf = Path(tmp) / "tripleo-flow.conf"
        conf.write_text(f"[DEFAULT]\ndata_dir = {Path(tmp) / 'data'}\n")
        base = dict(os.environ, HOME=str(Path(tmp) / "home"),
                    PYTHONPYCACHEPREFIX=str(Path(tmp) / "pycache"))
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        env = tree_env(base, args.tree)
        # ``python -m`` puts its working directory first on the path: run from the
        # temporary one, so each command runs the tree its PYTHONPATH names.
        here = os.getcwd()
        os.chdir(tmp)
        cli = [args.python, "-m", "tripleo_flow.cli.main", "--config-file", str(conf)]
        print("creating the sample plan and a few executions (not timed) ...", flush=True)
        timed([*cli, "plan", "create", "overcloud", "--sample"], env)
        for count in range(SETUP_RUNS):
            timed([*cli, "parameters", "set", "--plan", "overcloud", f"ComputeCount={count}"],
                  env)
        execution = first_execution(cli, env)

        variants: dict[str, tuple[Sequence[str], Mapping[str, str]]] = {
            name: (argv, env) for name, argv in baselines(args.python).items()}
        trees = [("", env)] + ([(" [other]", tree_env(base, args.against))]
                               if args.against else [])
        against = {}
        for name, command in COMMANDS.items():
            argv = [*cli, *(a.format(execution=execution) for a in command)]
            for suffix, tree in trees:
                variants[f"{name}{suffix}"] = (argv, tree)
                if suffix:
                    against[name] = f"{name}{suffix}"
        for argv, variant_env in variants.values():  # untimed: bytecode written, files cached
            timed(argv, variant_env)
        timings = compare(variants, args.repeat)
        os.chdir(here)
    print_report(timings, list(variants)[1], against)
    return 0

if __name__ == "__main__":
    sys.exit(main())
