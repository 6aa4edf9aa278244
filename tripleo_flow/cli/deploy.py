"""Deployment commands (thin: each calls one Python API method)."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.lister import Lister
from cliff.show import ShowOne

from tripleo_flow import exceptions
from tripleo_flow.cli.common import ClientMixin, add_plan_argument, show
from tripleo_flow.cli.plan import add_environment_argument
from tripleo_flow.cli.progress import Progress
from tripleo_flow.core.deploy import run_options
from tripleo_flow.core.deploy.progress import StackProgress
from tripleo_flow.core.plan import deprecated_services
from tripleo_flow.heat import HEAT_TYPES

#: ansible-playbook's selection options, as ``openstack overcloud deploy`` names them.
ANSIBLE_SELECTION = (
    ("--tags", "TAGS", "run only the tasks with these tags (comma-separated, e.g. "
                       "host_prep_steps,step0)."),
    ("--skip-tags", "TAGS", "skip the tasks with these tags (e.g. external: the "
                            "undercloud's own tasks)."),
    ("--limit", "HOSTS", "run on these hosts or groups only (ansible-playbook --limit)."),
)


def add_deployment_arguments(parser: argparse.ArgumentParser) -> None:
    """``--heat-type`` and ``--work-dir``: how the ephemeral Heat runs, and where the
    deployment's files are."""
    parser.add_argument("--heat-type", choices=HEAT_TYPES,
                        help="How the ephemeral Heat runs (default: the type the "
                             "deployment in the work dir was made with, else [heat] "
                             "heat_type).")
    parser.add_argument("--work-dir", metavar="DIR",
                        help="Where the Heat dump, outputs and config-download go "
                             "(default: <data_dir>/deployments/<plan>).")


def add_forks_argument(parser: argparse.ArgumentParser) -> None:
    """tripleoclient's ``--ansible-forks``."""
    parser.add_argument("--ansible-forks", type=int, metavar="N",
                        help="The number of Ansible forks of the playbook run (default: "
                             "min(4 x CPUs, 100)).")


def add_deploy_options(parser: argparse.ArgumentParser) -> None:
    """tripleoclient's deploy options that read files or pick who logs in (``-e``,
    ``--environment-directory``, ``--baremetal-deployment``, ``--run-validations``,
    ``--overcloud-ssh-user``/``-key``): :func:`deploy_options` reads them back."""
    parser.add_argument("--run-validations", action="store_true",
                        help="First run the pre-deployment validations on this machine "
                             "(validation run --group pre-deployment) and stop on a "
                             "failure, with each failed validation's reasons.")
    parser.add_argument("--overcloud-ssh-user", metavar="USER",
                        help="The user Ansible logs in to the servers as, named by "
                             "config-download's inventory and ansible.cfg (default: "
                             "[ansible] ssh_user, tripleo-admin); it must already log in: "
                             "tripleo-flow creates no user on the servers.")
    parser.add_argument("--overcloud-ssh-key", metavar="FILE",
                        help="The private key file Ansible logs in with (default: "
                             "[ansible] ssh_private_key, else ssh's own).")
    add_environment_argument(parser, update=True)
    parser.add_argument("--environment-directory", dest="environment_directories",
                        action="append", default=[], metavar="DIR",
                        help="A directory whose *.yaml files (in name order) are "
                             "environment files before the -e ones; repeatable. As "
                             "tripleoclient, ~/.tripleo/environments (when it exists) "
                             "comes first and $TRIPLEO_ENVIRONMENT_DIRECTORY after the "
                             "directories given, always: to leave a file out, move it "
                             "out of those directories (tripleoclient has no option to "
                             "turn them off).")
    parser.add_argument("-b", "--baremetal-deployment", metavar="FILE",
                        help="TripleO's baremetal deployment file of pre-provisioned "
                             "servers (managed: false): generates the plan's "
                             "deployed-servers environment first (addresses on the "
                             "[ctlplane] subnet, kept across redeploys; VIP; host "
                             "names; role counts).")


def check_deprecated_services(command: Any, args: argparse.Namespace) -> None:
    """tripleoclient's check before deploy and update/upgrade prepare: a warning for
    each deprecated service the ``-e`` files enable, then its question; anything but
    yes (or no terminal answering it: -y does not skip it there either) stops here."""
    warnings = command.client.deployments.deprecated_services(args.environments or [])
    if not warnings:
        return
    for warning in warnings:
        command.app.stderr.write(f"WARNING: {warning}\n")
    answer = ""
    if command.app.stdin.isatty():
        command.app.stdout.write(f"{deprecated_services.QUESTION} ")
        command.app.stdout.flush()
        answer = command.app.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise exceptions.InvalidInput(
            "Action not confirmed, exiting: a deprecated service is enabled (see the "
            "warnings above); nothing was changed.")


def deploy_options(args: argparse.Namespace) -> dict[str, Any]:
    """The Python API's arguments from :func:`add_deploy_options`'s options."""
    return {"environments": args.environments or None,
            "environment_directories": args.environment_directories,
            "baremetal_deployment": args.baremetal_deployment,
            "run_validations": args.run_validations,
            "overcloud_ssh_user": args.overcloud_ssh_user,
            "overcloud_ssh_key": args.overcloud_ssh_key}


def verbosity(command: Any) -> int:
    """ansible-playbook's verbosity for ``command``'s run: the app's ``-v`` level and
    ``--debug`` read as tripleoclient reads them (``run_options.cli_verbosity``)."""
    app_args = getattr(command, "app_args", None)
    return run_options.cli_verbosity(bool(getattr(app_args, "debug", False)),
                                     int(getattr(app_args, "verbose_level", 1) or 0))


def show_stack_progress(bar: Progress, report: StackProgress) -> None:
    """A bar of resources complete on a terminal (plain lines otherwise), events above it."""
    for event in report.events:
        bar.note(f"  {event}")
    bar.update(report.complete, report.total, f"(stack {report.stack} {report.status})",
               share=report.fraction())


class Deploy(ClientMixin, ShowOne):
    """Deploy a plan: ephemeral Heat, stack, config-download; everything reverts on failure."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        add_deployment_arguments(parser)
        parser.add_argument("--run-ansible", action="store_true",
                            help="Run the config-download deploy steps playbook with "
                                 "ansible-playbook (needs tripleo-flow[ansible]).")
        parser.add_argument("--ansible-connection", metavar="PLUGIN",
                            help="Connect to every host with this Ansible connection "
                                 "(local: run on this machine, as for the sample plan).")
        for flag, metavar, what in ANSIBLE_SELECTION:
            parser.add_argument(flag, metavar=metavar, help=f"With --run-ansible: {what}")
        add_forks_argument(parser)
        add_deploy_options(parser)
        parser.add_argument("--config-download-only", action="store_true",
                            help="Neither create nor update the stack: restore the stack "
                                 "the last deploy kept in the work dir, save its outputs "
                                 "and write config-download again (with --run-ansible, "
                                 "run the playbook too). Re-runs what failed after a "
                                 "finished stack.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        self._bar = Progress(self.app.stderr, "resources complete")
        try:
            check_deprecated_services(self, args)
            options = deploy_options(args)
            result = self.client.deployments.create(args.plan, heat_type=args.heat_type,
                                                    work_dir=args.work_dir,
                                                    progress=self._show_progress,
                                                    run_ansible=args.run_ansible,
                                                    ansible_connection=args.ansible_connection,
                                                    ansible_tags=args.tags,
                                                    ansible_skip_tags=args.skip_tags,
                                                    ansible_limit=args.limit,
                                                    ansible_forks=args.ansible_forks,
                                                    ansible_verbosity=verbosity(self),
                                                    config_download_only=args.config_download_only,
                                                    **options)
        finally:
            self._bar.finish()
        return show({k: v for k, v in result.items() if k != "failures"})

    def _show_progress(self, report: StackProgress) -> None:
        show_stack_progress(self._bar, report)


class DeploymentStatus(ClientMixin, ShowOne):
    """Show a plan's deployment status (DEPLOYING, DEPLOY_SUCCESS/FAILED/INTERRUPTED)."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        return show(self.client.deployments.status(args.plan))


class DeploymentFailures(ClientMixin, Lister):
    """List what failed in a plan's last deployment, with the reasons."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_plan_argument(parser)
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        columns = ("stack", "resource", "type", "status", "reason")
        rows = self.client.deployments.failures(args.plan)
        return columns, [tuple(r.get(c, "") for c in columns) for r in rows]
