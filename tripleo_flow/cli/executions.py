"""``tripleo-flow execution list/show/tasks/pause/resume/cancel/update/complete``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cliff.lister import Lister
from cliff.show import ShowOne

from tripleo_flow import exceptions
from tripleo_flow.cli._format import data, when
from tripleo_flow.cli.common import ClientMixin
from tripleo_flow.cli.progress import Progress
from tripleo_flow.cli.workflows import TaskProgress, execution_row
from tripleo_flow.engine.store.states import UPDATE_STATES as STATES


def _id_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("execution_id", metavar="ID")
    return parser


class ListExecutions(ClientMixin, Lister):
    """List a page of executions, oldest first.

    When more follow, the ``--marker`` of the next page is printed on stderr."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--workflow", metavar="NAME", help="Only runs of this workflow.")
        parser.add_argument("--limit", metavar="N", type=int, default=None,
                            help="Most executions to list (default: [api] "
                            "executions_page_size; at most [api] executions_page_max).")
        parser.add_argument("--marker", metavar="ID",
                            help="List the executions after this one (the marker printed "
                            "after the previous page).")
        parser.add_argument("--sort-dir", choices=["asc", "desc"], default="asc",
                            help="asc: oldest first (default); desc: newest first.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        page, marker = self.client.executions.page(parsed_args.limit, parsed_args.marker,
                                                   parsed_args.workflow, parsed_args.sort_dir)
        rows = [(e.id, e.workflow, e.state, when(e.created_at), when(e.finished_at))
                for e in page]
        if marker is not None:
            print(f"More executions follow: list them with --marker {marker}",
                  file=sys.stderr)
        return ("ID", "Workflow", "State", "Created", "Finished"), rows


class ShowExecution(ClientMixin, ShowOne):
    """Show an execution: inputs, state, output or error."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        return _id_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        return execution_row(self.client.executions.get(parsed_args.execution_id))


class ExecutionTasks(ClientMixin, Lister):
    """List the tasks of an execution with their states, results and errors."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        return _id_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        rows = [(t.name, t.state, data(t.result), data(t.published),
                 t.error or t.state_info or "",
                 when(t.started_at), when(t.finished_at), " ".join(t.executions), t.id or "",
                 " ".join(_waiting(w) for w in t.waiting), "yes" if t.reverted else "")
                for t in self.client.tasks.list(parsed_args.execution_id)]
        return ("Task", "State", "Result", "Published", "Error", "Started", "Finished",
                "Sub-executions", "ID", "Waiting for", "Reverted"), rows


def _waiting(action: dict[str, Any]) -> str:
    """An action execution a task waits for: its id, and its item with with-items."""
    return action["id"] + ("" if action.get("item") is None else f" (item {action['item']})")


class CompleteTask(ClientMixin, ShowOne):
    """Complete the asynchronous action (std.async_noop...) a task execution waits for.

    SUCCESS makes OUTPUT its result, ERROR its error (its on-error runs)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = _id_parser(super().get_parser(prog_name))
        parser.add_argument("task", metavar="TASK",
                            help="The task execution: its name as 'execution tasks' lists "
                            "it (approve, poll[2]) or its ID.")
        parser.add_argument("--state", choices=["SUCCESS", "ERROR"], default="SUCCESS",
                            help="SUCCESS (default) or ERROR.")
        parser.add_argument("--output", metavar="JSON", default=None,
                            help="The action's result (SUCCESS) or error (ERROR): JSON, or "
                            "else taken as text.")
        parser.add_argument("--item", metavar="N", type=int, default=None,
                            help="The item of a with-items task (when several wait).")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        output: Any = parsed_args.output
        if output is not None:
            try:
                output = json.loads(output)
            except ValueError:
                pass  # text, as given
        done = self.client.tasks.complete(parsed_args.execution_id, parsed_args.task,
                                          parsed_args.state, output, item=parsed_args.item,
                                          detach=True)
        return (("Action execution", "Execution", "Task", "Task ID", "Item", "Attempt",
                 "State", "Output"),
                (done.id, done.execution_id, done.task, done.task_id,
                 "" if done.item is None else done.item, done.attempt, done.state,
                 data(done.output)))


class PauseExecution(ClientMixin, ShowOne):
    """Pause a running execution, wherever it runs: its running tasks end, no new one starts."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        return _id_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        return execution_row(self.client.executions.pause(parsed_args.execution_id))


class CancelExecution(ClientMixin, ShowOne):
    """Cancel an execution wherever it runs: running tasks end, none starts, never resumed."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = _id_parser(super().get_parser(prog_name))
        parser.add_argument("--message", "-m", metavar="TEXT", default=None,
                            help="Why it is cancelled: kept as its state info and its "
                            "output's 'result' (Mistral's execution-update -s CANCELLED "
                            "--state-info).")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        return execution_row(self.client.executions.cancel(parsed_args.execution_id,
                                                           parsed_args.message))


class UpdateExecution(ClientMixin, ShowOne):
    """Change an execution's state as Mistral's execution-update: pause, resume, cancel, stop."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = _id_parser(super().get_parser(prog_name))
        parser.add_argument("--state", "-s", metavar="STATE", default=None,
                            choices=list(STATES),
                            help="PAUSED pauses it, RUNNING resumes it (in the background), "
                            "CANCELLED cancels it, ERROR or SUCCESS stops it in that state "
                            "(its running tasks end, no new one starts).")
        parser.add_argument("--state-info", "-i", metavar="TEXT", default=None,
                            help="Why (CANCELLED, ERROR, SUCCESS): kept as its state info.")
        parser.add_argument("--env", "-e", metavar="JSON", default=None,
                            help="A JSON object merged into the environment of a paused "
                            "execution (alone, or with --state RUNNING), alone of a "
                            "failed one too.")
        parser.add_argument("--description", "-d", metavar="TEXT", default=None,
                            help="Text kept on the execution (without --state).")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        env = None
        if parsed_args.env is not None:
            try:
                env = json.loads(parsed_args.env)
            except ValueError as exc:
                raise exceptions.InvalidInput(f"--env is not JSON: {exc}") from exc
        return execution_row(self.client.executions.update(
            parsed_args.execution_id, parsed_args.state, parsed_args.state_info, env,
            detach=True, description=parsed_args.description))


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
            return execution_row(api.executions.resume(parsed_args.execution_id, wait=False,
                                                       detach=True))
        total = len(api.tasks.list(parsed_args.execution_id))
        bar = Progress(sys.stderr, "tasks done")
        try:
            return execution_row(api.executions.resume(
                parsed_args.execution_id, listeners=[TaskProgress(bar, total)]))
        finally:
            bar.finish()
