"""Which Ironic node serves which managed instance of a baremetal deployment.

``node provision`` deploys a node for every ``managed: true`` instance of the
file (:mod:`baremetal` names them).  A node fits an instance when it is
``available``, not in maintenance, not claimed (no ``instance_uuid``), and
either is the node the instance names (``name``: a node name or UUID) or has
the instance's resource class, its ``profile`` capability and the other
capabilities it asks for.  The choice is recorded with the plan (host name ->
node), so a rerun keeps every recorded node and deploys only what is missing,
and ``node unprovision`` knows what to release.

Pure: the nodes (as Ironic lists them) and the record are parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.core.servers import baremetal
from tripleo_flow.core.servers.nodes import capabilities

#: The plan file that records which node serves which host name.
RECORD = "provisioned-nodes.yaml"
#: The image deployed when neither the instance nor its role's defaults name one
#: (TripleO's overcloud image, on a conductor without Glance).
DEFAULT_IMAGE = "file:///var/lib/ironic/images/overcloud-hardened-uefi-full.raw"
#: Node fields the choice needs.
NODE_FIELDS = ("uuid", "name", "provision_state", "maintenance", "instance_uuid",
               "resource_class", "properties")
#: States of a node that serves its instance (a recorded node in another state is
#: deployed again when it is available, else the host name has no node).
SERVING = frozenset({"active"})


def mismatch(instance: baremetal.Instance, node: Mapping[str, Any]) -> str | None:
    """Why ``node`` cannot serve ``instance`` (``None``: it can)."""
    if node.get("provision_state") != "available":
        return f"it is {node.get('provision_state')!r}, not 'available'"
    if node.get("maintenance"):
        return "it is in maintenance"
    if node.get("instance_uuid"):
        return "it already serves an instance"
    if instance.node is not None:
        return None if instance.node in (node.get("uuid"), node.get("name")) \
            else "it is not the node named"
    if (node.get("resource_class") or "baremetal") != instance.resource_class:
        return f"its resource class is {node.get('resource_class')!r}"
    caps = capabilities(node.get("properties") or {})
    wanted = dict(instance.capabilities)
    if instance.profile is not None:
        wanted["profile"] = instance.profile
    for key, value in sorted(wanted.items()):
        if caps.get(key) != value:
            return f"its capability {key} is {caps.get(key)!r}, not {value!r}"
    return None


def _specificity(item: tuple[str, baremetal.Instance]) -> tuple[int, int]:
    """Instances naming their node first, then those asking for more capabilities."""
    instance = item[1]
    asked = len(instance.capabilities) + (instance.profile is not None)
    return (0 if instance.node is not None else 1, -asked)


def _criteria(instance: baremetal.Instance) -> str:
    if instance.node is not None:
        return f"node {instance.node!r}"
    asked = [f"resource class {instance.resource_class!r}"]
    if instance.profile is not None:
        asked.append(f"profile {instance.profile!r}")
    asked += [f"capability {k}:{v}" for k, v in instance.capabilities]
    return ", ".join(asked)


def choose(roles: Sequence[baremetal.Role], nodes: Iterable[Mapping[str, Any]],
           record: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One assignment per managed instance, in the file's order.

    Each is ``{hostname, role, node, node_name, image, deploy}``: ``deploy`` is false
    when the recorded node already serves the host name.

    :raises InvalidInput: no node fits an instance (named, with what it asks for);
        or the node an instance names serves another host name.
    """
    by_id: dict[str, Mapping[str, Any]] = {}
    for node in nodes:
        by_id[str(node["uuid"])] = node
    wanted = [(role.name, inst) for role in roles for inst in role.instances if inst.managed]
    chosen: dict[str, dict[str, Any]] = {}
    taken: set[str] = set()
    for role, inst in wanted:
        kept = record.get(inst.hostname) or {}
        serving = by_id.get(str(kept.get("node")))
        if serving is not None and serving.get("provision_state") in SERVING:
            chosen[inst.hostname] = _assignment(role, inst, serving, deploy=False)
            taken.add(str(serving["uuid"]))
    recorded = {str(entry.get("node")): host for host, entry in record.items()}
    free = sorted((n for n in by_id.values() if str(n["uuid"]) not in taken),
                  key=lambda n: (str(n.get("name") or ""), str(n["uuid"])))
    for role, inst in sorted((w for w in wanted if w[1].hostname not in chosen),
                             key=_specificity):
        # A node recorded for another host name stays its; this host name's own
        # recorded node (undeployed since) comes first.
        fits = sorted((n for n in free if mismatch(inst, n) is None
                       and recorded.get(str(n["uuid"]), inst.hostname) == inst.hostname),
                      key=lambda n: recorded.get(str(n["uuid"])) != inst.hostname)
        if not fits:
            raise exceptions.InvalidInput(_nothing_fits(role, inst, by_id.values(), recorded))
        free.remove(fits[0])
        chosen[inst.hostname] = _assignment(role, inst, fits[0], deploy=True)
    return [chosen[inst.hostname] for _, inst in wanted]


def _nothing_fits(role: str, inst: baremetal.Instance, nodes: Iterable[Mapping[str, Any]],
                  recorded: Mapping[str, str]) -> str:
    named = [n for n in nodes if inst.node in (n.get("uuid"), n.get("name"))]
    if inst.node is not None and named:
        node = named[0]
        owner = recorded.get(str(node["uuid"]), inst.hostname)
        why = (f"it serves {owner}" if owner != inst.hostname
               else mismatch(inst, node) or "another instance of this file takes it")
        return (f"Node {inst.node!r} cannot serve {inst.hostname} (role {role}): {why}. "
                "Make it available, or name another node.")
    return (f"No available node fits {inst.hostname} (role {role}, {_criteria(inst)}). "
            "Register, introspect and provide more nodes, or set the profile capability "
            "of available ones (nodes' capabilities profile:NAME).")


def _assignment(role: str, inst: baremetal.Instance, node: Mapping[str, Any],
                deploy: bool) -> dict[str, Any]:
    return {"hostname": inst.hostname, "role": role, "node": str(node["uuid"]),
            "node_name": str(node.get("name") or node["uuid"]),
            "image": inst.image or DEFAULT_IMAGE, "deploy": deploy}


def recorded(record: Mapping[str, Any], hostname: str, node: str, node_name: str,
             role: str) -> dict[str, Any]:
    """``record`` with ``hostname`` served by ``node``."""
    return {**record, hostname: {"node": node, "node_name": node_name, "role": role}}


def check_record(data: Any) -> dict[str, dict[str, Any]]:
    """A loaded record, checked: ``{hostname: {node, node_name, role}}``."""
    if data is None:
        return {}
    if not isinstance(data, Mapping) or not all(
            isinstance(k, str) and isinstance(v, Mapping) and isinstance(v.get("node"), str)
            for k, v in data.items()):
        raise exceptions.InvalidInput(
            f"The plan's {RECORD} is not a record of provisioned nodes (host name: {{node, "
            "node_name, role}}); restore it from the plan's history.")
    return {k: dict(v) for k, v in data.items()}


def missing(roles: Sequence[baremetal.Role], record: Mapping[str, Any]) -> list[str]:
    """Host names of managed instances that no recorded node serves."""
    return [i.hostname for role in roles for i in role.instances
            if i.managed and i.hostname not in record]


def release(record: Mapping[str, Mapping[str, Any]], hostnames: Iterable[str] | None
            ) -> list[dict[str, Any]]:
    """The recorded nodes of ``hostnames`` (every one when ``None``) to undeploy.

    :raises InvalidInput: a host name is not recorded.
    """
    names = sorted(record) if hostnames is None else list(dict.fromkeys(hostnames))
    unknown = [h for h in names if h not in record]
    if unknown:
        raise exceptions.InvalidInput(
            f"No node was provisioned for {', '.join(unknown)} in this plan (provisioned: "
            f"{', '.join(sorted(record)) or 'none'}).")
    return [{"hostname": h, **record[h]} for h in names]
