"""Benchmark: ``plan create`` of a real template tree into Swift, against
``swift upload --object-threads 8`` of the same tree, in the same run.

``plan create`` does more than the upload (reads and checks every YAML file,
renders the j2 templates, generates passwords, writes plan-environment.yaml):
the goal (issue 31) is that all of it costs at most 0.6x the CLI's bare upload
(ratio <= 0.6); at 1.0 it costs as much::

    python bench/plan_create.py                 # tripleo-heat-templates 18.0.0
    python bench/plan_create.py --version 12.1.0 --repeat 5
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.plan_upload import compare, print_report  # noqa: E402
from tests.fixtures_plans import make_client  # noqa: E402
from tests.swift_server import SwiftServer  # noqa: E402
from tripleo_flow.plans.swift import SwiftStore  # noqa: E402


def fetch_tree(version: str) -> Path:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "fetch_tht.py"), version],
                         check=True, capture_output=True, text=True).stdout
    return Path(out.strip().splitlines()[-1])


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

        timings = compare({"tripleo-flow plan create": plan_create,
                           "swift upload (baseline)": swift_upload},
                          repeat=args.repeat, cleanup=store.delete_container, verify=verify)
        ratios = print_report(timings, baseline="swift upload (baseline)")
        client.close()
        store.close()
    print(f"\nplan create / swift upload = {ratios['tripleo-flow plan create']:.2f} "
          "(goal <= 0.6)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
