"""openstackclient plugin module (entry point ``openstack.cli.extension``: tripleo).

Commands live in the group ``openstack.tripleo.v1``; they are the tripleo-flow
command classes (see :mod:`tripleo_flow.openstack.commands`).  They need no
Keystone session: the plan store and the rest come from tripleo-flow's own
configuration, named with ``--tripleo-config-file``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

API_NAME = "tripleo"
API_VERSION_OPTION = "os_tripleo_api_version"
DEFAULT_API_VERSION = "1"
API_VERSIONS = ("1",)
CONFIG_ENV = "TRIPLEO_FLOW_CONFIG_FILE"


def config_files(options: Any) -> list[str]:
    """The tripleo-flow configuration files named on the command line or in the env."""
    files = list(getattr(options, "tripleo_config_file", None) or [])
    if not files and os.environ.get(CONFIG_ENV):
        files = [os.environ[CONFIG_ENV]]
    return files


def make_client(instance: Any) -> Any:
    """The tripleo-flow Python API for openstackclient's client manager."""
    from tripleo_flow.cli import hint_words
    from tripleo_flow.client import Client

    hint_words.install()  # errors name their next steps as tripleo-flow commands
    options = getattr(instance, "_cli_options", None)
    config = getattr(options, "config", None) or {}
    files = list(config.get("tripleo_config_file") or [])
    return Client.from_config_files(files or config_files(argparse.Namespace()))


def build_option_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the plugin's global options to the ``openstack`` parser (and word errors'
    next steps as tripleo-flow commands: openstackclient calls this first)."""
    from tripleo_flow.cli import hint_words

    hint_words.install()
    parser.add_argument(
        "--os-tripleo-api-version", metavar="<version>",
        default=os.environ.get("OS_TRIPLEO_API_VERSION", DEFAULT_API_VERSION),
        help="tripleo-flow command set version (default: 1).")
    parser.add_argument(
        "--tripleo-config-file", action="append", default=[], metavar="FILE",
        help=f"tripleo-flow configuration file (repeatable; env {CONFIG_ENV}). Default: "
             "/etc/tripleo-flow/tripleo-flow.conf or ~/.config/tripleo-flow/tripleo-flow.conf.")
    return parser
