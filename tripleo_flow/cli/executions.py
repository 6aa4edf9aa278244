"""``tripleo-flow execution list/show/tasks/resume``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cliff.lister import Lister
from cliff.show import ShowOne

from tripleo_flow.cli._format import data, when
from tripleo_flow.cli.common import ClientMixin
from tripleo_flow.cli.progress import Progress
from tripleo_flow.cli.workflows import TaskProgress, execution_row


def _id_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("execution_id", metavar="ID")
    return parser


class ListExecutions(ClientMixin, Lister):
    """List executions, oldest first."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--workflow", metavar="NAME", help="Only runs of this workflow.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        rows = [(e.id, e.workflow, e.state, when(e.created_at), when(e.finished_at))
                for e in self.client.list_executions(parsed_args.workflow)]
        return ("ID", "Workflow", "State", "Created", "Finished"), rows


class ShowExecution(ClientMixin, ShowOne):
    """Show an execution: inputs, state, output or error."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        return _id_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        return execution_row(self.client.get_execution(parsed_args.execution_id))


class ExecutionTasks(ClientMixin, Lister):
    """List the tasks of an execution with their states, results and errors."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        return _id_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        rows = [(t.name, t.state, data(t.result), data(t.published), t.error or "",
                 when(t.started_at), when(t.finished_at), " ".join(t.executions))
                for t in self.client.execution_tasks(parsed_args.execution_id)]
        return ("Task", "State", "Result", "Published", "Error", "Started", "Finished",
                "Sub-executions"), rows


class ResumeExecution(ClientMixin, ShowOne):
    """Continue a paused, suspended or crash-interrupted execution from its last completed task."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = _id_parser(super().get_parser(prog_name))
        parser.add_argument("--no-wait", "--async", action="store_true", dest="no_wait",
                            help="Continue it in the background (with [jobboard] "
                            "backend_url: post it for a conductor) and show it at once.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        api = self.client
        if parsed_args.no_wait:
            return execution_row(api.resume_execution(parsed_args.execution_id, wait=False,
                                                      detach=True))
        total = len(api.execution_tasks(parsed_args.execution_id))
        bar = Progress(sys.stderr, "tasks done")
        try:
            return execution_row(api.resume_execution(
                parsed_args.execution_id, listeners=[TaskProgress(bar, total)]))
        finally:
            bar.finish()
