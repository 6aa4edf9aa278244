"""``tripleo-flow roles ...`` commands."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.lister import Lister

from tripleo_flow import exceptions
from tripleo_flow.cli.common import ClientMixin, add_plan_argument, read_yaml_file


class ListRoles(ClientMixin, Lister):
    """List a plan's roles from roles_data.yaml."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        items = self.client.list_roles(args.plan, detail=True)
        rows = [(i.get("name"), i.get("CountDefault", 0), "primary" in (i.get("tags") or []),
                 len(i.get("ServicesDefault") or [])) for i in items]
        return ("name", "count", "primary", "services"), rows


class SetRoles(ClientMixin, Lister):
    """Replace a plan's roles with those in a YAML file, then render the templates again."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("file", metavar="FILE", help="YAML file with a list of roles.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        items = read_yaml_file(args.file)
        if not isinstance(items, list):
            raise exceptions.InvalidInput(f"{args.file!r} must hold a list of roles.")
        names = self.client.set_roles(args.plan, items)
        return ("name",), [(n,) for n in names]
