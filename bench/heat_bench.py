"""Ephemeral Heat benchmarks; ratios against baselines measured in the same run.

1. Launch to ready: ``NativeLauncher.launch()`` against heat-all started by hand
   with the same heat.conf (db_sync, then heat-all, polled until the API answers
   and the engine registered).  Goal <= 1.1x.
2. Database dump: ``MariaDBDatabase.dump()`` (mysqldump + checks) against bare
   mysqldump of the same database.  Goal <= 1.2x.
3. Stack create of 3 roles x N nodes (ResourceGroups of nested templates with
   software and structured deployments): pod with 4 engine workers against
   native heat-all.  Goal: pod >= 2.5x faster.  Needs the images of
   ``tripleo-flow heat image build``.  Also printed: the CPU-seconds each
   create used on the machine (with the pod's ceiling: its CPU work spread
   over every core) and, per ResourceGroup, the seconds from its first to its
   last member started: Heat's convergence engine starts the leaves of one
   stack one a second, so N members take N-1 s to start with any number of
   engines.

Usage: TRIPLEO_FLOW_HEAT_VENV=... python bench/heat_bench.py [--rounds N]
Needs the Heat virtualenv and Debian's mariadb-server.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.functional.mariadb import PrivateMariaDB, free_port  # noqa: E402
from tripleo_flow.heat import launcher as common  # noqa: E402
from tripleo_flow.heat.db_mariadb import MariaDBDatabase  # noqa: E402
from tripleo_flow.heat.db_sqlite import SqliteDatabase  # noqa: E402
from tripleo_flow.heat.native import NativeLauncher  # noqa: E402

TEMPLATE = Path(__file__).resolve().parents[1] / "tests/functional/heat/small-stack.yaml"


def bare_launch(venv: Path, conf_file: Path, db: SqliteDatabase, port: int) -> float:
    """db_sync + heat-all by hand on ``conf_file``; seconds until ready."""
    db.create()
    start = time.monotonic()
    subprocess.run([str(venv / "bin/heat-manage"), "--config-file", str(conf_file), "db_sync"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    proc = subprocess.Popen([str(venv / "bin/heat-all"), "--config-file", str(conf_file)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        common.wait_ready("127.0.0.1", port, set(), db.engine_ids,
                          lambda: None if proc.poll() is None else "exited", 300)
        return time.monotonic() - start
    finally:
        proc.kill()
        proc.wait()
        db.wipe()


def bench_launch(venv: Path, rounds: int, base: Path) -> None:
    port = free_port()
    launcher = NativeLauncher(base / "native", venv, port=port, api_timeout=300)
    launcher.launch()  # warm-up, and the heat.conf the bare runs reuse
    launcher.kill(dump=False)
    work = launcher.work
    bare_conf = base / "bare.conf"
    bare_db = SqliteDatabase(Path("/dev/shm") / f"tripleo-flow-bench-{os.getpid()}.sqlite")
    ours_url = launcher._database().url
    text = work.conf_file.read_text()
    assert ours_url in text
    bare_conf.write_text(text.replace(ours_url, bare_db.url))
    ours, bare = [], []
    for _ in range(rounds):
        bare.append(bare_launch(venv, bare_conf, bare_db, port))
        start = time.monotonic()
        launcher.launch()
        ours.append(time.monotonic() - start)
        launcher.kill(dump=False)
    report("launch to ready (native vs bare heat-all)", ours, bare, goal=1.1)


def bench_dump(venv: Path, rounds: int, base: Path) -> None:
    server = PrivateMariaDB(base / "mariadb").start()
    try:
        launcher = NativeLauncher(base / "maria", venv, port=free_port(), database="mariadb",
                                  mariadb_url=server.admin_url, api_timeout=300)
        ep = launcher.launch()
        env = {**os.environ, "OS_CLIENT_CONFIG_FILE": ep.clouds_yaml}
        for i in range(5):
            subprocess.run([str(venv / "bin/openstack"), "--os-cloud", "heat", "stack",
                            "create", "-t", str(TEMPLATE), "--wait", f"s{i}"], env=env,
                           stdout=subprocess.DEVNULL, check=True)
        record = launcher.work.read_run()
        assert record is not None
        db = MariaDBDatabase(server.admin_url, record["database"]["name"],
                             record["database"]["password"], scratch_dir=launcher.work.root)
        ours, bare = [], []
        out = base / "dump.sql"
        for _ in range(rounds):
            with db._option_file() as options, open(base / "bare.sql", "wb") as handle:
                start = time.monotonic()
                subprocess.run(["mysqldump", f"--defaults-extra-file={options}",
                                "--single-transaction", "--no-tablespaces",
                                "--skip-lock-tables", db.name], stdout=handle, check=True)
                bare.append(time.monotonic() - start)
            start = time.monotonic()
            db.dump(out)
            ours.append(time.monotonic() - start)
        print(f"  dump size {out.stat().st_size / 1024:.0f} KiB")
        report("database dump (ours vs bare mysqldump)", ours, bare, goal=1.2)
        launcher.kill(dump=False)
    finally:
        server.stop()


def busy_cpu_seconds() -> float:
    """CPU seconds every process on the machine has used so far (``/proc/stat``:
    user, nice, system, irq, softirq, steal; not idle or iowait)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def member_start_spans(venv: Path, clouds_yaml: str, name: str) -> dict[str, float]:
    """Seconds from the first to the last member started, per ResourceGroup.

    Heat's convergence engine triggers the independent resources of one stack
    one after another with a 1 s sleep between them (``Stack.converge_stack``),
    in the one thread that converges that stack, whatever the engine count.
    """
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": clouds_yaml}
    proc = subprocess.run([str(venv / "bin/openstack"), "--os-cloud", "heat", "stack", "event",
                           "list", "--nested-depth", "1", "-f", "json", name], env=env,
                          capture_output=True, text=True, check=True)
    starts: dict[str, list[datetime]] = {}
    for event in json.loads(proc.stdout):
        stack = str(event.get("stack_name") or "")
        if stack != name and event.get("resource_status") == "CREATE_IN_PROGRESS" \
                and str(event.get("resource_name", "")).isdigit():
            when = datetime.strptime(event["event_time"], "%Y-%m-%dT%H:%M:%SZ")
            starts.setdefault(stack.split("-")[1], []).append(when)
    return {group: (max(t) - min(t)).total_seconds() for group, t in sorted(starts.items())}


def create_stack(venv: Path, clouds_yaml: str, name: str, nodes: int) -> float:
    templates = Path(__file__).resolve().parent / "templates"
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": clouds_yaml}
    start = time.monotonic()
    proc = subprocess.run([str(venv / "bin/openstack"), "--os-cloud", "heat", "stack", "create",
                           "-t", str(templates / "overcloud.yaml"), "-e",
                           str(templates / "env.yaml"), "--parameter", f"NodeCount={nodes}",
                           "--wait", "--timeout", "60", name], env=env, capture_output=True,
                          text=True, check=False)
    elapsed = time.monotonic() - start
    if proc.returncode != 0 or "CREATE_COMPLETE" not in proc.stdout:
        raise RuntimeError(f"stack create failed: {proc.stdout[-500:]} {proc.stderr[-500:]}")
    return elapsed


def bench_pod(venv: Path, nodes: int, base: Path) -> None:
    from tripleo_flow.heat.pod import PodLauncher

    native = NativeLauncher(base / "native-stack", venv, port=free_port(), api_timeout=300)
    pod = PodLauncher(base / "pod-stack", image="localhost/tripleo-flow/heat:24.1.2",
                      services_image="localhost/tripleo-flow/heat-services:bookworm",
                      podman_url=None, podman_dir=base / "podman", engine_workers=4,
                      port=free_port(), api_timeout=300)
    results, cpu = {}, {}
    cores = os.cpu_count() or 1
    for label, launcher in (("native", native), ("pod", pod)):
        start = time.monotonic()
        ep = launcher.launch()
        ready = time.monotonic() - start
        try:
            before = busy_cpu_seconds()
            took = create_stack(venv, ep.clouds_yaml, "overcloud", nodes)
            cpu[label] = busy_cpu_seconds() - before
            spans = member_start_spans(venv, ep.clouds_yaml, "overcloud")
        finally:
            launcher.kill(dump=False)
        results[label] = took
        print(f"  {label}: ready in {ready:.1f} s, 3 x {nodes} stack created in {took:.1f} s, "
              f"{cpu[label]:.1f} CPU-s on the machine ({cpu[label] / took:.2f} of {cores} cores)")
        print(f"  {label}: first to last member started, per group: "
              + ", ".join(f"{group} {span:.0f} s" for group, span in spans.items())
              + f" (Heat starts one leaf a second per stack; floor {nodes - 1} s)")
    speedup = results["native"] / results["pod"]
    verdict = "OK" if speedup >= 2.5 else "UNDER GOAL"
    print(f"stack create 3 x {nodes} (pod 4 workers vs native): pod {speedup:.2f}x faster "
          f"(goal >= 2.5x) {verdict}")
    # The pod cannot finish before its CPU work spread over every core does.
    bound = results["native"] / (cpu["pod"] / cores)
    print(f"  ceiling on this machine: the pod's {cpu['pod']:.1f} CPU-s over {cores} cores "
          f"take >= {cpu['pod'] / cores:.1f} s, so pod <= {bound:.2f}x faster")
    # The top stack starts its 3 groups a second apart, each group its members a
    # second apart: the last member cannot start before (3 - 1) + (N - 1) s.
    floor = 2 + nodes - 1
    print(f"  ceiling in Heat itself: the last member starts >= {floor} s after the create, "
          f"so pod <= {results['native'] / floor:.2f}x faster with any number of engines")


def report(name: str, ours: list[float], bare: list[float], goal: float) -> None:
    o, b = statistics.median(ours), statistics.median(bare)
    verdict = "OK" if o / b <= goal else "OVER GOAL"
    print(f"{name}: ours {o:.3f} s, baseline {b:.3f} s, ratio {o / b:.2f}x "
          f"(goal <= {goal}x) {verdict}   [ours {fmt(ours)}; baseline {fmt(bare)}]")


def fmt(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["launch", "dump", "pod"])
    parser.add_argument("--nodes", type=int, default=10, help="nodes per role (pod bench)")
    args = parser.parse_args()
    venv = Path(os.environ.get("TRIPLEO_FLOW_HEAT_VENV",
                               Path.home() / ".local/share/tripleo-flow/heat-venv"))
    with tempfile.TemporaryDirectory(prefix="heat-bench-") as tmp:
        if args.only in (None, "launch"):
            bench_launch(venv, args.rounds, Path(tmp))
        if args.only in (None, "dump"):
            bench_dump(venv, max(args.rounds, 5), Path(tmp))
        if args.only in (None, "pod"):
            bench_pod(venv, args.nodes, Path(tmp))


if __name__ == "__main__":
    main()
