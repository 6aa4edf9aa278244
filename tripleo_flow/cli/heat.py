"""Commands for the ephemeral Heat (thin: each calls one Python API method)."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.show import ShowOne

from tripleo_flow.cli.common import ClientMixin, show
from tripleo_flow.heat import HEAT_TYPES


class LaunchHeat(ClientMixin, ShowOne):
    """Launch an ephemeral Heat for a heat-dir (or kill it with --kill)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--heat-type", choices=HEAT_TYPES,
                            help="How Heat runs (default: what runs in --heat-dir, "
                                 "else the type its dump was made by, else [heat] "
                                 "heat_type).")
        parser.add_argument("--heat-dir", required=True, metavar="DIR",
                            help="Work directory; artifacts go to DIR/heat-launcher.")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--restore-db", action="store_true",
                           help="Start on a fresh database loaded from heat-db-dump.sql.")
        group.add_argument("--kill", action="store_true",
                           help="Dump the database, wipe it and stop Heat.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        client = self.client
        if parsed_args.kill:
            return show(client.heat.kill(parsed_args.heat_dir, parsed_args.heat_type))
        return show(client.heat.launch(parsed_args.heat_dir, parsed_args.heat_type,
                                       restore_db=parsed_args.restore_db))


class HeatStatus(ClientMixin, ShowOne):
    """Show whether the Heat of a heat-dir runs and answers."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--heat-type", choices=HEAT_TYPES)
        parser.add_argument("--heat-dir", required=True, metavar="DIR")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        client = self.client
        return show(client.heat.status(parsed_args.heat_dir, parsed_args.heat_type))


class InstallHeat(ClientMixin, ShowOne):
    """Create Heat's own virtualenv (openstack-heat 24.1.2 and the openstack client)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--force", action="store_true",
                            help="Recreate the virtualenv even when it is up to date.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        client = self.client
        return show(client.heat.install(force=parsed_args.force))


class BuildHeatImage(ClientMixin, ShowOne):
    """Build the local Debian base and Heat images for --heat-type container and pod."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--force", action="store_true",
                            help="Rebuild both images even when they exist.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        client = self.client
        return show(client.heat.build_image(force=parsed_args.force))
