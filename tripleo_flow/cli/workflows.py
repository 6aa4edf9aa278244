"""``tripleo-flow workbook ...`` and ``workflow ...`` commands (thin: they call the API)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cliff.command import Command
from cliff.lister import Lister
from cliff.show import ShowOne

from tripleo_flow.cli._format import data, parse_inputs, when
from tripleo_flow.cli.common import ClientMixin
from tripleo_flow.cli.progress import Progress, step_of


class ListWorkbooks(ClientMixin, Lister):
    """List workbooks (shipped and user) and whether they are valid."""

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        rows = [(e.name, "shipped" if e.shipped else "user", str(e.path),
                 "ok" if not e.problems else f"{len(e.problems)} problem(s)",
                 ", ".join(sorted(e.workbook.workflows)) if e.workbook else "")
                for e in self.client.workbooks.list()]
        return ("Name", "Origin", "Path", "Status", "Workflows"), rows


class ValidateWorkbooks(ClientMixin, Command):
    """Check workbook files without running them."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("files", nargs="+", metavar="FILE")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> int:
        self.client.workbooks.check(parsed_args.files)
        for path in parsed_args.files:
            self.app.stdout.write(f"{path}: valid\n")
        return 0


class CreateWorkbook(ClientMixin, ShowOne):
    """Add a user workbook from a file (checked first)."""

    replace = False

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("file", metavar="FILE")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        api = self.client
        entry = (api.workbooks.update if self.replace else api.workbooks.create)(
            parsed_args.file)
        workflows = ", ".join(sorted(entry.workbook.workflows)) if entry.workbook else ""
        return ("Name", "Path", "Workflows"), (entry.name, str(entry.path), workflows)


class UpdateWorkbook(CreateWorkbook):
    """Replace a user workbook with a file (checked first)."""

    replace = True


class DeleteWorkbook(ClientMixin, Command):
    """Delete a user workbook."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="NAME")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> int:
        self.client.workbooks.delete(parsed_args.name)
        return 0


class ListWorkflows(ClientMixin, Lister):
    """List workflows with their inputs."""

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        rows = [(w.full_name, w.type, ", ".join(_input(i) for i in w.inputs), w.description)
                for w in self.client.workflows.list()]
        return ("Name", "Type", "Input", "Description"), rows


def _input(item: Any) -> str:
    return item.name if item.required else f"{item.name}={data(item.default) or 'null'}"


class ShowWorkflow(ClientMixin, ShowOne):
    """Show a workflow: its inputs, tasks and task graph (DOT)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="NAME")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        api = self.client
        wf = api.workflows.get(parsed_args.name)
        tasks = "\n".join(
            f"{t.name}: {'action ' + t.action if t.action else 'workflow ' + str(t.workflow)}"
            for t in wf.tasks.values())
        return (("Name", "Type", "Description", "Input", "Output", "Tasks", "Graph"),
                (wf.full_name, wf.type, wf.description,
                 "\n".join(_input(i) for i in wf.inputs), data(wf.output), tasks,
                 api.workflows.dot(wf.full_name)))


class RunWorkflow(ClientMixin, ShowOne):
    """Run a workflow and show its execution (progress goes to stderr)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="NAME")
        parser.add_argument("--input", action="append", default=[], metavar="NAME=VALUE",
                            help="An input (value read as YAML); may be repeated.")
        parser.add_argument("--input-file", action="append", default=[], metavar="FILE",
                            help="A YAML/JSON file with a mapping of inputs.")
        parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                            help="A variable of the execution's environment, read with "
                            "env() in its expressions (value read as YAML); may be repeated.")
        parser.add_argument("--env-file", action="append", default=[], metavar="FILE",
                            help="A YAML/JSON file with a mapping of environment variables.")
        parser.add_argument("--no-evaluate-env", dest="evaluate_env", action="store_false",
                            help="Keep the expressions in the environment's values as text "
                            "(Mistral's evaluate_env: false).")
        parser.add_argument("--target", metavar="TASK",
                            help="For a reverse workflow: the task to reach.")
        parser.add_argument("--no-wait", "--async", action="store_true", dest="no_wait",
                            help="Start it in the background (with [jobboard] backend_url: "
                            "post it for a conductor) and print its execution id.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> tuple[Any, Any]:
        inputs = parse_inputs(parsed_args.input, parsed_args.input_file,
                              self.client.conf.limits)
        env = (parse_inputs(parsed_args.env, parsed_args.env_file, self.client.conf.limits)
               if parsed_args.env or parsed_args.env_file else None)
        api = self.client
        listeners = []
        bar = None
        if not parsed_args.no_wait:
            bar = Progress(sys.stderr, "tasks done")
            listeners = [TaskProgress(bar, len(api.workflows.get(parsed_args.name).tasks))]
        try:
            execution = api.executions.create(
                parsed_args.name, inputs, wait=not parsed_args.no_wait, listeners=listeners,
                target=parsed_args.target, detach=parsed_args.no_wait, env=env,
                evaluate_env=parsed_args.evaluate_env)
        finally:
            if bar is not None:
                bar.finish()
        return execution_row(execution)


class TaskProgress:
    """Task events as lines above a bar of tasks done (of the workflow's tasks); what a
    running task's action reports (stack resources, plan upload) shows beside the bar on
    a terminal, and otherwise as a line every 10% and at each change of status."""

    def __init__(self, bar: Progress, total: int) -> None:
        self.bar = bar
        self.total = total
        self.done: set[str] = set()
        self._steps: dict[tuple[str, str], tuple[int, str]] = {}

    def _task_progress(self, event: Any) -> None:
        report = event.progress or {}
        done, total = int(report.get("done", 0)), int(report.get("total", 0))
        text = (f"{event.task}: {report.get('stage', '')} {done}/{total}"
                + (f" {report['status']}" if report.get("status") else ""))
        if self.bar.tty:
            self.bar.update(len(self.done), max(self.total, len(self.done)), f"({text})")
            return
        # A line per 10% step, and one whenever the status changes (the stack's
        # CREATE_COMPLETE may come after its resources were all counted).
        step, status = step_of(done, total, 10), str(report.get("status") or "")
        key = (event.task, str(report.get("stage", "")))
        last_step, last_status = self._steps.get(key, (-1, status))
        if step > last_step or status != last_status:
            self._steps[key] = (max(step, last_step), status)
            self.bar.note(f"[{when(event.timestamp)}] {text}")

    def __call__(self, event: Any) -> None:
        if event.event == "progress":
            self._task_progress(event)
            return
        extra = f": {event.error}" if event.error else ""
        self.bar.note(f"[{when(event.timestamp)}] {event.task} {event.event}{extra}")
        if event.event in ("succeeded", "failed"):
            self.done.add(event.task)
        self.bar.update(len(self.done), max(self.total, len(self.done)))


def execution_row(execution: Any) -> tuple[Any, Any]:
    return (("ID", "Workflow", "State", "Reverted", "State info", "Input", "Output", "Error",
             "Failed task", "Created", "Finished", "Env", "Parent execution", "Parent task",
             "Description"),
            (execution.id, execution.workflow, execution.state,
             execution.reverted, execution.state_info or "",
             data(execution.input), data(execution.output), execution.error or "",
             execution.failed_task or "", when(execution.created_at),
             when(execution.finished_at), data(execution.env or {}),
             execution.parent_id or "", execution.parent_task or "",
             execution.description or ""))
