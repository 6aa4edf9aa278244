"""``tripleo-flow conductor``: run workflow executions posted to the jobboard."""

from __future__ import annotations

import argparse
import logging
import signal
from typing import Any

from cliff.command import Command

from tripleo_flow.cli.common import ClientMixin

LOG = logging.getLogger(__name__)


class RunConductor(ClientMixin, Command):
    """Claim and run the workflow executions posted to [jobboard] backend_url until stopped."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--name", help="This conductor's name on the board "
                            "(default: conductor-HOSTNAME).")
        parser.add_argument("--concurrency", type=int, default=4, metavar="N",
                            help="Executions run at the same time (default: 4).")
        parser.add_argument("--max-jobs", type=int, metavar="K",
                            help="Exit once K jobs have been run (default: run until "
                            "SIGTERM or SIGINT).")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> int:
        previous: dict[int, Any] = {}

        def started(conductor: Any) -> None:
            def on_signal(signum: int, _frame: Any) -> None:
                LOG.info("Signal %d: stopping; running executions suspend after their "
                         "running tasks and go back to the board", signum)
                conductor.stop()

            for signum in (signal.SIGTERM, signal.SIGINT):
                previous[signum] = signal.signal(signum, on_signal)
            self.app.stdout.write(f"Conductor {conductor.conductor.name} is claiming jobs\n")
            self.app.stdout.flush()

        try:
            self.client.conductors.run(parsed_args.name, parsed_args.concurrency,
                                       parsed_args.max_jobs, started=started)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        return 0
