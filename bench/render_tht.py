#!/usr/bin/env python3
"""Time render_plan on a real tripleo-heat-templates tree against a bare baseline.

The baseline renders the same templates with plain jinja2 (one environment,
no per-template data copies, no YAML check of the output), which is about
what TripleO's process-templates.py does.  The ratio shows what tripleo-flow's
isolation and validation cost.

Usage: python bench/render_tht.py [VERSION] [ROUNDS]   (default 12.1.0, 3)
"""

from __future__ import annotations

import pathlib
import posixpath
import subprocess
import sys
import time

import jinja2

from tripleo_flow.core.plan import rendering

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_tree(version: str) -> dict[str, bytes]:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "fetch_tht.py"), version],
                         check=True, capture_output=True, text=True).stdout
    tree = pathlib.Path(out.strip().splitlines()[-1])
    return {p.relative_to(tree).as_posix(): p.read_bytes() for p in tree.rglob("*") if p.is_file()}


def baseline(files: dict[str, bytes]) -> int:
    roles = rendering.load_roles(files)
    networks = rendering._prepare_networks(rendering.load_networks(files))
    enabled = rendering.enabled_networks(networks)
    count = 0
    for source in sorted(files):
        if not source.endswith(".j2.yaml"):
            continue
        env = jinja2.Environment(loader=rendering.PlanLoader(files, posixpath.dirname(source)))
        template = env.from_string(files[source].decode())
        if source.endswith(".role.j2.yaml"):
            outs = [template.render(role=r, networks=networks) for r in roles]
        elif source.endswith(".network.j2.yaml"):
            outs = [template.render(network=n) for n in enabled]
        else:
            outs = [template.render(roles=roles, networks=networks)]
        count += len(outs)
    return count


def best_of(rounds: int, func, *args) -> tuple[float, int]:
    best, result = float("inf"), 0
    for _ in range(rounds):
        start = time.perf_counter()
        result = func(*args)
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    version = sys.argv[1] if len(sys.argv) > 1 else "12.1.0"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    files = load_tree(version)
    base, base_count = best_of(rounds, baseline, files)
    ours, outputs = best_of(rounds, lambda f: len(rendering.render_plan(f)), files)
    print(f"tripleo-heat-templates {version}: {len(files)} files, {outputs} rendered "
          f"(baseline {base_count})")
    print(f"baseline (plain jinja2): {base:.2f} s")
    print(f"render_plan:             {ours:.2f} s  ratio {ours / base:.2f}x")


if __name__ == "__main__":
    main()
