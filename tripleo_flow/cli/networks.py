"""``tripleo-flow networks ...`` commands."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.lister import Lister

from tripleo_flow import exceptions
from tripleo_flow.cli.common import ClientMixin, add_plan_argument, read_yaml_file


class ListNetworks(ClientMixin, Lister):
    """List a plan's networks from network_data.yaml."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        items = self.client.list_networks(args.plan, detail=True)
        rows = [(i.get("name"), i.get("name_lower", str(i.get("name", "")).lower()),
                 i.get("enabled", True), i.get("ip_subnet", ""), i.get("vip", False))
                for i in items]
        return ("name", "name_lower", "enabled", "ip_subnet", "vip"), rows


class SetNetworks(ClientMixin, Lister):
    """Replace a plan's networks with those in a YAML file, then render the templates again."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("file", metavar="FILE", help="YAML file with a list of networks.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        items = read_yaml_file(args.file)
        if not isinstance(items, list):
            raise exceptions.InvalidInput(f"{args.file!r} must hold a list of networks.")
        names = self.client.set_networks(args.plan, items)
        return ("name",), [(n,) for n in names]
