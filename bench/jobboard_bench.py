"""Workflows on a jobboard: throughput with 1, 2 and 4 conductors.

    python bench/jobboard_bench.py [--plans 100] [--naps 64] [--conductors 1,2,4]
                                   [--concurrency 4] [--board redis|zookeeper]

Starts a private redis-server (or ZooKeeper) and MariaDB, then for each number
of conductors posts every job, starts that many ``tripleo-flow conductor``
processes (each running ``--concurrency`` jobs at once) and times from the
first conductor being ready until the last job has ended (from the executions'
records, so the waiting client's polling does not count):

* plan jobs: a workflow that creates a plan from the sample plan, sets
  parameters and renders its templates (CPU-bound on this machine's cores);
* nap jobs: two 1-second ``std.sleep`` tasks (waiting-bound).

Prints jobs per second and the ratio to one conductor; the goal is 2
conductors >= 1.8x one on the waiting-bound jobs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.engine_helpers import WORKBOOKS  # noqa: E402
from tests.fixtures_services import free_port, wait_for_port  # noqa: E402
from tests.functional.mariadb import PrivateMariaDB  # noqa: E402
from tripleo_flow.client import Client  # noqa: E402
from tripleo_flow.client.plans import sample_plan_dir  # noqa: E402

EXE = str(Path(sys.executable).parent / "tripleo-flow")
WORKBOOK = """---
version: '2.0'
name: bench_jobs
workflows:
  plan_cycle:
    input: [plan, templates]
    tasks:
      create:
        action: plan.create
        input: {plan: <% $.plan %>, templates: <% $.templates %>}
        on-success: parameters
      parameters:
        action: parameters.update
        input: {plan: <% $.plan %>, parameters: {ComputeCount: 2, ControllerCount: 1}}
        on-success: render
      render:
        action: templates.process
        input: {plan: <% $.plan %>}
"""


def start_board(kind: str, workdir: Path) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    if kind == "redis":
        proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", str(workdir),
             "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
        wait_for_port(port)
        return f"redis://127.0.0.1:{port}", proc
    conf = workdir / "zoo.cfg"
    conf.write_text(f"tickTime=2000\ndataDir={workdir / 'zk'}\nclientPort={port}\n"
                    "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
                    "4lw.commands.whitelist=ruok,stat,srvr,envi\n")
    proc = subprocess.Popen(["java", "-Xmx256m", "-cp", "/usr/share/java/zookeeper.jar",
                             "org.apache.zookeeper.server.ZooKeeperServerMain", str(conf)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, 60)
    return f"zookeeper://127.0.0.1:{port}", proc


def write_conf(workdir: Path, board_url: str, database: str, namespace: str,
               poll: float = 0.5) -> Path:
    conf = workdir / f"{namespace}.conf"
    conf.write_text(
        f"[DEFAULT]\ndata_dir = {workdir / 'data'}\n[workflows]\nconnection = {database}\n"
        f"[jobboard]\nbackend_url = {board_url}\nnamespace = {namespace}\n"
        f"claim_expiry = 30\nheartbeat_interval = 5\npoll_interval = {poll}\n")
    conf.chmod(0o600)
    return conf


def run_case(conf: Path, conductors: int, concurrency: int,
             jobs: list[tuple[str, dict[str, Any]]]) -> float:
    """Seconds from the first conductor being ready, every job posted before, until
    the last job has ended (posting is one client's work: it is left out)."""
    client = Client.from_config_files([str(conf)])
    posted = [client.executions.create(name, inputs, wait=False) for name, inputs in jobs]
    ready: list[float] = []
    procs: list[subprocess.Popen[str]] = [
        subprocess.Popen([EXE, "--config-file", str(conf), "conductor", "--name", f"c{i}",
                          "--concurrency", str(concurrency)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for i in range(conductors)]

    def await_ready(proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None and "claiming jobs" in proc.stdout.readline()
        ready.append(time.perf_counter())

    try:
        waiters = [threading.Thread(target=await_ready, args=(p,)) for p in procs]
        for waiter in waiters:
            waiter.start()
        for execution in posted:
            done = client.executions.follow(execution.id, timeout=1800)
            assert done.state == "SUCCESS", (done.id, done.error)
        end = max(e.finished_at or 0.0 for e in client.executions.list()
                  if e.id in {p.id for p in posted})
        for waiter in waiters:
            waiter.join()
        # finished_at is wall-clock time: measure the start on the same clock.
        return end - (time.time() - (time.perf_counter() - min(ready)))
    finally:
        client.close()
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plans", type=int, default=100)
    parser.add_argument("--naps", type=int, default=64)
    parser.add_argument("--conductors", default="1,2,4")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--board", choices=["redis", "zookeeper"], default="redis")
    parser.add_argument("--poll", type=float, default=0.5,
                        help="[jobboard] poll_interval of the conductors and the waiter.")
    args = parser.parse_args()
    counts = [int(n) for n in args.conductors.split(",")]
    workdir = Path(tempfile.mkdtemp(prefix="jobboard-bench-"))
    board_url, board = start_board(args.board, workdir)
    mariadb = PrivateMariaDB(workdir / "mariadb").start()
    try:
        admin = mariadb.admin()
        with admin.cursor() as cur:
            cur.execute("CREATE DATABASE bench")
        admin.close()
        database = (f"mysql+pymysql://tfadmin:{mariadb.password}@127.0.0.1:{mariadb.port}"
                    "/bench")
        book = workdir / "bench_jobs.yaml"
        book.write_text(WORKBOOK)
        setup = Client.from_config_files([str(write_conf(workdir, board_url, database,
                                                         "setup"))])
        setup.workbooks.create(book)
        setup.workbooks.create(WORKBOOKS / "good" / "naps.yaml")
        setup.close()
        print(f"board {args.board}, {args.concurrency} jobs at once per conductor, "
              f"poll every {args.poll:g} s; load average {os.getloadavg()[0]:.1f}")
        for kind, total in (("naps", args.naps), ("plans", args.plans)):
            if total <= 0:
                continue
            base = None
            for n in counts:
                tag = f"{kind}{n}-{uuid.uuid4().hex[:6]}"
                jobs = ([("naps.naps", {"seconds": 1})] * total if kind == "naps" else
                        [("bench_jobs.plan_cycle", {"plan": f"{tag}-{i}",
                                                    "templates": str(sample_plan_dir())})
                         for i in range(total)])
                took = run_case(write_conf(workdir, board_url, database, tag, args.poll), n,
                                args.concurrency, jobs)
                rate = total / took
                base = base or rate
                print(f"{kind:5} {total:4} jobs, {n} conductor(s): {took:7.2f} s, "
                      f"{rate:6.2f} jobs/s, {rate / base:4.2f}x one conductor", flush=True)
    finally:
        mariadb.stop()
        board.kill()
        board.wait()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
