"""Commands for TripleO's validations (thin: each calls one Python API method)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cliff.lister import Lister
from cliff.show import ShowOne

from tripleo_flow import exceptions
from tripleo_flow.cli._format import when
from tripleo_flow.cli.common import ClientMixin, parse_assignments, show

LIST_COLUMNS = ("id", "name", "groups", "categories", "products")
RESULT_COLUMNS = ("id", "validation", "status", "hosts", "reasons", "duration", "started_at")


def _reasons(record: dict[str, Any]) -> str:
    return "; ".join(f"{r['host']}: {r['reason']}" if r.get("host") else r["reason"]
                     for r in record.get("reasons") or [])


def _hosts(record: dict[str, Any]) -> str:
    return ", ".join(f"{h}={s}" for h, s in sorted((record.get("hosts") or {}).items()))


def _result_rows(records: list[dict[str, Any]]) -> tuple[Any, Any]:
    rows = [(r.get("id"), r.get("validation"), r.get("status"), _hosts(r), _reasons(r),
             r.get("duration"), r.get("started_at")) for r in records]
    return RESULT_COLUMNS, rows


class ValidationProgress:
    """Each validation's start and end (status per host), as lines on stderr."""

    def __call__(self, event: Any) -> None:
        if event.event == "progress":
            status = (event.progress or {}).get("status")
            if status:
                sys.stderr.write(f"[{when(event.timestamp)}] {status}\n")
        elif event.event == "failed":
            sys.stderr.write(f"[{when(event.timestamp)}] {event.task} failed: {event.error}\n")
        sys.stderr.flush()


class ListValidations(ClientMixin, Lister):
    """List the installed validations (of a group or category)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--group", metavar="GROUP", help="Only this group's validations.")
        parser.add_argument("--category", metavar="CATEGORY",
                            help="Only this category's validations.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        found = self.client.validations.list(parsed_args.group, parsed_args.category)
        return LIST_COLUMNS, [tuple(v[c] for c in LIST_COLUMNS) for v in found]


class ShowValidation(ClientMixin, ShowOne):
    """Show a validation's metadata and parameters (overridden with --extra-vars)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="NAME", help="Validation id (validation list).")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        return show(self.client.validations.get(parsed_args.name))


class RunValidations(ClientMixin, Lister):
    """Run validations with Ansible and store their results; exit 6 when one failed."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--validation", metavar="A,B",
                           help="Validations to run, comma-separated.")
        which.add_argument("--group", metavar="GROUP", help="Run every validation of GROUP.")
        parser.add_argument("--plan", metavar="NAME",
                            help="Store the results with this plan; its last deployment's "
                                 "config-download inventory is the default inventory.")
        parser.add_argument("--inventory", metavar="FILE|localhost",
                            help="An Ansible inventory file, or localhost (the default "
                                 "without --plan).")
        parser.add_argument("--extra-vars", metavar="K=V", action="append", default=[],
                            help="A validation parameter (repeatable); V is read as YAML.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        names = [n for n in (parsed_args.validation or "").split(",") if n] or None
        done = self.client.validations.run(
            names, group=parsed_args.group, plan=parsed_args.plan,
            inventory=parsed_args.inventory,
            extra_vars=parse_assignments(parsed_args.extra_vars, self.client.conf.limits),
            listeners=[ValidationProgress()])
        records = done.get("results") or []
        self._failed = any(r.get("status") == "FAILED" for r in records)
        sys.stderr.write(f"execution {done['execution']}, inventory {done.get('inventory')}\n")
        return _result_rows(records)

    def run(self, parsed_args: argparse.Namespace) -> int:
        self._failed = False
        code = super().run(parsed_args)
        return exceptions.exit_code(exceptions.ValidationsFailed([])) if self._failed else code


class StopValidations(ClientMixin, ShowOne):
    """Stop a running validation execution (its Ansible processes end)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("execution", metavar="EXECUTION", help="Execution id.")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        return show(self.client.validations.stop(parsed_args.execution))


class ListResults(ClientMixin, Lister):
    """List stored validation results, newest first."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--validation", metavar="NAME", help="Only this validation's.")
        parser.add_argument("--plan", metavar="NAME",
                            help="Results kept with this plan (default: runs without one).")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        return _result_rows(self.client.validations.results(parsed_args.plan,
                                                            parsed_args.validation))


class ShowResult(ClientMixin, ShowOne):
    """Show one validation result with its log."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("id", metavar="ID", help="Result id (validation results).")
        parser.add_argument("--plan", metavar="NAME",
                            help="The plan it is kept with (default: runs without one).")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        return show(self.client.validations.get_result(parsed_args.id, parsed_args.plan))
