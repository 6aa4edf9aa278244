"""``tripleo-flow action list`` / ``action show`` / ``action execution run``."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.lister import Lister
from cliff.show import ShowOne

from tripleo_flow.cli._format import data
from tripleo_flow.cli.common import ClientMixin
from tripleo_flow.common import jsonvalues
from tripleo_flow.exceptions import InvalidInput


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


class RunActionExecution(ClientMixin, ShowOne):
    """Run an action as an execution of its own (recorded as action:NAME) and show it."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="NAME", help="The action (see action list).")
        parser.add_argument("--input", default="{}", metavar="JSON",
                            help="The action's inputs, a JSON object (as Mistral's action "
                            "execution run).")
        parser.add_argument("--no-wait", "--async", action="store_true", dest="no_wait",
                            help="Start it in the background (with [jobboard] backend_url: "
                            "post it for a conductor) and print its execution.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        from tripleo_flow.cli.workflows import execution_row

        limits = self.client.conf.limits
        try:
            inputs = jsonvalues.loads(parsed_args.input, limits.yaml_max_depth,
                                      limits.yaml_max_nodes)
        except InvalidInput as exc:  # worded for a request body
            raise InvalidInput(f"--input: {exc}") from None
        if not isinstance(inputs, dict):
            raise InvalidInput("--input must be a JSON object of the action's inputs.")
        return execution_row(self.client.action_executions.create(
            parsed_args.name, inputs, wait=not parsed_args.no_wait))
