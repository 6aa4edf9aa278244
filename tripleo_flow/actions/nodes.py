"""Actions on Ironic nodes: check, register, select, manage, inspect, provide, clean, delete.

Each talks to the Ironic of the context's configuration (``[ironic] endpoint``,
else the launched local one) through :class:`~tripleo_flow.ironic.client.IronicClient`
and works on one node, so a workflow runs them ``with-items`` in parallel and
gets one result per node.  Results never hold a BMC password (Ironic masks
``driver_info`` secrets, and a result carries no driver_info at all).

While it waits, an action reports the node's provision states to the context's
reporter, as :class:`~tripleo_flow.core.deploy.progress.NodeProgress` values.
"""

from __future__ import annotations

from typing import Any

from tripleo_flow import exceptions, ironic
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.core.deploy import progress
from tripleo_flow.core.servers import nodes as node_files
from tripleo_flow.ironic import watch
from tripleo_flow.ironic.client import IronicClient

#: Node fields a per-node result shows.
RESULT_FIELDS = ("uuid", "name", "provision_state", "power_state", "properties",
                 "inspection_finished_at", "last_error")


class NodeAction(Action):
    """The base of the node actions: the configured Ironic, its waits and progress."""

    def _conf(self) -> Any:
        return self.context.conf

    def _client(self) -> IronicClient:
        return IronicClient(ironic.endpoint(self._conf()))

    def _timeout(self) -> float:
        return float(self._conf().ironic.wait_timeout)

    def _progress(self, node: str) -> Any:
        context = self.context
        if context.reporter is None:
            return None
        return lambda state: context.report(progress.NodeProgress(node, state))

    def _wait(self, node: str, wanted: str) -> dict[str, Any]:
        """Wait until the node rests in ``wanted`` (one poller for every waiting node)."""
        endpoint = ironic.endpoint(self._conf())
        return watch.watcher(endpoint).wait_for(node, wanted, self._timeout(),
                                                self._progress(node))

    def _current(self, node: str) -> dict[str, Any]:
        """The node's result fields now (reads of several items share one listing)."""
        endpoint = ironic.endpoint(self._conf())
        return _result(watch.watcher(endpoint).read(node, self._timeout()))

    def _move(self, node: str, target: str, wanted: str, **extra: Any) -> dict[str, Any]:
        """Ask for ``target`` and wait until the node rests in ``wanted``; its result."""
        progress = self._progress(node)
        with watch.watcher(ironic.endpoint(self._conf())).requesting():
            self._client().set_provision_state(node, target, **extra)
        if progress is not None:
            progress(f"{target} requested")
        return _result(self._wait(node, wanted))


def _result(node: dict[str, Any]) -> dict[str, Any]:
    return {k: node.get(k) for k in RESULT_FIELDS}


class CheckNodes(Action):
    """Check a node import document (and what the import does after registering);
    return one node spec per entry (changes nothing)."""

    rerun = Rerun.READS

    def execute(self, nodes: Any, initial_state: Any = "manageable", introspect: Any = False,
                provide: Any = False) -> list[dict[str, Any]]:
        try:
            node_files.check_import_options(initial_state, introspect, provide)
        except ValueError as exc:
            raise exceptions.InvalidInput(str(exc)) from exc
        try:
            return node_files.parse_nodes(nodes, self.context.limit("nodes_max"))
        except node_files.NodeFileError as exc:
            raise exceptions.InvalidNodes("The node list", exc.entry, exc.reason) from exc


class FindExistingNodes(NodeAction):
    """Tell for each node spec whether Ironic already holds a node of its name or one
    of its MACs (``existing``: that node's uuid, or None), from one listing of the nodes
    and one of the ports, as tripleo-common maps the known nodes once before it
    registers a list; changes nothing."""

    rerun = Rerun.READS

    def execute(self, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        client = self._client()
        by_name = {n["name"]: n["uuid"] for n in client.list_nodes(("uuid", "name"))
                   if n.get("name")}
        by_mac = {str(p["address"]).lower(): p["node_uuid"] for p in client.list_ports()}
        found = []
        for spec in specs:
            owners = [by_mac[mac.lower()] for mac in spec["macs"] if mac.lower() in by_mac]
            existing = by_name.get(spec.get("name") or "") or (owners[0] if owners else None)
            found.append({**spec, "existing": existing})
        return found


class RegisterNode(NodeAction):
    """Register one node in Ironic, or update the node of the same name or MAC; the
    result tells its provision state as registered (a new node is in enroll).

    A named spec that :class:`FindExistingNodes` found absent (``existing`` None) is
    created at once; should a node of its name appear meanwhile (a resume runs this
    again; Ironic answers 409), it is looked up and updated as any other.  An unnamed
    one is always looked up by its MACs first (nothing else would stop a twin)."""

    rerun = Rerun.CONVERGES

    def execute(self, node: dict[str, Any]) -> dict[str, Any]:
        client = self._client()
        try:
            done: dict[str, Any] | None = None
            ports: dict[str, dict[str, Any] | None] = dict.fromkeys(node["macs"])
            # Only a named node: its name is what makes a second create fail (409)
            # rather than make a twin, when a resume runs this again.
            if "existing" in node and node["existing"] is None and node.get("name"):
                try:
                    done = self._create(client, node)
                except exceptions.IronicError as exc:
                    if exc.status != 409:  # 409: a node of its name appeared meanwhile
                        raise
            if done is None:
                ports = {mac: client.find_port(mac) for mac in node["macs"]}
                done = self._register(client, node, ports)
            try:
                for mac, port in ports.items():
                    if port is None:
                        done["ports"].append(client.create_port(done["uuid"], mac)["uuid"])
                    elif port["node_uuid"] != done["uuid"]:
                        raise exceptions.IronicError(
                            f"MAC {mac} belongs to another node ({port['node_uuid']})")
            except exceptions.TripleoFlowError:
                self.revert(node, result=done)  # this item's own half-done work
                raise
        except exceptions.TripleoFlowError as exc:
            raise exceptions.IronicError(f"{node['entry']} was not registered: {exc}") from exc
        return done

    @staticmethod
    def _create(client: IronicClient, node: dict[str, Any]) -> dict[str, Any]:
        """Create the node; the result so far."""
        body = {"driver": node["driver"], "driver_info": node["driver_info"],
                "properties": node["properties"], "resource_class": node["resource_class"]}
        if node.get("name"):
            body["name"] = node["name"]
        created = client.create_node(body)
        return {"uuid": created["uuid"], "name": node.get("name"), "created": True,
                "provision_state": created["provision_state"], "previous": None, "ports": []}

    def _register(self, client: IronicClient, node: dict[str, Any],
                  ports: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
        """Update the node of the same name or MAC, or create it; the result so far."""
        existing = client.find_node(node["name"]) if node.get("name") else None
        if existing is None:
            owners = {p["node_uuid"] for p in ports.values() if p is not None}
            existing = client.get_node(owners.pop()) if owners else None
        if existing is None:
            return self._create(client, node)
        uuid = existing["uuid"]
        previous = {k: existing.get(k) for k in ("driver", "properties")}
        ops = [{"op": "add", "path": f"/driver_info/{k}", "value": v}
               for k, v in node["driver_info"].items()]
        ops += [{"op": "add", "path": f"/properties/{k}", "value": v}
                for k, v in node["properties"].items()]
        ops.append({"op": "replace", "path": "/driver", "value": node["driver"]})
        if node.get("name") and existing.get("name") != node["name"]:
            ops.append({"op": "add", "path": "/name", "value": node["name"]})
        client.patch_node(uuid, ops)
        return {"uuid": uuid, "name": node.get("name"), "created": False,
                "provision_state": existing["provision_state"], "previous": previous,
                "ports": []}

    def revert(self, node: dict[str, Any], result: Any = None, **kwargs: Any) -> None:
        """Delete the node if this run created it; else delete the ports it added and put
        back the node's previous driver and properties (updated BMC credentials stay)."""
        if not isinstance(result, dict):
            return
        client = self._client()
        if result["created"]:
            if client.find_node(result["uuid"]) is not None:
                client.delete_node(result["uuid"])
            return
        for port in result["ports"]:
            try:
                client.delete_port(port)
            except exceptions.IronicError:
                pass  # already gone
        previous = result["previous"] or {}
        client.patch_node(result["uuid"], [
            {"op": "replace", "path": "/driver", "value": previous.get("driver")},
            {"op": "replace", "path": "/properties", "value": previous.get("properties") or {}},
        ])


class SelectNodes(NodeAction):
    """The nodes named (by name or UUID), or every node in ``state`` and out of
    maintenance, as TripleO chooses them (changes nothing).

    A choice by state that finds no node fails, saying which states the nodes are in
    (:class:`~tripleo_flow.exceptions.NoNodesInState`): a workflow that went on would
    do nothing and report success.
    """

    rerun = Rerun.READS

    def execute(self, nodes: list[str] | None = None, state: str | None = None
                ) -> list[dict[str, Any]]:
        client = self._client()
        fields = ("uuid", "name", "provision_state")
        if nodes:
            found = named_nodes(client, nodes, fields)
        elif state:
            found = client.list_nodes(fields, provision_state=state, maintenance=False)
            if not found:
                every = client.list_nodes(("provision_state", "maintenance"))
                raise exceptions.NoNodesInState(state, node_files.state_counts(every))
        else:
            raise exceptions.InvalidInput("Name the nodes to work on, or choose every node in "
                                          "a state (--all-manageable).")
        return [{"uuid": n["uuid"], "name": n.get("name") or n["uuid"],
                 "provision_state": n.get("provision_state")} for n in found]


#: From this many names on, one listing of Ironic's nodes replaces a GET per name.
LISTING_FROM = 4


def named_nodes(client: IronicClient, names: list[str],
                fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """The nodes ``names`` (UUIDs or names) in that order: a single-process Ironic
    serves one listing far sooner than a request per node.  A name the listing does
    not hold is asked for alone (Ironic's answer: its own matching, or NodeNotFound)."""
    if len(names) < LISTING_FROM:
        return [client.get_node(n, fields) for n in names]
    listed = client.list_nodes(fields)
    by_uuid = {n["uuid"]: n for n in listed}
    by_name = {n["name"]: n for n in listed if n.get("name")}

    def one(ident: Any) -> dict[str, Any]:
        # As Ironic looks an ident up: a UUID first, then a name.
        node = (by_uuid.get(ident) or by_name.get(ident)) if isinstance(ident, str) else None
        return node if node is not None else client.get_node(ident, fields)

    return [one(n) for n in names]


class ManageNode(NodeAction):
    """Move one node to ``manageable`` (from enroll: checks its BMC credentials)."""

    rerun = Rerun.CONVERGES

    def execute(self, node: str, state: str | None = None) -> dict[str, Any]:
        """:param state: the node's provision state when known (saves a request)."""
        if state is None:
            state = self._client().get_node(node, ("provision_state",))["provision_state"]
        if state == "manageable":
            return {**self._current(node), "was": state}
        try:
            return {**self._move(node, "manage", "manageable"), "was": state}
        except exceptions.IronicError:
            # Run again (a resumed job), ``state`` is still the state the node was
            # selected in: Ironic refuses to manage the node the first run moved.
            now = self._client().get_node(node, ("provision_state",))["provision_state"]
            if now not in ("manageable", "verifying"):
                raise
            return {**_result(self._wait(node, "manageable")), "was": state}

    def revert(self, node: str, result: Any = None, **kwargs: Any) -> None:
        """Make the node available again when it was available before (enroll cannot be
        gone back to: such a node stays manageable)."""
        if isinstance(result, dict) and result.get("was") == "available":
            self._move(node, "provide", "available")


class InspectNode(NodeAction):
    """Inspect (introspect) one manageable node; return its properties afterwards."""

    rerun = Rerun.CONVERGES

    def execute(self, node: str) -> dict[str, Any]:
        return self._move(node, "inspect", "manageable")


class ProvideNode(NodeAction):
    """Make one manageable node available (Ironic cleans it first when so configured)."""

    rerun = Rerun.CONVERGES

    def execute(self, node: str, state: str | None = None) -> dict[str, Any]:
        """:param state: the node's provision state when known (saves a request)."""
        if state is None:
            state = self._client().get_node(node, ("provision_state",))["provision_state"]
        if state == "available":
            return {**self._current(node), "was": state}
        return {**self._move(node, "provide", "available"), "was": state}

    def revert(self, node: str, result: Any = None, **kwargs: Any) -> None:
        """Move the node back to manageable when this action made it available."""
        if isinstance(result, dict) and result.get("was") == "manageable":
            self._move(node, "manage", "manageable")


class CleanNode(NodeAction):
    """Run manual clean steps on one manageable node."""

    rerun = Rerun.CONVERGES

    def execute(self, node: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
        if not steps:
            raise exceptions.InvalidInput("Cleaning needs at least one clean step.")
        try:
            return self._move(node, "clean", "manageable", clean_steps=steps)
        except exceptions.IronicError:
            self.revert(node)  # a failed item of a with-items task is not reverted for it
            raise

    def revert(self, node: str, result: Any = None, **kwargs: Any) -> None:
        """A node whose cleaning failed ('clean failed') is moved back to manageable;
        completed steps cannot be undone."""
        client = self._client()
        current = client.find_node(node)
        if current is not None and current.get("provision_state") == "clean failed":
            client.set_provision_state(node, "manage")
            self._wait(node, "manageable")


class DeleteNode(NodeAction):
    """Delete one node (and its ports) from Ironic; a deployed node is refused.

    Run again (a resumed job), it fails with NodeNotFound: the node is deleted.  No
    revert: Ironic does not keep a deleted node, and its BMC password is not kept
    anywhere else to register it again.
    """

    rerun = Rerun.REFUSES

    def execute(self, node: str) -> dict[str, Any]:
        client = self._client()
        found = client.get_node(node, ("uuid", "name", "provision_state"))
        if found["provision_state"] not in ("enroll", "manageable", "available",
                                            "clean failed", "inspect failed"):
            raise exceptions.IronicError(
                f"Node {node!r} is {found['provision_state']!r}: unprovision it first.")
        client.delete_node(found["uuid"])
        return {"uuid": found["uuid"], "name": found.get("name"), "deleted": True}
