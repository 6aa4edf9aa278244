"""``tripleo-flow plan ...`` commands."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from cliff.command import Command
from cliff.lister import Lister
from cliff.show import ShowOne

from tripleo_flow.cli.common import ClientMixin, show
from tripleo_flow.cli.progress import Progress
from tripleo_flow.core.deploy.progress import PlanProgress


class PlanProgressView:
    """A bar per stage of a plan create or update: files checked, then KiB uploaded
    (plain lines every 10% without a terminal)."""

    LABELS = {"check": ("Checking templates", "files"), "upload": ("Uploading templates", "KiB")}

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self._stage = ""
        self._bar: Progress | None = None

    def __call__(self, report: PlanProgress) -> None:
        label, unit = self.LABELS.get(report.stage, (report.stage, ""))
        if report.stage != self._stage:
            self.finish()
            self._stage = report.stage
            self._bar = Progress(self.stream, f"{label} ({report.plan})", plain_step=10)
        done, total = report.done, report.total
        if unit == "KiB":
            done, total = -(-done // 1024), -(-total // 1024)
        assert self._bar is not None
        self._bar.update(done, total, unit)

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.finish()
            self._bar = None


def add_environment_argument(parser: argparse.ArgumentParser, update: bool = False) -> None:
    """``-e FILE`` (repeatable): the plan's user environments, in order."""
    kept = (" When given, they replace the plan's earlier user environments; "
            "otherwise those are kept.") if update else ""
    parser.add_argument(
        "-e", "--environment-file", dest="environments", action="append", default=[],
        metavar="FILE",
        help="Environment file stored in the plan (with the local files it refers to) and "
             "applied after the plan's own environments; repeatable, the last wins." + kept)


def add_plan_file_arguments(parser: argparse.ArgumentParser, update: bool = False) -> None:
    """``-r``, ``-n``, ``--vip-file`` and ``-e`` of plan create and update."""
    parser.add_argument("-r", "--roles-file", metavar="FILE",
                        help="Roles data file replacing the templates' roles_data.yaml.")
    parser.add_argument("-n", "--networks-file", metavar="FILE",
                        help="Networks data file replacing the templates' network_data.yaml "
                             "(default: the tree's, or its network_data_default.yaml).")
    parser.add_argument("--vip-file", metavar="FILE",
                        help="VIP data file replacing the templates' vip_data.yaml "
                             "(default: the tree's, or its vip_data_default.yaml).")
    add_environment_argument(parser, update)


class CreatePlan(ClientMixin, ShowOne):
    """Create a plan from a template directory or .tar.gz (or the shipped sample)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name (letters, digits and '-').")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--templates", metavar="DIR|TARBALL",
                            help="Template directory or .tar.gz archive.")
        source.add_argument("--sample", action="store_true",
                            help="Use the small sample plan shipped with tripleo-flow.")
        parser.add_argument("--description", default="", help="Plan description.")
        add_plan_file_arguments(parser)
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        view = PlanProgressView(self.app.stderr)
        try:
            return show(self.client.plans.create(
                args.name, args.templates, args.description, sample=args.sample,
                progress=view, environments=args.environments, roles_file=args.roles_file,
                networks_file=args.networks_file, vip_file=args.vip_file))
        finally:
            view.finish()


class UpdatePlan(ClientMixin, ShowOne):
    """Replace a plan's templates, keeping parameter values, passwords and user files."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name.")
        parser.add_argument("--templates", required=True, metavar="DIR|TARBALL",
                            help="Template directory or .tar.gz archive.")
        add_plan_file_arguments(parser, update=True)
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        view = PlanProgressView(self.app.stderr)
        try:
            return show(self.client.plans.update(
                args.name, args.templates, progress=view, environments=args.environments,
                roles_file=args.roles_file, networks_file=args.networks_file,
                vip_file=args.vip_file))
        finally:
            view.finish()


class ListPlans(ClientMixin, Lister):
    """List plans."""

    def take_action(self, args: argparse.Namespace) -> Any:
        rows = self.client.plans.list()
        columns = ("name", "description", "deployment_status")
        return columns, [tuple(r[c] for c in columns) for r in rows]


class ShowPlan(ClientMixin, ShowOne):
    """Show a plan: description, files, environments, status."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        return show(self.client.plans.get(args.name))


class ExportPlan(ClientMixin, Command):
    """Export a plan as a .tar.gz archive (to a file, or to stdout with '-').

    The archive is a backup: it holds the plan's passwords and secret parameters,
    unless --without-secrets leaves them out (what the HTTP API always does).
    """

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name.")
        parser.add_argument("--output", "-o", metavar="FILE",
                            help="Archive to write (default: NAME.tar.gz; '-' for stdout).")
        parser.add_argument("--without-secrets", action="store_true",
                            help="Leave the passwords and secret parameters out (a plan "
                                 "created from the archive generates new passwords).")
        return parser

    def take_action(self, args: argparse.Namespace) -> int:
        output = args.output or f"{args.name}.tar.gz"
        secrets = not args.without_secrets
        if output == "-":
            with tempfile.TemporaryDirectory() as tmp:
                path = self.client.plans.export(args.name, Path(tmp) / "plan.tar.gz", secrets)
                sys.stdout.buffer.write(Path(path).read_bytes())
            return 0
        path = self.client.plans.export(args.name, output, secrets)
        self.app.stdout.write(f"Plan {args.name!r} exported to {path}"
                              f"{'' if secrets else ' (without secrets)'}\n")
        return 0


class DeletePlan(ClientMixin, Command):
    """Delete a plan (refused while a deployment is recorded, unless --force)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name.")
        parser.add_argument("--force", action="store_true",
                            help="Delete even when a deployment is recorded.")
        return parser

    def take_action(self, args: argparse.Namespace) -> int:
        self.client.plans.delete(args.name, force=args.force)
        self.app.stdout.write(f"Plan {args.name!r} deleted.\n")
        return 0


class PlanHistory(ClientMixin, Lister):
    """List earlier versions of a plan's plan-environment.yaml."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        columns = ("version", "last_modified", "size", "current")
        rows = self.client.plans.history(args.name)
        return columns, [tuple(r[c] for c in columns) for r in rows]


class RestorePlan(ClientMixin, ShowOne):
    """Roll a plan's plan-environment.yaml back to an earlier version."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name.")
        parser.add_argument("version", help="Version id, from: tripleo-flow plan history NAME")
        parser.add_argument(
            "--restore-passwords", action="store_true",
            help="Take the version's passwords too (by default the plan's current "
                 "passwords are kept: a deployed cloud runs with them, and a version "
                 "without passwords would make the next update generate new ones).")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        return show(self.client.plans.restore(args.name, args.version,
                                              keep_passwords=not args.restore_passwords))


class RenderPlan(ClientMixin, ShowOne):
    """Render a plan's j2 templates again."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("name", help="Plan name.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        return show(self.client.plans.render(args.name))
