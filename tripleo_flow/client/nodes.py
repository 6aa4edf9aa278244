"""Bare metal nodes in Ironic (``client.nodes``), and the local Ironic
(``client.ironic``).

Every node operation that changes something runs a workflow of the shipped
``tripleo.nodes`` workbook (``workbooks/nodes.yaml``), the same one the HTTP
API and ``workflow run`` start; reads go to Ironic directly.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions, ironic
from tripleo_flow.client.base import Manager
from tripleo_flow.client.deploy import read_baremetal
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.servers import nodes as node_files
from tripleo_flow.plans.plan import check_plan_name

if TYPE_CHECKING:
    from tripleo_flow.client.executions import ExecutionManager
    from tripleo_flow.client.session import Session
    from tripleo_flow.engine.compile.runner import Listener
    from tripleo_flow.engine.store.executions import Execution
    from tripleo_flow.ironic.client import IronicClient
    from tripleo_flow.ironic.launcher import IronicLauncher

WORKBOOK = "tripleo.nodes"
#: Node fields that are only links to sub-resources.
_LINKS = frozenset({"states", "portgroups", "volume", "ports", "firmware"})


class IronicManager(Manager):
    """The local all-in-one Ironic (``client.ironic``)."""

    def _ironic_launcher(self, ironic_dir: str | os.PathLike[str] | None) -> IronicLauncher:
        from tripleo_flow.ironic.launcher import IronicLauncher

        return IronicLauncher(ironic_dir or ironic.ironic_dir(self._session.conf),
                              ironic.venv_path(self._session.conf),
                              api_timeout=self._session.conf.ironic.api_timeout)

    def launch(self, ironic_dir: str | os.PathLike[str] | None = None,
               owned_by: str | None = None) -> dict[str, Any]:
        """Start a local all-in-one Ironic for ``ironic_dir`` (default ``[ironic] ironic_dir``).

        :param owned_by: it then stops when this process exits, however it exits.
        :raises IronicRunning: one already runs from that directory.
        """
        return self._ironic_launcher(ironic_dir).launch(owned_by=owned_by).as_dict()

    def kill(self, ironic_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """Stop the local Ironic of ``ironic_dir``, saving its node database."""
        return self._ironic_launcher(ironic_dir).kill().as_dict()

    def status(self, ironic_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        return self._ironic_launcher(ironic_dir).status()


class NodeManager(Manager):
    """Register, introspect, provide, manage, clean, delete, provision, list and show
    nodes (``client.nodes``)."""

    def __init__(self, session: Session, executions: ExecutionManager) -> None:
        super().__init__(session)
        self._executions = executions

    def _ironic(self) -> IronicClient:
        from tripleo_flow.ironic.client import IronicClient

        return IronicClient(ironic.endpoint(self._session.conf))

    # -- workflows -------------------------------------------------------------------

    def _run_nodes(self, workflow: str, inputs: dict[str, Any],
                   listeners: Iterable[Listener] | None) -> list[dict[str, Any]]:
        inputs.setdefault("concurrency", self._session.conf.ironic.concurrency)
        execution = self._executions.create(f"{WORKBOOK}.{workflow}", inputs, listeners=listeners)
        return list((execution.output or {}).get("nodes") or [])

    def start_workflow(self, workflow: str, inputs: Mapping[str, Any],
                       api_user: bool = False) -> Execution:
        """Start ``tripleo.nodes.<workflow>`` in the background (what the HTTP API does).

        A node list to ``register`` is checked first, so a bad entry (:class:`InvalidNodes`)
        or a bad ``initial_state`` (:class:`InvalidInput`) is refused before an execution
        starts.
        """
        given = dict(inputs)
        if workflow == "register":
            _check_import_options(given)
            try:
                node_files.parse_nodes(given.get("nodes"), self._session.conf.limits.nodes_max)
            except node_files.NodeFileError as exc:
                raise exceptions.InvalidNodes("The node list", exc.entry, exc.reason) from exc
        if workflow in ("provision", "unprovision"):
            check_plan_name(str(given.setdefault("plan", "overcloud")))
        if workflow == "unprovision":
            _check_release(given)
        if workflow == "clean" and not given.get("steps"):
            given.pop("steps", None)  # the workbook's default: TripleO's metadata erase
        given.setdefault("concurrency", self._session.conf.ironic.concurrency)
        return self._executions.create(f"{WORKBOOK}.{workflow}", given, wait=False,
                                       api_user=api_user)

    def register(self, source: str | os.PathLike[str] | list[Any] | dict[str, Any],
                 initial_state: str = "manageable", introspect: bool = False,
                 provide: bool = False, listeners: Iterable[Listener] | None = None
                 ) -> list[dict[str, Any]]:
        """Register or update the nodes of an instackenv.json / nodes YAML file (a path, or
        its parsed document), idempotent by name or MAC; as TripleO's import, leave the
        nodes found in enroll (the new ones) ``manageable``, or in ``initial_state``.

        :param initial_state: ``manageable`` (TripleO's default: their BMC credentials
            are checked), ``available``, or ``enroll`` (registered only)
        :param introspect: then introspect every node of the file
        :param provide: then make every node of the file available
        :returns: per node: uuid, name, created (False: an existing node was updated),
            and the provision state it ends in.
        :raises InvalidNodes: an entry is wrong (named); nothing was registered.
        :raises InvalidInput: an unknown ``initial_state``, or ``enroll`` with
            ``introspect`` or ``provide``; nothing was registered.
        :raises WorkflowFailed: Ironic refused a node (named), or could not manage,
            introspect or provide it; the nodes this run created were deleted and those
            it updated put back.
        """
        options = {"initial_state": initial_state, "introspect": introspect,
                   "provide": provide}
        _check_import_options(options)
        label = "The node list"
        document: Any = source
        if isinstance(source, (str, os.PathLike)):
            label = str(source)
            document = _read(Path(source), self._session.conf.limits)
        try:
            node_files.parse_nodes(document, self._session.conf.limits.nodes_max)
        except node_files.NodeFileError as exc:
            raise exceptions.InvalidNodes(label, exc.entry, exc.reason) from exc
        entries = document.get("nodes") if isinstance(document, dict) else document
        return self._run_nodes("register", {"nodes": entries, **options}, listeners)

    def introspect(self, nodes: list[str] | None = None, all_manageable: bool = False,
                   provide: bool = False, listeners: Iterable[Listener] | None = None,
                   ) -> list[dict[str, Any]]:
        """Introspect ``nodes`` (or every manageable node out of maintenance), then
        provide them if asked.

        :returns: per node: its state and the properties inspection left.
        :raises WorkflowFailed: with ``all_manageable``, no node is manageable (the
            message tells the states the nodes are in, and what to run); nothing was done.
        """
        return self._run_nodes("introspect", {"nodes": nodes or None,
                                              "all_manageable": all_manageable,
                                              "provide": provide}, listeners)

    def provide(self, nodes: list[str] | None = None, all_manageable: bool = False,
                listeners: Iterable[Listener] | None = None) -> list[dict[str, Any]]:
        """Make ``nodes`` (or every manageable node out of maintenance) available.

        :raises WorkflowFailed: with ``all_manageable``, no node is manageable (as
            :meth:`introspect`).
        """
        return self._run_nodes("provide", {"nodes": nodes or None,
                                           "all_manageable": all_manageable}, listeners)

    def manage(self, nodes: list[str],
               listeners: Iterable[Listener] | None = None) -> list[dict[str, Any]]:
        """Move ``nodes`` to manageable."""
        return self._run_nodes("manage", {"nodes": nodes}, listeners)

    def clean(self, nodes: list[str] | None = None, all_manageable: bool = False,
              steps: list[dict[str, Any]] | None = None,
              listeners: Iterable[Listener] | None = None) -> list[dict[str, Any]]:
        """Run manual clean ``steps`` (default: erase devices' metadata) on ``nodes`` (or
        every manageable node out of maintenance: none fails, as :meth:`introspect`)."""
        inputs: dict[str, Any] = {"nodes": nodes or None, "all_manageable": all_manageable}
        if steps:
            inputs["steps"] = steps
        return self._run_nodes("clean", inputs, listeners)

    def delete(self, nodes: list[str],
               listeners: Iterable[Listener] | None = None) -> list[dict[str, Any]]:
        """Delete ``nodes`` from Ironic."""
        return self._run_nodes("delete", {"nodes": nodes}, listeners)

    def provision(self, baremetal_deployment: str | os.PathLike[str],
                  plan: str = "overcloud",
                  listeners: Iterable[Listener] | None = None) -> list[dict[str, Any]]:
        """Deploy a node for each managed instance (``managed: true``) of a baremetal
        deployment file (a path, or its YAML text) and record them with ``plan``.

        Rerunning deploys only what is missing; ``deploy --baremetal-deployment`` with
        the same file then takes the nodes as deployed servers.

        :returns: per instance: hostname, role, node, node_name, provision_state and
            deployed (False: the node already served the host name).
        :raises WorkflowFailed: no node fits an instance, or Ironic failed to deploy
            one; the nodes this run deployed were undeployed, the record is unchanged.
        """
        check_plan_name(plan)
        return self._run_nodes("provision", {
            "plan": plan, "baremetal_deployment": read_baremetal(baremetal_deployment)},
            listeners)

    def unprovision(self, plan: str = "overcloud",
                    baremetal_deployment: str | os.PathLike[str] | None = None,
                    hostnames: list[str] | None = None, all_nodes: bool = False,
                    listeners: Iterable[Listener] | None = None
                    ) -> list[dict[str, Any]]:
        """Undeploy the nodes provisioned for ``plan`` (those of the file's managed
        instances, the named ``hostnames``, or all) and drop them from its record."""
        check_plan_name(plan)
        text = None if baremetal_deployment is None else read_baremetal(baremetal_deployment)
        inputs = {"plan": plan, "baremetal_deployment": text, "hostnames": hostnames or None,
                  "all_nodes": all_nodes}
        _check_release(inputs)
        return self._run_nodes("unprovision", inputs, listeners)

    # -- reads -----------------------------------------------------------------------

    def list(self) -> list[dict[str, Any]]:
        """Every node with its state and (introspected) properties."""
        return self._ironic().list_nodes()

    def get(self, node: str) -> dict[str, Any]:
        """One node (name or UUID) with its properties, ports and capabilities.

        BMC passwords read as Ironic masks them (``******``).
        """
        client = self._ironic()
        found = client.get_node(node)
        shown = {k: v for k, v in found.items()
                 if not k.endswith("_interface") and k not in _LINKS}
        shown["ports"] = [p["address"] for p in client.node_ports(found["uuid"])]
        shown["capabilities"] = node_files.capabilities(found.get("properties") or {})
        return shown


def _check_import_options(inputs: Mapping[str, Any]) -> None:
    """The import's initial state, introspect and provide, as given or the workbook's
    defaults (else InvalidInput, nothing started)."""
    try:
        node_files.check_import_options(inputs.get("initial_state", "manageable"),
                                        inputs.get("introspect", False),
                                        inputs.get("provide", False))
    except ValueError as exc:
        raise exceptions.InvalidInput(str(exc)) from exc


def _check_release(inputs: Mapping[str, Any]) -> None:
    """Exactly one choice of what to unprovision (else InvalidInput, nothing started)."""
    chosen = [inputs.get("baremetal_deployment") is not None, bool(inputs.get("hostnames")),
              bool(inputs.get("all_nodes"))]
    if sum(chosen) != 1:
        raise exceptions.InvalidInput(
            "Choose what to unprovision: the managed instances of a baremetal deployment "
            "file, host names, or all of the plan's nodes (exactly one).")


def _read(path: Path, limits: Any) -> Any:
    """A node file: JSON (instackenv.json) or YAML, within the YAML limits."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise exceptions.InvalidInput(f"Cannot read {str(path)!r}: {exc.strerror}.") from exc
    try:
        return safe_yaml.load_yaml(data, str(path), max_nodes=limits.yaml_max_nodes,
                                 max_depth=limits.yaml_max_depth)
    except exceptions.InvalidTemplate as exc:
        raise exceptions.InvalidInput(
            f"{str(path)!r} is neither JSON nor YAML: {exc.reason}") from exc


__all__ = ["IronicManager", "NodeManager"]
