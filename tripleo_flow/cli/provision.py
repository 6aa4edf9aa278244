"""``node provision`` and ``node unprovision`` (thin: each calls one Python API method)."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.lister import Lister

from tripleo_flow import exceptions
from tripleo_flow.cli.common import ClientMixin, add_plan_argument
from tripleo_flow.cli.nodes import NodeProgress, _rows

COLUMNS = ("hostname", "role", "node", "node_name", "provision_state")


class ProvisionNodes(ClientMixin, Lister):
    """Deploy an available node for each managed instance of a baremetal deployment file."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("--baremetal-deployment", metavar="FILE", required=True,
                            help="TripleO's baremetal deployment file; its managed: true "
                                 "instances get nodes chosen by name, resource_class, "
                                 "profile and capabilities.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        done = self.client.nodes.provision(parsed_args.baremetal_deployment,
                                           plan=parsed_args.plan, listeners=[NodeProgress()])
        return _rows(done, (*COLUMNS, "deployed"))


class UnprovisionNodes(ClientMixin, Lister):
    """Undeploy a plan's provisioned nodes (a file's managed instances, host names, or all)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("--baremetal-deployment", metavar="FILE",
                            help="Release the nodes of this file's managed instances.")
        parser.add_argument("--hostname", action="append", dest="hostnames",
                            metavar="HOSTNAME", help="Release this host name's node "
                                                     "(repeatable).")
        parser.add_argument("--all", action="store_true", dest="all_nodes",
                            help="Release every node provisioned for the plan.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        given = [parsed_args.baremetal_deployment is not None, bool(parsed_args.hostnames),
                 parsed_args.all_nodes]
        if sum(given) != 1:
            raise exceptions.InvalidInput(
                "Give one of --baremetal-deployment FILE, --hostname HOSTNAME or --all.")
        done = self.client.nodes.unprovision(
            plan=parsed_args.plan, baremetal_deployment=parsed_args.baremetal_deployment,
            hostnames=parsed_args.hostnames, all_nodes=parsed_args.all_nodes,
            listeners=[NodeProgress()])
        return _rows(done, (*COLUMNS, "undeployed"))
