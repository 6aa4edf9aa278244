"""``tripleo-flow capabilities ...`` commands."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.lister import Lister

from tripleo_flow.cli.common import ClientMixin, add_plan_argument


class ShowCapabilities(ClientMixin, Lister):
    """List a plan's environments by topic and group, marking the enabled ones."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        caps = self.client.capabilities.get(args.plan)
        rows = []
        for topic in caps.values():
            for group in topic.get("environment_groups", []):
                for env in group.get("environments", []):
                    rows.append((topic.get("title", ""), group.get("title", ""),
                                 env.get("file", ""), env.get("enabled", False),
                                 env.get("title", "")))
        return ("topic", "group", "file", "enabled", "title"), rows


class SetCapabilities(ClientMixin, Lister):
    """Enable or disable environment files of a plan."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        parser.add_argument("--enable", action="append", default=[], metavar="PATH",
                            help="Environment file to enable (repeatable).")
        parser.add_argument("--disable", action="append", default=[], metavar="PATH",
                            help="Environment file to disable (repeatable).")
        parser.add_argument("--purge", action="store_true",
                            help="Keep only the environments given with --enable.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        selection = {p: True for p in args.enable}
        selection.update({p: False for p in args.disable})
        envs = self.client.capabilities.update(args.plan, selection, purge=args.purge)
        return ("environment",), [(e.get("path", "(inline data)"),) for e in envs]
