"""The real overcloud: THT 18.0.0 deployed by tripleo-flow against a bare stack create.

Each variant deploys the upstream tripleo-heat-templates 18.0.0 from a fresh local
store with the shipped baremetal deployment file (one controller, one compute,
``managed: false``), as the README's main command does:

``native``
    ``Client.deployments.create()`` on native heat-all as the product runs it (``[heat]
    pace_leaves`` false: Heat's one-second wait after starting each leaf off);
``native-paced``
    the same with Heat's own pacing (heat-all as shipped, as before);
``pod2`` / ``pod4``
    the same on pod Heat (heat-api + heat-engine, MariaDB, RabbitMQ) with 2 or 4
    engine workers;
``processes2`` / ``processes4`` (``processes`` alone: 4)
    the pod's layout as child processes, no image (heat type ``processes``);
``floor``
    what python-tripleoclient's ephemeral Heat costs: the stack request that the
    first native deploy sent (``stack-request.json``), POSTed as it is to a
    heat-all as shipped (paced) already running, timed from the POST to
    CREATE_COMPLETE.

Any variant but the floor takes ``-paced`` (``processes4-paced``).

Each deploy is split with its progress callbacks into *before* (status, plan
check, request build, Heat launch, POST), *stack* (first to last look at the
stack) and *after* (outputs, config-download, database dump, Heat stop); *posted*
is its ``deploy_stack`` task (the POST, Heat's validation, the create: what the floor
times) and *own* the rest of the deploy, given as a share of *posted*; the
overhead of tripleo-flow's own steps is ``native-paced total / floor - 1``, and
every variant's *stack* time is also given as a ratio to the floor's.

Usage: TRIPLEO_FLOW_HEAT_VENV=... python bench/overcloud_bench.py [--variants native,floor]
       [--baremetal-deployment FILE]   (default: tripleo_flow/examples/baremetal-deployment.yaml)
       [--sample]                      (the shipped sample plan instead, no baremetal file:
                                        about a minute a variant, to try a variant out)
       [--tasks]                       (each deploy task's start and duration too)
Each variant takes about ten minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.deploy_bench import DEFAULT_IMAGE, DEFAULT_VENV, make_client  # noqa: E402
from tests.tht import fetch_tree_dir  # noqa: E402
from tripleo_flow.core.deploy.progress import StackProgress  # noqa: E402
from tripleo_flow.heat import podman_api  # noqa: E402
from tripleo_flow.heat.client import HeatClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BAREMETAL = ROOT / "tripleo_flow" / "examples" / "baremetal-deployment.yaml"
PLAN = "overcloud18"


class Phases:
    """Times of the first and last look at the stack during one deploy."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last: float | None = None

    def __call__(self, progress: StackProgress) -> None:
        now = time.monotonic()
        self.first = self.first if self.first is not None else now
        self.last = now


def deploy(base: Path, templates: Path | None, baremetal: Path | None, heat_type: str,
           venv: Path, podman_url: str, image: str, workers: int,
           paced: bool, show_tasks: bool = False) -> dict[str, float]:
    """One deploy of ``templates`` (None: the sample plan) on ``heat_type``; with
    ``show_tasks``, print when each task of the deploy and of its steps after the stack
    started and how long it took."""
    client = make_client(base, venv, podman_url, image, workers, pace_leaves=paced)
    try:
        if templates is None:
            client.plans.create(PLAN, sample=True)
        else:
            client.plans.create(PLAN, templates)
        phases = Phases()
        start = time.monotonic()
        result = client.deployments.create(PLAN, heat_type=heat_type, work_dir=base / "work",
                                           progress=phases, baremetal_deployment=baremetal)
        end = time.monotonic()
        posted = stack_task_time(client)
        if show_tasks:
            for line in task_times(client):
                print(line, flush=True)
    finally:
        client.close()
    assert result["deployment_status"] == "DEPLOY_SUCCESS", result
    assert phases.first is not None and phases.last is not None
    return {"total": end - start, "before": phases.first - start,
            "stack": phases.last - phases.first, "after": end - phases.last,
            "posted": posted, "own": end - start - posted}


def stack_task_time(client: Any) -> float:
    """How long the deploy's ``deploy_stack`` task took: from its POST of the stack
    request to the stack's end, what the floor times (its validation by Heat included)."""
    deploys = [e for e in client.executions.list("tripleo.deploy.deploy")]
    task = next(t for t in client.tasks.list(deploys[-1].id) if t.name == "deploy_stack")
    assert task.started_at is not None and task.finished_at is not None
    return float(task.finished_at - task.started_at)


def task_times(client: Any) -> list[str]:
    """Each task of the last deploy and of its steps after the stack: its start from the
    deploy's first task, and its duration."""
    timed = []
    for workflow in ("tripleo.deploy.deploy", "tripleo.deploy.config_download_deploy"):
        executions = list(client.executions.list(workflow))
        if executions:
            timed += [(workflow.rsplit(".", 1)[-1], t) for t in
                      client.tasks.list(executions[-1].id) if t.started_at is not None]
    if not timed:
        return []
    origin = min(float(t.started_at) for _, t in timed)
    return [f"  {workflow:22} {task.name:22} at {float(task.started_at) - origin:7.1f} s"
            f"  took {float(task.finished_at or task.started_at) - float(task.started_at):6.1f} s"
            for workflow, task in sorted(timed, key=lambda wt: float(wt[1].started_at))]


def floor(base: Path, request_file: Path, venv: Path) -> dict[str, float]:
    client = make_client(base, venv, "", DEFAULT_IMAGE, 2, pace_leaves=True)
    heat_dir = str(base / "heat")
    try:
        endpoint = client.heat.launch(heat_dir, "native")
        heat = HeatClient(endpoint["endpoint"], timeout=300.0)
        body = json.loads(request_file.read_text())
        start = time.monotonic()
        heat.create_stack(body)
        stack = heat.wait(body["stack_name"], interval=2.0, timeout=7200.0)
        end = time.monotonic()
        assert stack["stack_status"] == "CREATE_COMPLETE", stack.get("stack_status_reason")
    finally:
        client.heat.kill(heat_dir)
        client.close()
    return {"total": end - start, "stack": end - start}


def heat_of(variant: str) -> tuple[str, int, bool]:
    """The heat type, engine workers and pacing of ``variant`` (``pod2``,
    ``processes4``, ``native-paced``...)."""
    paced = variant.endswith("-paced")
    variant = variant.removesuffix("-paced")
    for heat_type, default in (("processes", 4), ("pod", 2)):
        if variant.startswith(heat_type):
            return heat_type, int(variant[len(heat_type):] or default), paced
    if variant != "native":
        sys.exit(f"Unknown variant {variant!r}: native, floor, podN or processesN "
                 "(each optionally -paced).")
    return "native", 2, paced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="native-paced,floor,native,processes4")
    parser.add_argument("--baremetal-deployment", type=Path, default=BAREMETAL)
    parser.add_argument("--tasks", action="store_true",
                        help="print each task's start and duration (where own steps go)")
    parser.add_argument("--sample", action="store_true",
                        help="deploy the shipped sample plan instead of THT 18.0.0")
    parser.add_argument("--image", default=os.environ.get("TRIPLEO_FLOW_HEAT_IMAGE",
                                                          DEFAULT_IMAGE))
    args = parser.parse_args()
    variants = args.variants.split(",")
    venv = Path(os.environ.get("TRIPLEO_FLOW_HEAT_VENV", DEFAULT_VENV))
    with tempfile.TemporaryDirectory(prefix="tripleo-flow-overcloud-bench-") as tmp:
        root = Path(tmp)
        templates: Path | None = None
        baremetal: Path | None = None
        if not args.sample:
            templates, baremetal = root / "templates", args.baremetal_deployment
            shutil.copytree(fetch_tree_dir("18.0.0"), templates, symlinks=True)
        podman_url = f"unix://{root / 'podman' / 'podman.sock'}"
        results: dict[str, dict[str, float]] = {}
        requests = [root / name / "work" / "stack-request.json"
                    for name in ("native", "native-paced")]
        for variant in variants:
            base = root / variant
            base.mkdir()
            if variant == "floor":
                made = [r for r in requests if r.exists()]
                if not made:
                    sys.exit("The floor POSTs a native deploy's request: list native or "
                             "native-paced first.")
                results[variant] = floor(base, made[0], venv)
            else:
                heat_type, workers, paced = heat_of(variant)
                if heat_type == "pod":  # (re)start the podman service: it stops when idle
                    with podman_api.connect(None, root / "podman"):
                        pass
                results[variant] = deploy(base, templates, baremetal, heat_type,
                                          venv, podman_url, args.image, workers, paced,
                                          show_tasks=args.tasks)
            figures = ", ".join(f"{k} {v:.1f} s" for k, v in results[variant].items())
            print(f"{variant:16}: {figures}", flush=True)
    if "native" in results:
        base_total = results["native"]["total"]
        for variant, times in results.items():
            print(f"{variant:16} total {times['total']:7.1f} s  "
                  f"{times['total'] / base_total:5.2f}x native")
    if "floor" in results:
        floor_stack = results["floor"]["stack"]
        for variant, times in results.items():
            print(f"{variant:16} stack {times['stack']:7.1f} s  "
                  f"{times['stack'] / floor_stack:5.2f}x floor")
        if "native-paced" in results:
            overhead = results["native-paced"]["total"] / results["floor"]["total"] - 1
            print(f"tripleo-flow's own steps over the bare stack create: {overhead:+.1%}")
    for variant, times in results.items():
        if "own" in times:  # everything but the POST-to-complete the floor also times
            print(f"{variant:16} own steps {times['own']:6.1f} s = "
                  f"{times['own'] / times['posted']:5.1%} of its stack create "
                  f"({times['posted']:.1f} s from the POST)")


if __name__ == "__main__":
    main()
