"""``tripleo-flow plan environment ...`` commands: a plan's environments in order,
and the user's own environment files added to it or removed from it."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.lister import Lister

from tripleo_flow.cli.common import ClientMixin


def _rows(environments: list[dict[str, Any]]) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    columns = ("order", "path", "user")
    return columns, [tuple(e[c] for c in columns) for e in environments]


class ListEnvironments(ClientMixin, Lister):
    """List a plan's environments in the order they apply (user ones last)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        return _rows(self.client.environments.list(args.name))


class AddEnvironments(ClientMixin, Lister):
    """Add environment files (with the local files they refer to) to a plan."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name.")
        parser.add_argument("files", nargs="+", metavar="FILE", help="Environment file.")
        parser.add_argument("--position", type=int, metavar="N",
                            help="Place them at position N among the user environments "
                                 "(1: first; default: last).")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        self.client.environments.add(args.name, args.files, position=args.position)
        return _rows(self.client.environments.list(args.name))


class RemoveEnvironments(ClientMixin, Lister):
    """Remove user environments (by path, from 'plan environment list') from a plan."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name.")
        parser.add_argument("paths", nargs="+", metavar="PATH",
                            help="Plan path of a user environment.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        self.client.environments.remove(args.name, args.paths)
        return _rows(self.client.environments.list(args.name))
