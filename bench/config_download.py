"""Bench: config-download rendering for 10, 100 and 1000 nodes.

Prints the time of each size (best of 3, garbage collection off while timed),
the per-node cost relative to the 10-node run, and the cost of each node added
since the previous size (flat means linear: the average per node also carries
the fixed cost of the roles).  By default the outputs are synthetic; with
``--outputs WORK_DIR/outputs.yaml`` (saved by a real deploy, e.g. of THT 18.0.0)
they are that stack's real outputs, its Compute role grown to the size (each
added server a copy of the first compute, with its own name, id and address,
and the first compute's software deployments and network config).  The default
stacks of THT 12.1.0 and 18.0.0 have no software deployment (their steps are all
Ansible; only ExtraConfig adds some): ``--extra-config N`` gives every server N
script deployments shaped as THT's ExtraConfigPost ones, to price them.
Run: ``PYTHONPATH=. python bench/config_download.py [--outputs FILE]``.
"""

from __future__ import annotations

import argparse
import copy
import gc
import time
from pathlib import Path
from typing import Any

import yaml

from tripleo_flow.core.deploy import config_download as cd
from tripleo_flow.core.deploy import network_config as nc

EXTRA_SCRIPT = "#!/bin/bash\nset -eu\necho configured > /etc/extra-config\n" * 5
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


def grown(saved: dict[str, Any], nodes: int, role: str = "Compute"
          ) -> tuple[dict[str, Any], dict[str, list[cd.Deployment]]]:
    """Real outputs (``outputs.yaml``) with ``role`` grown so there are ``nodes`` servers."""
    outputs = copy.deepcopy(saved["outputs"])
    ids = outputs["ServerIdData"]["server_ids"]
    others = sum(len(v) for r, v in ids.items() if r != role)
    count = max(nodes - others, 1)
    names = outputs["RoleNetHostnameMap"][role]
    first = {net: hosts[0] for net, hosts in names.items()}
    short = first["ctlplane"].split(".", 1)[0]
    stem = short.rsplit("-", 1)[0]
    host_vars = outputs["AnsibleHostVarsMap"][role]
    template = host_vars[short]
    ids[role] = [f"{ids[role][0][:-8]}{i:08d}" for i in range(count)]
    ips = outputs["RoleNetIpMap"][role]
    for net in ips:
        ips[net] = [f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}" for i in range(count)]
    for net, name in first.items():
        names[net] = [name.replace(short, f"{stem}-{i}", 1) for i in range(count)]
    outputs["AnsibleHostVarsMap"][role] = {
        f"{stem}-{i}": {k: (v.replace(short, f"{stem}-{i}") if isinstance(v, str) else v)
                        for k, v in template.items()} for i in range(count)}
    saved_deployments = saved.get("deployments") or {}
    deployments = {name: [cd.Deployment(**d) for d in deps]
                   for name, deps in saved_deployments.items() if not name.startswith(stem)}
    for i in range(count):  # each grown server: the first's deployments, its own ids
        server = f"{stem}-{i}"
        deployments[server] = [
            cd.Deployment(**{**d, "id": f"{d.get('id') or d['name']}-{i}",
                             "inputs": _renamed(d.get("inputs") or {}, short, server)})
            for d in saved_deployments.get(short) or []]
    network_map = outputs.get(nc.HOSTNAME_MAP)
    if network_map and short in network_map:
        config_id = network_map[short]
        network_map.update({f"{stem}-{i}": config_id for i in range(count)})
    return outputs, deployments


def _renamed(values: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``values`` with the first server's name in its strings replaced by ``new``."""
    return {k: (v.replace(old, new) if isinstance(v, str) else v) for k, v in values.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=Path,
                        help="outputs.yaml of a real deploy's work dir (default: synthetic)")
    parser.add_argument("--extra-config", type=int, default=0, metavar="N",
                        help="give every server N ExtraConfigPost-like script deployments")
    args = parser.parse_args()
    saved = yaml.safe_load(args.outputs.read_text()) if args.outputs else None
    print(f"outputs: {args.outputs or 'synthetic'}")
    base: float | None = None
    previous: tuple[int, float] | None = None
    for nodes in (10, 100, 1000):
        outputs, deployments = grown(saved, nodes) if saved else synthetic(nodes)
        _add_extra_config(outputs, deployments, args.extra_config)
        elapsed = min(_timed(outputs, deployments, saved) for _ in range(3))
        files = cd.render("overcloud", outputs, deployments,
                          network_configs=(saved or {}).get("network_configs"))
        per_node = elapsed / nodes
        base = base or per_node
        count = sum(len(d) for d in deployments.values())
        # The cost of each node added since the previous size: flat when linear (the
        # per-node average also carries the fixed cost of the roles' files).
        marginal = ((elapsed - previous[1]) / (nodes - previous[0]) * 1000
                    if previous else float("nan"))
        previous = (nodes, elapsed)
        print(f"{nodes:5d} nodes: {elapsed:7.3f} s, {len(files):5d} files, {count:5d} "
              f"deployments, {per_node * 1000:6.2f} ms/node (x{per_node / base:.2f} of 10 "
              f"nodes), {marginal:6.3f} ms per added node")


def _add_extra_config(outputs: dict[str, Any], deployments: dict[str, list[cd.Deployment]],
                      count: int) -> None:
    """Give every server ``count`` post deployments as THT's ExtraConfigPost makes them."""
    for server in cd.servers_from_outputs(outputs):
        deployments.setdefault(server.name, []).extend(
            cd.Deployment(f"{server.role}ExtraConfigPost{n}", EXTRA_SCRIPT, "script",
                          {"deploy_server_id": server.server_id, "hostname": server.name},
                          id=f"{server.server_id}-extra-{n}", kind="post_deployments")
            for n in range(count))


def _timed(outputs: dict[str, Any], deployments: dict[str, list[cd.Deployment]],
           saved: dict[str, Any] | None) -> float:
    gc.collect()
    gc.disable()  # as timeit: a collection of the growing's garbage is not the render's
    try:
        start = time.perf_counter()
        cd.render("overcloud", outputs, deployments,
                  network_configs=(saved or {}).get("network_configs"))
        return time.perf_counter() - start
    finally:
        gc.enable()

if __name__ == "__main__":
    main()
