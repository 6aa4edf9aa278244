"""``tripleo-flow parameters ...`` commands."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.lister import Lister

from tripleo_flow import exceptions
from tripleo_flow.cli.common import (
    ClientMixin,
    add_plan_argument,
    parse_assignments,
    read_yaml_file,
)


class ShowParameters(ClientMixin, Lister):
    """List the parameter values set in a plan (with --schema: every parameter of its stacks)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("--schema", action="store_true",
                            help="List every parameter of the plan's stack tree (validated by "
                            "an ephemeral Heat; cached until the plan changes).")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        if args.schema:
            schema = self.client.parameters.schema(args.plan)["parameters"]
            rows = [(name, e["type"], e["default"], e["value"],
                     ", ".join(p or "(top)" for p in e["paths"]))
                    for name, e in sorted(schema.items())]
            return ("name", "type", "default", "value", "nested path"), rows
        values = self.client.parameters.get(args.plan)
        return ("name", "value"), sorted(values.items())


class SetParameters(ClientMixin, Lister):
    """Set parameter values (NAME=VALUE pairs and/or a YAML file of parameter_defaults)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("values", nargs="*", metavar="NAME=VALUE",
                            help="Values, read as YAML (3 is a number, [a, b] a list).")
        parser.add_argument("--file", metavar="FILE",
                            help="YAML file: a mapping, or one with a parameter_defaults key.")
        parser.add_argument("--validate", action="store_true",
                            help="Check names and types against the plan's parameter schema "
                            "first (may launch an ephemeral Heat); nothing is written on error.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        values: dict[str, Any] = {}
        if args.file:
            data = read_yaml_file(args.file, self.client.conf.limits)
            if isinstance(data, dict) and "parameter_defaults" in data:
                data = data["parameter_defaults"]
            if not isinstance(data, dict):
                raise exceptions.InvalidInput(f"{args.file!r} must hold a mapping of parameters.")
            values.update(data)
        values.update(parse_assignments(args.values, self.client.conf.limits))
        if not values:
            raise exceptions.InvalidInput("Give NAME=VALUE pairs or --file FILE.")
        changed = self.client.parameters.set(args.plan, values, validate=args.validate)
        return ("changed",), [(name,) for name in changed]


class ResetParameters(ClientMixin, Lister):
    """Remove parameter values from a plan (all of them unless names are given)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("names", nargs="*", metavar="NAME", help="Parameters to reset.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        removed = self.client.parameters.reset(args.plan, args.names or None)
        return ("reset",), [(name,) for name in removed]
