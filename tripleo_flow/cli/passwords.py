"""``tripleo-flow passwords ...`` commands."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.lister import Lister

from tripleo_flow.cli.common import ClientMixin, add_plan_argument


class ShowPasswords(ClientMixin, Lister):
    """List a plan's password names (values only with --show-values)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("--show-values", action="store_true",
                            help="Print the secret values too.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        secrets = self.client.passwords.get(args.plan)
        if args.show_values:
            return ("name", "value"), sorted(secrets.items())
        return ("name",), [(name,) for name in sorted(secrets)]


class RotatePasswords(ClientMixin, Lister):
    """Rotate a plan's passwords (all rotatable ones, or those named)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("--password", action="append", dest="rotate", metavar="NAME",
                            help="Rotate only this password (repeatable).")
        parser.add_argument("--do-not-rotate", action="append", metavar="NAME",
                            help="Never rotate this password (repeatable).")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        changed = self.client.passwords.rotate(args.plan, args.rotate, args.do_not_rotate)
        return ("rotated",), [(name,) for name in changed]
