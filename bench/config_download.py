"""Bench: config-download rendering for 10, 100 and 1000 synthetic nodes.

Prints the time of each size and the per-node cost relative to the 10-node
run (a ratio near 1 means linear).  Run: ``PYTHONPATH=. python bench/config_download.py``.
"""

from __future__ import annotations

import time
from typing import Any

from tripleo_flow.core import config_download as cd

ROLES = ("Controller", "Compute", "CephStorage")
TASKS = [{"name": f"task {i}", "debug": {"msg": i}, "when": [f"step|int == {i % 6}"]}
         for i in range(30)]


def synthetic(nodes: int) -> tuple[dict[str, Any], dict[str, list[cd.Deployment]]]:
    per_role = {r: [f"oc-{r.lower()}-{i}" for i in range(nodes // len(ROLES) + (j < nodes % 3))]
                for j, r in enumerate(ROLES)}
    outputs = {
        "RoleNames": list(ROLES),
        "RoleData": {r: {"service_names": [f"OS::TripleO::Services::S{k}" for k in range(20)],
                         "deploy_steps_tasks": TASKS, "host_prep_tasks": TASKS[:5]}
                     for r in ROLES},
        "RoleConfig": {"deploy_steps_playbook": [{"hosts": "allovercloud", "tasks": []}]},
        "RoleGroupVars": {r: {"var": r} for r in ROLES},
        "AnsibleHostVarsMap": {r: {h: {"ansible_host": f"10.0.{i // 250}.{i % 250}"}
                                   for i, h in enumerate(hs)} for r, hs in per_role.items()},
        "HostnameData": per_role,
        "ServerIdData": {"server_ids": {r: [f"id-{h}" for h in hs]
                                        for r, hs in per_role.items()}},
    }
    deployments = {h: [cd.Deployment(f"{r}Deployment", {"datafiles": {"role": {"x": 1}}},
                                      "hiera", {"hostname": h})]
                   for r, hs in per_role.items() for h in hs}
    return outputs, deployments


def main() -> None:
    base: float | None = None
    for nodes in (10, 100, 1000):
        outputs, deployments = synthetic(nodes)
        start = time.perf_counter()
        files = cd.render("overcloud", outputs, deployments)
        elapsed = time.perf_counter() - start
        per_node = elapsed / nodes
        base = base or per_node
        print(f"{nodes:5d} nodes: {elapsed:7.3f} s, {len(files):5d} files, "
              f"{per_node * 1000:6.2f} ms/node, per-node cost x{per_node / base:.2f} of 10 nodes")


if __name__ == "__main__":
    main()
