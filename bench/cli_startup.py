"""Benchmark: start-up of ``tripleo-flow`` commands, against ``python -c pass`` and
``openstack --version``.

    python bench/cli_startup.py [--repeat 10] [--against OTHER_CHECKOUT]

Makes a local store in a temporary directory with the sample plan and a few
executions (not timed), then runs each command ``--repeat`` times, interleaved
(A B C ... A B C ...), as separate processes of this tree (through
:data:`WRAPPER`; ``--tree`` names another checkout): ``--help``, ``help``, ``plan
list --help``, ``plan list``, ``plan show``, ``parameters show``, ``execution
list``, ``execution show``, ``workflow list``, and ``parameters set`` and ``password
rotate`` (commands that run a workflow).  The baselines run in the same loop:
``python -c pass`` (the interpreter alone); ``openstack --version`` (the command
TripleO operators know, from the virtualenv of this Python) or, when the openstack
client is not installed there, ``python -c 'import yaml'``; and the floor of a command
that runs a workflow (:data:`ENGINE_FLOOR`: importing TaskFlow's engine, SQLAlchemy
and networkx).  ``--against`` runs every command of another checkout (the tree
before a change) in the same loop too, on the
same store, and prints each command's ratio to its run there.

Bytecode is cached as for an installed package (``PYTHONDONTWRITEBYTECODE`` is
dropped; the cache goes to a temporary ``PYTHONPYCACHEPREFIX``, never into a tree)
and each command runs once untimed first, so compiling is not measured, nor the
first build of stevedore's entry point cache (under the temporary HOME, keyed by
the Python path and the times of its directories: ``python -m`` puts the working
directory first, here the temporary one, which stays unchanged once the store is
made; timed by hand from a directory others write to, such as /tmp, a command may
rebuild it every run: 0.17 s more of CPU here).

Each command runs through :data:`WRAPPER`, a ``python -c`` program that runs the
CLI as its console script does, having noted the process's CPU seconds when cliff
enters the command's ``run`` (which calls its ``take_action``): the command's
*start-up*, everything before its own work (the interpreter, cliff, the command's
module, parsing its arguments).  ``--help`` and a command's ``--help`` never
enter a command: they are start-up alone, and so are the baselines.

Prints every run's wall-clock and CPU seconds (user + system, of the child) and
start-up CPU, then the medians and each median's ratio to the baseline's CPU (and,
with ``--against``, to the same command of the other tree).  Every command's
start-up should cost about what ``openstack --version`` costs (the issue's goal:
under 0.3 s of CPU on an idle machine); ``tests/functional/cli/test_cli_startup.py``
keeps the workflow engine out of the commands that do not run a workflow, this
measures what they still cost.
"""

from __future__ import annotations

import argparse
import ast
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
from typing import NamedTuple

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
    "password rotate (workflow)": ("password", "rotate", "--plan", "overcloud",
                                   "-f", "json"),
}

#: Executions made before timing (besides the plan's creation).
SETUP_RUNS = 3


#: What a command that runs a workflow cannot do without: TaskFlow's engine with its
#: SQLAlchemy persistence (alembic left unloaded, as the engine's store does) and
#: networkx, exiting as the console script does (no teardown).
ENGINE_FLOOR = ("import taskflow.engines.action_engine.engine, taskflow.patterns.graph_flow, "
                "sqlalchemy, networkx, tripleo_flow.engine.store.taskflow_persistence, os; "
                "os._exit(0)")


def baselines(python: str) -> dict[str, list[str]]:
    """The baseline commands: the interpreter alone, then ``openstack --version`` (or
    ``import yaml`` when the openstack client is not beside ``python``), then the
    :data:`ENGINE_FLOOR` of a workflow-running command."""
    found = {"python -c pass": [python, "-c", "pass"]}
    openstack = shutil.which("openstack", path=os.path.dirname(python))
    if openstack:
        found["openstack --version"] = [openstack, "--version"]
    else:
        found["python -c 'import yaml'"] = [python, "-c", "import yaml"]
    found["engine floor (TaskFlow+SQLAlchemy)"] = [python, "-c", ENGINE_FLOOR]
    return found


#: Runs ``tripleo-flow`` (arguments after the first) as its console script does; at
#: exit writes to the file named by the first argument the CPU seconds (user +
#: system) the process had used when cliff entered the command's ``run``, or
#: nothing when no command ran (``--help``, a command's ``--help``).
WRAPPER = """
import atexit, resource, sys
from cliff import app
out = sys.argv.pop(1)
entered = []
def note(cmd):
    run = cmd.run
    def noted(parsed_args):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        entered.append(usage.ru_utime + usage.ru_stime)
        return run(parsed_args)
    cmd.run = noted
def write():
    with open(out, "w") as f:
        f.write(repr(entered[0]) if entered else "")
atexit.register(write)
prepare = app.App.prepare_to_run_command
def prepare_noted(self, cmd):
    note(cmd)
    return prepare(self, cmd)
app.App.prepare_to_run_command = prepare_noted
from tripleo_flow.cli.main import console_main
console_main()
"""


class Run(NamedTuple):
    """One run: wall-clock, CPU and start-up CPU seconds (the whole CPU when the
    command's own work never began)."""

    wall: float
    cpu: float
    startup: float


def timed(argv: Sequence[str], env: Mapping[str, str], noted: Path | None = None) -> Run:
    """Run ``argv`` to its end; its wall-clock and CPU (user + system) seconds, and
    the start-up CPU seconds a :data:`WRAPPER` wrote to ``noted``."""
    if noted is not None:
        noted.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = noted.read_text() if noted is not None else ""
    return Run(wall, cpu, float(ast.literal_eval(text)) if text else cpu)


#: A variant: its argv, environment and the file its start-up is noted in (None: a
#: baseline, all start-up).
Variant = tuple[Sequence[str], Mapping[str, str], Path | None]


def compare(variants: Mapping[str, Variant], repeat: int) -> dict[str, list[Run]]:
    """Time each variant ``repeat`` times, interleaved; name -> its runs in order."""
    timings: dict[str, list[Run]] = {name: [] for name in variants}
    for rep in range(repeat):
        for name, (argv, env, noted) in variants.items():
            run = timed(argv, env, noted)
            timings[name].append(run)
            print(f"  {name:<40} run {rep + 1}: wall {run.wall:6.3f} s  cpu {run.cpu:6.3f} s"
                  f"  start-up {run.startup:6.3f} s", flush=True)
    return timings


def print_report(timings: Mapping[str, list[Run]], baseline: str,
                 against: Mapping[str, str] | None = None) -> None:
    """Medians of wall, CPU and start-up CPU seconds, each one's ratio to
    ``baseline``'s CPU (wall to its wall) and, for a command of this tree, the CPU
    and start-up ratios to the same command in the other tree (``against`` maps its
    name to that variant's)."""
    def median(name: str, field: str) -> float:
        return statistics.median(getattr(run, field) for run in timings[name])

    base_wall, base_cpu = median(baseline, "wall"), median(baseline, "cpu")
    print(f"\n{'command':<38}{'wall s':>7}{'ratio':>6}{'cpu s':>7}{'ratio':>6}"
          f"{'/other':>7}{'start-up s':>11}{'ratio':>6}{'/other':>7}")
    for name in timings:
        wall, cpu, startup = (median(name, f) for f in ("wall", "cpu", "startup"))
        other_cpu = other_startup = ""
        if against and name in against:
            other_cpu = f"{cpu / median(against[name], 'cpu'):>7.2f}"
            other_startup = f"{startup / median(against[name], 'startup'):>7.2f}"
        print(f"{name:<38}{wall:>7.3f}{wall / base_wall:>6.2f}{cpu:>7.3f}{cpu / base_cpu:>6.2f}"
              f"{other_cpu:>7}{startup:>11.3f}{startup / base_cpu:>6.2f}{other_startup:>7}")
    print(f"(medians of {len(timings[baseline])} runs; ratios against {baseline}'s wall and "
          "CPU" + ("; /other: against the same command of the other tree)" if against
                   else ")"))


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
        # The start-ups are noted in a directory of their own: the temporary one is
        # first on the path, and stevedore's cache is rebuilt when its time changes.
        notes = Path(tmp) / "start-ups"
        notes.mkdir()
        base = dict(os.environ, HOME=str(Path(tmp) / "home"),
                    PYTHONPYCACHEPREFIX=str(Path(tmp) / "pycache"))
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        env = tree_env(base, args.tree)
        # ``python -m`` puts its working directory first on the path: run from the
        # temporary one, so each command runs the tree its PYTHONPATH names.
        here = os.getcwd()
        os.chdir(tmp)
        cli = [args.python, "-m", "tripleo_flow.cli.main", "--config-file", str(conf)]
        wrapped = [args.python, "-c", WRAPPER]
        print("creating the sample plan and a few executions (not timed) ...", flush=True)
        timed([*cli, "plan", "create", "overcloud", "--sample"], env)
        for count in range(SETUP_RUNS):
            timed([*cli, "parameters", "set", "--plan", "overcloud", f"ComputeCount={count}"],
                  env)
        execution = first_execution(cli, env)

        variants: dict[str, Variant] = {
            name: (argv, env, None) for name, argv in baselines(args.python).items()}
        trees = [("", env)] + ([(" [other]", tree_env(base, args.against))]
                               if args.against else [])
        against = {}
        for number, (name, command) in enumerate(COMMANDS.items()):
            for suffix, tree in trees:
                noted = notes / f"{number}{suffix.strip(' []')}"
                argv = [*wrapped, str(noted), "--config-file", str(conf),
                        *(a.format(execution=execution) for a in command)]
                variants[f"{name}{suffix}"] = (argv, tree, noted)
                if suffix:
                    against[name] = f"{name}{suffix}"
        for variant in variants.values():  # untimed: bytecode written, files cached
            timed(*variant)
        timings = compare(variants, args.repeat)
        os.chdir(here)
    print_report(timings, list(variants)[1], against)
    return 0

if __name__ == "__main__":
    sys.exit(main())
