"""Minor update commands, ``overcloud update prepare|run|converge`` (thin: each calls
one Python API method)."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.show import ShowOne

from tripleo_flow import exceptions
from tripleo_flow.cli.common import ClientMixin, show
from tripleo_flow.cli.deploy import ANSIBLE_SELECTION, add_deployment_arguments, show_stack_progress
from tripleo_flow.cli.progress import Progress
from tripleo_flow.core.progress import StackProgress

_PROMPT = ("You are about to run an UPDATE command. Take a backup first. Are you sure "
           "you want to update [y/N]? ")


class _UpdateCommand(ClientMixin, ShowOne):
    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--plan", "--stack", dest="plan", default="overcloud",
                            metavar="NAME", help="Plan (= stack) name (default: overcloud).")
        parser.add_argument("-y", "--yes", action="store_true",
                            help="Skip the yes/no prompt (assume yes).")
        return parser

    def confirm(self, args: argparse.Namespace) -> None:
        if args.yes:
            return
        self.app.stdout.write(_PROMPT)
        self.app.stdout.flush()
        if self.app.stdin.readline().strip().lower() not in ("y", "yes"):
            raise exceptions.InvalidInput("Update not confirmed: nothing was changed "
                                          "(answer y, or give -y).")

    def deploy_with_progress(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        bar = Progress(self.app.stderr, "resources complete")

        def progress(report: StackProgress) -> None:
            show_stack_progress(bar, report)

        try:
            deployment = method(*args, progress=progress, **kwargs)
        finally:
            bar.finish()
        return show({k: deployment.get(k, "") for k in (
            "deployment_status", "stack_status", "config_download")})


class UpdatePrepare(_UpdateCommand):
    """Prepare a minor update: the stack updated with THT's update-prepare environment."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_deployment_arguments(parser)
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        self.confirm(args)
        return self.deploy_with_progress(self.client.update_prepare, args.plan,
                                         work_dir=args.work_dir, heat_type=args.heat_type)


class UpdateRun(_UpdateCommand):
    """Run the minor update playbooks (update_steps_playbook.yaml) on the hosts of --limit."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--limit", required=True, metavar="HOSTS",
                            help="The nodes or roles to update, comma-separated (required: "
                                 "update one role or a few nodes at a time).")
        parser.add_argument("--playbook", nargs="*", default=None, metavar="PLAYBOOK",
                            help="Playbooks of the config-download project to run, in "
                                 "order (default, or 'all': update_steps_playbook.yaml).")
        for flag, metavar, what in ANSIBLE_SELECTION[:2]:
            parser.add_argument(flag, metavar=metavar, help=what)
        parser.add_argument("--work-dir", metavar="DIR",
                            help="The deployment's work dir (default: "
                                 "<data_dir>/deployments/<plan>).")
        parser.add_argument("--ansible-connection", metavar="PLUGIN",
                            help="Connect to the servers with this Ansible connection.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        self.confirm(args)
        done = self.client.update_run(
            args.plan, args.limit, playbooks=args.playbook, work_dir=args.work_dir,
            ansible_tags=args.tags, ansible_skip_tags=args.skip_tags,
            ansible_connection=args.ansible_connection)
        return show({"playbooks": ", ".join(done["playbooks"]), "limit": done["limit"]})


class UpdateConverge(_UpdateCommand):
    """Converge a minor update: the update-prepare environment taken out, the plan deployed."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_deployment_arguments(parser)
        parser.add_argument("--stack-only", action="store_true",
                            help="Update the stack and write config-download only: do not "
                                 "run the deploy steps playbook.")
        parser.add_argument("--ansible-connection", metavar="PLUGIN",
                            help="Connect to the servers with this Ansible connection.")
        for flag, metavar, what in ANSIBLE_SELECTION:
            parser.add_argument(flag, metavar=metavar, help=what)
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        self.confirm(args)
        return self.deploy_with_progress(
            self.client.update_converge, args.plan, work_dir=args.work_dir,
            heat_type=args.heat_type, run_ansible=not args.stack_only,
            ansible_connection=args.ansible_connection, ansible_tags=args.tags,
            ansible_skip_tags=args.skip_tags, ansible_limit=args.limit)
