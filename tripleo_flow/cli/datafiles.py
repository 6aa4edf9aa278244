"""The two commands on a plan's list files (roles, networks): list and set.

A command module subclasses :class:`ListPlanFile` and :class:`SetPlanFile`
and declares only what differs: the noun, the columns and row of the list,
and the Python API method each command calls.
"""

from __future__ import annotations

import argparse
from typing import Any, ClassVar

from cliff.lister import Lister

from tripleo_flow import exceptions
from tripleo_flow.cli.common import ClientMixin, add_plan_argument, read_yaml_file


class ListPlanFile(ClientMixin, Lister):
    """Base of ``<noun> list``: a row for each item of a plan's list file."""

    #: The column names, in the order of :meth:`row`.
    columns: ClassVar[tuple[str, ...]]

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        return self.columns, [self.row(item) for item in self.fetch(args.plan)]

    def fetch(self, plan: str) -> list[Any]:
        """Every item of the plan's file, with all its attributes."""
        raise NotImplementedError

    def row(self, item: dict[str, Any]) -> tuple[Any, ...]:
        """The values of :attr:`columns` for one item."""
        raise NotImplementedError


class SetPlanFile(ClientMixin, Lister):
    """Base of ``<noun> set FILE``: replace a plan's list with the one in a YAML file."""

    #: What the list holds, for the help and the errors (``roles``).
    noun: ClassVar[str]

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("file", metavar="FILE", help=f"YAML file with a list of {self.noun}.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        items = read_yaml_file(args.file, self.client.conf.limits)
        if not isinstance(items, list):
            raise exceptions.InvalidInput(f"{args.file!r} must hold a list of {self.noun}.")
        return ("name",), [(name,) for name in self.store(args.plan, items)]

    def store(self, plan: str, items: list[Any]) -> list[str]:
        """Replace the plan's list with ``items``; the names stored."""
        raise NotImplementedError
