"""Commands for bare metal nodes and the local Ironic (thin: each calls one Python API method)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cliff.lister import Lister
from cliff.show import ShowOne

from tripleo_flow import exceptions
from tripleo_flow.cli._format import when
from tripleo_flow.cli.common import ClientMixin, show
from tripleo_flow.core.servers.nodes import INITIAL_STATES

LIST_COLUMNS = ("uuid", "name", "driver", "provision_state", "power_state", "properties",
                "inspection_finished_at", "last_error")
RESULT_COLUMNS = ("uuid", "name", "provision_state", "properties", "last_error")


class NodeProgress:
    """Each node's provision state changes, and each task's end, as lines on stderr."""

    def __call__(self, event: Any) -> None:
        if event.event == "progress":
            status = (event.progress or {}).get("status")
            if status:
                sys.stderr.write(f"[{when(event.timestamp)}] {event.task}: {status}\n")
        elif event.event in ("succeeded", "failed"):
            extra = f": {event.error}" if event.error else ""
            sys.stderr.write(f"[{when(event.timestamp)}] {event.task} {event.event}{extra}\n")
        sys.stderr.flush()


def _rows(nodes: list[dict[str, Any]], columns: tuple[str, ...]) -> tuple[Any, Any]:
    return columns, [tuple(node.get(c) for c in columns) for node in nodes]


def _add_selection(parser: argparse.ArgumentParser, all_flag: bool = True) -> None:
    parser.add_argument("nodes", nargs="*", metavar="NODE", help="Node names or UUIDs.")
    if all_flag:
        parser.add_argument("--all-manageable", action="store_true",
                            help="Every node in the manageable state and out of "
                                 "maintenance (none is an error naming their states).")


def _selection(parsed_args: argparse.Namespace) -> dict[str, Any]:
    every = getattr(parsed_args, "all_manageable", False)
    if bool(parsed_args.nodes) == bool(every):
        raise exceptions.InvalidInput("Name the nodes, or give --all-manageable (not both).")
    return {"nodes": parsed_args.nodes or None, "all_manageable": every}


class LaunchIronic(ClientMixin, ShowOne):
    """Launch a local all-in-one Ironic for an ironic-dir (or stop it with --kill)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--ironic-dir", metavar="DIR",
                            help="Work directory; artifacts go to DIR/ironic-launcher "
                                 "(default: [ironic] ironic_dir).")
        parser.add_argument("--kill", action="store_true",
                            help="Stop Ironic, saving its node database.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        if parsed_args.kill:
            return show(self.client.ironic.kill(parsed_args.ironic_dir))
        return show(self.client.ironic.launch(parsed_args.ironic_dir))


class ImportNodes(ClientMixin, Lister):
    """Register or update the nodes of an instackenv.json or nodes YAML file in Ironic."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("file", metavar="FILE", help="instackenv.json or nodes YAML.")
        parser.add_argument("--initial-state", choices=INITIAL_STATES, default="manageable",
                            help="Where to leave the nodes found in enroll (new ones): "
                                 "manageable checks their BMC credentials (default, as "
                                 "TripleO), available also provides them, enroll only "
                                 "registers them.")
        parser.add_argument("--introspect", action="store_true",
                            help="Introspect every node of the file afterwards.")
        parser.add_argument("--provide", action="store_true",
                            help="Make every node of the file available afterwards.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        done = self.client.nodes.register(parsed_args.file,
                                          initial_state=parsed_args.initial_state,
                                          introspect=parsed_args.introspect,
                                          provide=parsed_args.provide,
                                          listeners=[NodeProgress()])
        return _rows(done, ("uuid", "name", "created", "provision_state"))


class IntrospectNodes(ClientMixin, Lister):
    """Introspect nodes (moving them to manageable first); --provide makes them available."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        _add_selection(parser)
        parser.add_argument("--provide", action="store_true",
                            help="Make the nodes available once introspected.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        done = self.client.nodes.introspect(provide=parsed_args.provide,
                                            listeners=[NodeProgress()],
                                            **_selection(parsed_args))
        return _rows(done, RESULT_COLUMNS)


class ProvideNodes(ClientMixin, Lister):
    """Make manageable nodes available for deployment."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        _add_selection(parser)
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        done = self.client.nodes.provide(listeners=[NodeProgress()], **_selection(parsed_args))
        return _rows(done, RESULT_COLUMNS)


class ManageNodes(ClientMixin, Lister):
    """Move nodes to manageable (from enroll this checks their BMC credentials)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("nodes", nargs="+", metavar="NODE", help="Node names or UUIDs.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        done = self.client.nodes.manage(parsed_args.nodes, listeners=[NodeProgress()])
        return _rows(done, RESULT_COLUMNS)


class CleanNodes(ClientMixin, Lister):
    """Run manual clean steps on manageable nodes (default: erase devices' metadata)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        _add_selection(parser)
        parser.add_argument("--steps", metavar="JSON",
                            help='Clean steps as JSON: [{"interface": "deploy", "step": '
                                 '"erase_devices_metadata"}].')
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        steps = None
        if parsed_args.steps:
            try:
                steps = json.loads(parsed_args.steps)
            except ValueError as exc:
                raise exceptions.InvalidInput(f"--steps is not JSON: {exc}.") from exc
        done = self.client.nodes.clean(steps=steps, listeners=[NodeProgress()],
                                       **_selection(parsed_args))
        return _rows(done, RESULT_COLUMNS)


class DeleteNodes(ClientMixin, Lister):
    """Delete nodes from Ironic."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("nodes", nargs="+", metavar="NODE", help="Node names or UUIDs.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        done = self.client.nodes.delete(parsed_args.nodes, listeners=[NodeProgress()])
        return _rows(done, ("uuid", "name", "deleted"))


class ListNodes(ClientMixin, Lister):
    """List nodes with their states and (introspected) properties."""

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        return _rows(self.client.nodes.list(), LIST_COLUMNS)


class ShowNode(ClientMixin, ShowOne):
    """Show one node: states, properties, capabilities and ports."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("node", metavar="NODE", help="Node name or UUID.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        return show(self.client.nodes.get(parsed_args.node))
