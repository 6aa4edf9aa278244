"""``tripleo-flow task rerun``: Mistral's ``task-rerun``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cliff.show import ShowOne

from tripleo_flow.cli.common import ClientMixin
from tripleo_flow.cli.progress import Progress
from tripleo_flow.cli.workflows import TaskProgress, execution_row


def _json(text: str) -> Any:
    """``--env``'s value read as JSON (argparse says what is wrong: exit 2)."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from exc


class RerunTask(ClientMixin, ShowOne):
    """Rerun a failed task of a failed execution, which then goes on to its end."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("execution_id", metavar="EXECUTION")
        parser.add_argument("task", metavar="TASK",
                            help="The failed task execution's name (as 'execution tasks' "
                            "lists it: deploy, poll[2]) or id.")
        parser.add_argument("--no-reset", action="store_false", dest="reset",
                            help="A with-items task: rerun its failed items only (the others "
                            "keep their results), as Mistral's task-rerun --no-reset.")
        parser.add_argument("--env", "-e", metavar="JSON", default=None, type=_json,
                            help="A JSON object merged into the execution's environment "
                            "first.")
        parser.add_argument("--no-wait", "--async", action="store_true", dest="no_wait",
                            help="Let it go on in the background and show it at once.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        api, env = self.client, parsed_args.env
        if parsed_args.no_wait:
            return execution_row(api.tasks.rerun(
                parsed_args.execution_id, parsed_args.task, parsed_args.reset, env,
                wait=False, detach=True))
        total = len(api.tasks.list(parsed_args.execution_id))  # as execution resume
        bar = Progress(sys.stderr, "tasks done")
        try:
            return execution_row(api.tasks.rerun(
                parsed_args.execution_id, parsed_args.task, parsed_args.reset, env,
                listeners=[TaskProgress(bar, total)]))
        finally:
            bar.finish()
