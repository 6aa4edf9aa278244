"""Whole deployment of the shipped sample plan: pod Heat against native heat-all.

Each round creates the sample plan in a fresh local store and times
``Client.deployments.create()`` end to end (status, plan check, Heat launch, stack create,
outputs, config-download, Heat kill with its database dump, status) with
``heat_type`` native (the baseline) and pod (heat-api + heat-engine on MariaDB
and RabbitMQ).  Prints the medians and pod/native.

Usage: TRIPLEO_FLOW_HEAT_VENV=... python bench/deploy_bench.py [--rounds N] [--engine-workers W]
Needs the Heat virtualenv, podman + runc and the images of ``tripleo-flow heat image build``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.functional.mariadb import free_port  # noqa: E402
from tripleo_flow import config  # noqa: E402
from tripleo_flow.client import Client  # noqa: E402
from tripleo_flow.heat import podman_api  # noqa: E402
from tripleo_flow.plans.local import LocalStore  # noqa: E402

DEFAULT_VENV = Path.home() / ".local/share/tripleo-flow/heat-venv"
DEFAULT_IMAGE = "localhost/tripleo-flow/heat:24.1.2"


def make_client(base: Path, venv: Path, podman_url: str, image: str,
                engine_workers: int, pace_leaves: bool = False) -> Client:
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("data_dir", str(base / "data"))
    for key, value in {"venv": str(venv), "api_port": free_port(), "api_timeout": 300.0,
                       "clouds_yaml": str(base / "clouds.yaml"), "podman_url": podman_url,
                       "image": image, "engine_workers": engine_workers,
                       "pace_leaves": pace_leaves}.items():
        conf.set_override(key, value, group="heat")
    return Client(conf, store=LocalStore(base / "plans"))


def deploy_once(base: Path, heat_type: str, venv: Path, podman_url: str, image: str,
                engine_workers: int) -> float:
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    client = make_client(base, venv, podman_url, image, engine_workers)
    client.plans.create("oc", sample=True)
    start = time.monotonic()
    result = client.deployments.create("oc", heat_type=heat_type, work_dir=base / "work")
    elapsed = time.monotonic() - start
    assert result["deployment_status"] == "DEPLOY_SUCCESS", result
    client.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--engine-workers", type=int, default=2)
    parser.add_argument("--image", default=os.environ.get("TRIPLEO_FLOW_HEAT_IMAGE",
                                                          DEFAULT_IMAGE))
    args = parser.parse_args()
    venv = Path(os.environ.get("TRIPLEO_FLOW_HEAT_VENV", DEFAULT_VENV))
    with tempfile.TemporaryDirectory(prefix="tripleo-flow-deploy-bench-") as tmp:
        root = Path(tmp)
        with podman_api.connect(None, root / "podman"):
            pass
        podman_url = f"unix://{root / 'podman' / 'podman.sock'}"
        times: dict[str, list[float]] = {"native": [], "pod": []}
        for index in range(args.rounds):
            for heat_type in times:
                seconds = deploy_once(root / heat_type, heat_type, venv, podman_url,
                                      args.image, args.engine_workers)
                times[heat_type].append(seconds)
                print(f"round {index + 1}: {heat_type:6} {seconds:6.1f} s", flush=True)
    native, pod = statistics.median(times["native"]), statistics.median(times["pod"])
    print(f"sample plan deploy, median of {args.rounds}: native {native:.1f} s, "
          f"pod ({args.engine_workers} engine workers) {pod:.1f} s, "
          f"pod/native {pod / native:.2f}x")


if __name__ == "__main__":
    main()
