"""Backup commands (thin: each calls one Python API method), as TripleO's
``openstack undercloud backup``: everything tripleo-flow keeps, in one archive."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.show import ShowOne

from tripleo_flow.cli.common import ClientMixin, show


class CreateBackup(ClientMixin, ShowOne):
    """Back up the data directory (plans and their history, executions, deployments'
    work dirs with Heat database dumps and config-download, validation results, the
    local Ironic's nodes) into one .tar.gz archive, readable by its owner only.

    Refused while a workflow execution or a launched Heat or Ironic runs, and when the
    configuration keeps state outside the data directory (Swift plan store, MariaDB
    executions database, external Ironic).
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("output", metavar="FILE",
                            help="Archive to write (a new file, outside the data directory).")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        return show(self.client.create_backup(args.output))


class RestoreBackup(ClientMixin, ShowOne):
    """Restore the data directory from an archive of 'backup create'.

    The archive is checked whole (its manifest and checksums) before anything changes;
    a data directory that already holds state is replaced only with --force, its
    previous state then kept aside (shown as 'previous').
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("archive", metavar="FILE", help="Archive written by backup create.")
        parser.add_argument("--force", action="store_true",
                            help="Replace the state the data directory already holds.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        return show(self.client.restore_backup(args.archive, force=args.force))
