"""Backup commands (thin: each calls one Python API method), as TripleO's
``openstack undercloud backup``: everything tripleo-flow keeps, in one archive."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.show import ShowOne

from tripleo_flow import exceptions
from tripleo_flow.cli.common import ClientMixin, show


def add_passphrase_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--passphrase-file", metavar="FILE", help=help_text)


def read_passphrase(path: str | None) -> str | None:
    """The first line of ``path`` (None without one); never taken on the command line."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as stream:
            line = stream.readline().rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise exceptions.InvalidInput(f"Cannot read the passphrase file {path!r}: {exc}.") \
            from exc
    if not line:
        raise exceptions.InvalidInput(f"The passphrase file {path!r} has an empty first line.")
    return line


class CreateBackup(ClientMixin, ShowOne):
    """Back up the data directory into one .tar.gz archive, readable by its owner only.

    The archive holds plans and their history, executions, deployments' work dirs with
    Heat database dumps and config-download, validation results and the local Ironic's
    nodes.

    Refused while a workflow execution or a launched Heat or Ironic runs, and when the
    configuration keeps state outside the data directory (Swift plan store, MariaDB
    executions database, external Ironic).
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("output", metavar="FILE",
                            help="Archive to write (a new file, outside the data directory).")
        add_passphrase_argument(parser, "Encrypt the archive (AES-256-GCM, scrypt) with the "
                                "passphrase on the first line of FILE.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        return show(self.client.backups.create(args.output,
                                               read_passphrase(args.passphrase_file)))


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
        add_passphrase_argument(parser, "The passphrase of an encrypted archive, on the first "
                                "line of FILE.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        return show(self.client.backups.restore(args.archive, force=args.force,
                                                passphrase=read_passphrase(args.passphrase_file)))
