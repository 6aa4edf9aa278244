"""Actions that deploy and undeploy Ironic nodes for a plan's managed instances.

``nodes.choose`` picks a node per ``managed: true`` instance of a baremetal
deployment file (:mod:`tripleo_flow.core.servers.provision`), ``nodes.deploy`` deploys one
(provision state ``active``, the node's ``instance_info`` naming the image and
the host name), ``nodes.record`` keeps the choice with the plan
(``provisioned-nodes.yaml``).  ``nodes.unprovision_select``, ``nodes.undeploy``
and ``nodes.forget`` undo it: undeploy (``deleted``: back to ``available`` after
cleaning) and drop the record's entries.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.actions.deployed_servers import deployment_roles, read_record
from tripleo_flow.actions.nodes import NodeAction
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.servers import provision
from tripleo_flow.plans.plan import PlanRepository

#: Provision states from which ``deleted`` undeploys a node.
_UNDEPLOYABLE = frozenset({"active", "deploy failed", "wait call-back", "error"})


class ChooseNodes(NodeAction):
    """Pick an available node for each managed instance of a baremetal deployment file
    (changes nothing)."""

    rerun = Rerun.READS

    def execute(self, plan: str, baremetal_deployment: str) -> list[dict[str, Any]]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        roles = deployment_roles(self.context, repo, plan, baremetal_deployment)
        if not any(i.managed for role in roles for i in role.instances):
            raise exceptions.InvalidInput(
                "The baremetal deployment file has no managed instance (managed: true) to "
                "provision; servers with managed: false are deployed as they are.")
        nodes = self._client().list_nodes(provision.NODE_FIELDS)
        return provision.choose(roles, nodes, read_record(self.context, plan))


class DeployNode(NodeAction):
    """Deploy one chosen node for its host name (nothing when it already serves it).

    Run again with the same choice (a resumed job), it carries on with the claim of
    the first run: the node is deployed once, and its undo still undeploys it.
    """

    rerun = Rerun.CONVERGES

    def execute(self, node: dict[str, Any]) -> dict[str, Any]:
        done = {k: node[k] for k in ("hostname", "role", "node", "node_name")}
        if not node["deploy"]:
            state = self._client().get_node(node["node"], ("provision_state",))
            return {**done, **state, "deployed": False}
        client = self._client()
        uuid = node["node"]
        claim = None
        try:
            found = client.get_node(uuid, ("provision_state", "instance_uuid",
                                           "instance_info"))
            # Run again (a resumed job), the choice still says deploy: the first run
            # claimed the node for this host name already; this run carries on with it.
            serving = (found.get("instance_info") or {}).get("display_name") == \
                node["hostname"]
            adopted = found.get("instance_uuid") if serving else None
            claim = adopted or str(uuidlib.uuid4())
            if adopted is None:
                # Claim the node first: Ironic refuses a second claim (409), so two runs
                # never deploy one node, and an undo touches only its own claim.
                client.patch_node(uuid, [
                    {"op": "add", "path": "/instance_uuid", "value": claim},
                    {"op": "add", "path": "/instance_info/image_source",
                     "value": node["image"]},
                    {"op": "add", "path": "/instance_info/display_name",
                     "value": node["hostname"]}])
            if adopted is None or found.get("provision_state") == "available":
                result = self._move(uuid, "active", "active")
            else:  # deploying, or active already
                result = self._wait(uuid, "active")
        except exceptions.TripleoFlowError as exc:
            if claim is not None:  # a failed with-items item is not reverted for it
                self._undeploy(uuid, claim)
            raise exceptions.IronicError(
                f"Node {node['node_name']!r} was not deployed for {node['hostname']}: "
                f"{exc}") from exc
        return {**done, "provision_state": result["provision_state"], "deployed": True,
                "claim": claim}

    def _undeploy(self, uuid: str, claim: str) -> None:
        client = self._client()
        found = client.find_node(uuid)
        if found is None or found.get("instance_uuid") != claim:
            return  # gone, or not (or no longer) this run's
        if found.get("provision_state") in _UNDEPLOYABLE:
            client.set_provision_state(uuid, "deleted")
            self._wait(uuid, "available")
            found = client.get_node(uuid)
        if found.get("instance_uuid") == claim:
            client.patch_node(uuid, [{"op": "remove", "path": "/instance_uuid"},
                                     {"op": "replace", "path": "/instance_info",
                                      "value": {}}])

    def revert(self, node: dict[str, Any], result: Any = None, **kwargs: Any) -> None:
        """Undeploy the node when this run deployed it (back to available) and drop its
        claim; a node that served its host name before stays deployed."""
        if isinstance(result, dict) and result.get("deployed"):
            self._undeploy(result["node"], result["claim"])


class RecordNodes(Action):
    """Record with the plan which node serves which host name."""

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, nodes: list[dict[str, Any]]) -> dict[str, Any]:
        def add(record: dict[str, Any]) -> dict[str, Any]:
            for item in nodes:
                record = provision.recorded(record, item["hostname"], item["node"],
                                            item["node_name"], item["role"])
            return record
        return {**_edit_record(self, plan, add),
                "hosts": sorted(i["hostname"] for i in nodes)}

    def revert(self, plan: str, result: Any = None, **kwargs: Any) -> None:
        """Put back the record as it was (safe to run twice)."""
        if isinstance(result, dict) and result.get("changed"):
            _restore(self, plan, result["previous"])


def _write_record(action: Action, plan: str, record: dict[str, Any]) -> None:
    """Store ``record`` as the plan's record (none when empty); the caller holds the lock."""
    if record:
        action.context.store.put_object(plan, provision.RECORD, safe_yaml.dump_yaml(record))
    else:
        action.context.store.delete_objects(plan, [provision.RECORD])


def _edit_record(action: Action, plan: str,
                 edit: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """Apply ``edit`` to the plan's record under its lock; the undo record."""
    PlanRepository(action.context.store).require(plan)
    with action.context.hold_plan(plan):
        before = read_record(action.context, plan)
        after = edit(dict(before))
        # A re-run (a resumed job) finds the record edited and gets the first run's undo.
        undo = action.context.undo_record(
            lambda: {"previous": before, "changed": after != before})
        if after != before:
            _write_record(action, plan, after)
    return undo


def _restore(action: Action, plan: str, record: dict[str, Any]) -> None:
    if not PlanRepository(action.context.store).exists(plan):
        return
    with action.context.locks.hold(plan):
        _write_record(action, plan, record)


class SelectProvisioned(Action):
    """The recorded nodes of a plan to release: a file's managed instances, named host
    names, or all (changes nothing)."""

    rerun = Rerun.READS

    def execute(self, plan: str, baremetal_deployment: str | None = None,
                hostnames: list[str] | None = None, all_nodes: bool = False,
                ) -> list[dict[str, Any]]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        given = [baremetal_deployment is not None, bool(hostnames), bool(all_nodes)]
        if sum(given) != 1:
            raise exceptions.InvalidInput(
                "Choose what to unprovision: the managed instances of a baremetal "
                "deployment file, host names, or all of the plan's nodes (one of them).")
        record = read_record(self.context, plan)
        if baremetal_deployment is not None:
            roles = deployment_roles(self.context, repo, plan, baremetal_deployment)
            hostnames = [i.hostname for r in roles for i in r.instances
                         if i.managed and i.hostname in record]
        return provision.release(record, None if all_nodes else hostnames or [])


class UndeployNode(NodeAction):
    """Undeploy one node (back to available once cleaned) and drop its claim.

    No revert: deploying the node again would not bring back its disk; the record
    still names it, so provisioning again redeploys it.
    """

    rerun = Rerun.CONVERGES

    def execute(self, node: dict[str, Any]) -> dict[str, Any]:
        client = self._client()
        uuid = node["node"]
        found = client.find_node(uuid)
        done = {k: node.get(k) for k in ("hostname", "role", "node", "node_name")}
        if found is None:
            return {**done, "provision_state": None, "undeployed": False}
        if found.get("provision_state") in _UNDEPLOYABLE:
            self._move(uuid, "deleted", "available")
        found = client.get_node(uuid, ("provision_state", "instance_uuid"))
        if found.get("instance_uuid"):
            client.patch_node(uuid, [{"op": "remove", "path": "/instance_uuid"}])
        return {**done, "provision_state": found["provision_state"], "undeployed": True}


class ForgetNodes(Action):
    """Drop released host names from the plan's record of provisioned nodes."""

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, nodes: list[dict[str, Any]]) -> dict[str, Any]:
        gone = {i["hostname"] for i in nodes}
        return {**_edit_record(
            self, plan, lambda record: {h: v for h, v in record.items() if h not in gone}),
            "hosts": sorted(gone)}

    def revert(self, plan: str, result: Any = None, **kwargs: Any) -> None:
        """Put back the record as it was (safe to run twice)."""
        if isinstance(result, dict) and result.get("changed"):
            _restore(self, plan, result["previous"])
