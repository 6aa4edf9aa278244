"""``tripleo-flow action list`` / ``action show``."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.lister import Lister
from cliff.show import ShowOne

from tripleo_flow.cli._format import data
from tripleo_flow.cli.common import ClientMixin


def _inputs(info: Any) -> str:
    return ", ".join(i.name if i.required else f"{i.name}={data(i.default) or 'null'}"
                     for i in info.inputs)


class ListActions(ClientMixin, Lister):
    """List actions with their inputs and description."""

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        rows = [(a.name, _inputs(a), a.description if not a.error else f"BROKEN: {a.error}")
                for a in self.client.actions.list()]
        return ("Name", "Input", "Description"), rows


class ShowAction(ClientMixin, ShowOne):
    """Show an action: description, inputs (type, default) and where it comes from."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="NAME")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        info = self.client.actions.get(parsed_args.name)
        inputs = "\n".join(
            f"{i.name}: {i.type}" + ("" if i.required else f" = {data(i.default) or 'null'}")
            for i in info.inputs)
        return (("Name", "Description", "Input", "Entry point", "Error"),
                (info.name, info.description, inputs, info.target, info.error or ""))
