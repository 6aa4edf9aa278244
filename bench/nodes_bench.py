"""Node registration and introspection of N fake nodes on a real local Ironic.

Measured (seconds per node, best of the rounds):

1. ``import``: workflow ``tripleo.nodes.register`` (check, then register and manage
   tasks with-items, ``[ironic] concurrency`` at a time, then a read of the states:
   TripleO's import leaves the nodes manageable) through ``Client.nodes.register``.
2. ``introspect``: workflow ``tripleo.nodes.introspect`` (select, manage: already
   manageable, inspect: with-items) through ``Client.nodes.introspect``.
3. Baseline, in the same run on the same Ironic: the same Ironic calls made one
   node after the other by hand with :class:`~tripleo_flow.ironic.client.IronicClient`
   (create node and port, manage, wait; inspect, wait; polled every 20 ms), no
   workflow engine.

Printed: seconds per node for each, and the workflow / baseline ratio (below 1:
the parallel workflow beats doing it by hand).  fake-hardware inspection is
instantaneous on Ironic's side, so this measures our overhead and polling.
Then, for the last round, the Ironic requests of each path by kind (counted in
this process, where the workflow's actions run too) and the CPU seconds the
single Ironic process spent serving each path: one process is one core, so a
request the by-hand path does not make is time the workflow pays.  And the
seconds Ironic sat idle meanwhile (neither running nor waiting for a core, from
its ``/proc/PID/schedstat``): time it waited for us, which the machine's load
inflates far less than the seconds per node.

Usage: TRIPLEO_FLOW_IRONIC_VENV=... python bench/nodes_bench.py [--nodes 50] [--rounds 2]
       [--concurrency 8]
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.functional.ironic.conftest import fake_nodes  # noqa: E402
from tripleo_flow.client import Client  # noqa: E402
from tripleo_flow.ironic.client import IronicClient  # noqa: E402
from tripleo_flow.ironic.launcher import IronicLauncher  # noqa: E402

DEFAULT_VENV = Path.home() / ".local/share/tripleo-flow/ironic-venv"


#: Requests by kind (method and path shape) since the last :func:`_counted` reset.
COUNTS: collections.Counter[str] = collections.Counter()


def _kind(method: str, path: str) -> str:
    path, _, query = path.partition("?")
    shape = re.sub(r"^/(nodes|ports)/[^/]+", r"/\1/{id}", path)
    return f"{method} {shape}" + (" (list)" if method == "GET" and shape in
                                  ("/nodes", "/ports") else "")


def _count_requests() -> None:
    """Count every request an :class:`IronicClient` of this process makes."""
    call = IronicClient._call

    def counted(self: IronicClient, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        COUNTS[_kind(method, path)] += 1
        return call(self, method, path, *args, **kwargs)

    IronicClient._call = counted  # type: ignore[method-assign]


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _cpu(pid: int) -> tuple[float, float]:
    """CPU seconds (user + system) process ``pid`` and its children have used (the
    launched pid is a tether; Ironic is its child), and the seconds their threads
    were not idle (running, or runnable waiting for a core: schedstat)."""
    total = 0
    busy = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = _stat(int(entry.name))
                if int(entry.name) == pid or int(fields[1]) == pid:
                    running, waiting = (Path(f"/proc/{entry.name}/schedstat")
                                        .read_text().split()[:2])
                    total += int(fields[11]) + int(fields[12])
                    busy += int(running) + int(waiting)
            except OSError:
                continue  # gone meanwhile
    return total / os.sysconf("SC_CLK_TCK"), busy / 1e9


def _wipe(ironic: IronicClient) -> None:
    for node in ironic.list_nodes(("uuid",)):
        ironic.delete_node(node["uuid"])


def _wait(ironic: IronicClient, name: str) -> None:
    """Poll one node every 20 ms until it rests in manageable."""
    while True:
        node = ironic.get_node(name, ("provision_state", "target_provision_state"))
        if node["provision_state"] == "manageable" and not node["target_provision_state"]:
            return
        time.sleep(0.02)


class Phases:
    """Requests by kind and Ironic CPU seconds of each phase of one path's run."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.seen: list[tuple[collections.Counter[str], float, float, float]] = []
        self.mark()

    def mark(self) -> None:
        self.seen.append((collections.Counter(COUNTS), *_cpu(self.pid), time.monotonic()))

    def phase(self, index: int) -> tuple[collections.Counter[str], float, float]:
        """Requests by kind, Ironic's CPU seconds and its idle seconds in phase ``index``."""
        (before, cpu0, busy0, at0), (after, cpu1, busy1, at1) = \
            self.seen[index], self.seen[index + 1]
        return after - before, cpu1 - cpu0, max(0.0, (at1 - at0) - (busy1 - busy0))


def by_hand(ironic: IronicClient, document: dict[str, Any],
            phases: Phases) -> tuple[float, float]:
    """Register + manage, then inspect each node sequentially; (import s, introspect s)."""
    start = time.monotonic()
    for entry in document["nodes"]:
        node = ironic.create_node({"name": entry["name"], "driver": "fake-hardware",
                                   "properties": {"memory_mb": entry["memory"]}})
        ironic.create_port(node["uuid"], entry["mac"][0])
        ironic.set_provision_state(entry["name"], "manage")
        _wait(ironic, entry["name"])
    registered = time.monotonic() - start
    phases.mark()
    start = time.monotonic()
    for entry in document["nodes"]:
        ironic.set_provision_state(entry["name"], "inspect")
        _wait(ironic, entry["name"])
    inspected = time.monotonic() - start
    phases.mark()
    return registered, inspected


def with_workflows(client: Client, document: dict[str, Any],
                   phases: Phases) -> tuple[float, float]:
    start = time.monotonic()
    client.nodes.register(document)
    registered = time.monotonic() - start
    phases.mark()
    start = time.monotonic()
    client.nodes.introspect([n["name"] for n in document["nodes"]])
    inspected = time.monotonic() - start
    phases.mark()
    return registered, inspected


def _print_counts(last: dict[str, Phases]) -> None:
    print("Last round, Ironic CPU seconds, seconds idle, and requests by kind:")
    for index, label in enumerate(("import", "introspect")):
        for name, phases in last.items():
            counts, cpu, idle = phases.phase(index)
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
            print(f"  {label:11}{name:9}{cpu:6.2f} CPU-s {idle:5.2f} idle-s "
                  f"{sum(counts.values()):4} requests: {kinds}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    venv = Path(os.environ.get("TRIPLEO_FLOW_IRONIC_VENV", DEFAULT_VENV))
    document = fake_nodes(args.nodes, prefix="bench")
    with tempfile.TemporaryDirectory(prefix="nodes-bench-") as tmp:
        launcher = IronicLauncher(Path(tmp) / "ironic", venv)
        start = time.monotonic()
        ready = launcher.launch(owned_by="bench")
        print(f"Ironic ready in {time.monotonic() - start:.1f} s at {ready.endpoint}")
        ironic = IronicClient(ready.endpoint)
        client = Client.from_config_files([], data_dir=str(Path(tmp) / "data"),
                                          ironic__endpoint=ready.endpoint,
                                          ironic__concurrency=args.concurrency)
        best: dict[str, list[float]] = {"hand": [1e9, 1e9], "workflow": [1e9, 1e9]}
        last: dict[str, Phases] = {}
        _count_requests()
        try:
            for _ in range(args.rounds):
                for name, run in (("hand", by_hand), ("workflow", with_workflows)):
                    _wipe(ironic)
                    last[name] = Phases(ready.pid)
                    reg, intro = run(ironic if name == "hand" else client,  # type: ignore[operator]
                                     document, last[name])
                    best[name] = [min(best[name][0], reg), min(best[name][1], intro)]
        finally:
            client.close()
            launcher.kill()
    count = args.nodes
    print(f"{count} fake nodes, best of {args.rounds} rounds, seconds per node:")
    print(f"{'':12}{'by hand':>10}{'workflow':>10}{'ratio':>8}")
    for index, label in enumerate(("import", "introspect")):
        hand, flow = best["hand"][index] / count, best["workflow"][index] / count
        print(f"{label:12}{hand:10.3f}{flow:10.3f}{flow / hand:8.2f}x")
    total = sum(best["workflow"]) / count
    print(f"import + introspect with workflows: {total:.3f} s per node "
          f"(concurrency {args.concurrency})")
    _print_counts(last)
    return 0


if __name__ == "__main__":
    sys.exit(main())
