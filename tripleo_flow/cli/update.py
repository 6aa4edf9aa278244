"""Minor update and major upgrade commands, ``overcloud update prepare|run|converge``,
``overcloud upgrade prepare|run|converge``, ``overcloud external-update run`` and
``overcloud external-upgrade run`` (thin: each calls one Python API method; a command
class serves both kinds through its ``kind``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cliff.show import ShowOne

from tripleo_flow import exceptions
from tripleo_flow.cli.common import ClientMixin, show
from tripleo_flow.cli.deploy import (
    ANSIBLE_SELECTION,
    add_deploy_options,
    add_deployment_arguments,
    add_forks_argument,
    check_deprecated_services,
    deploy_options,
    show_stack_progress,
    verbosity,
)
from tripleo_flow.cli.progress import Progress
from tripleo_flow.core.deploy import lifecycle_options, update
from tripleo_flow.core.deploy.progress import StackProgress

if TYPE_CHECKING:
    from tripleo_flow.client.update import LifecycleManager

_PROMPT = ("You are about to run an {KIND} command. Take a backup first. Are you sure "
           "you want to {kind} [y/N]? ")


class _UpdateCommand(ClientMixin, ShowOne):
    #: The lifecycle the command belongs to: update or upgrade.
    kind = "update"

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--plan", "--stack", dest="plan", default="overcloud",
                            metavar="NAME", help="Plan (= stack) name (default: overcloud).")
        parser.add_argument("-y", "--yes", action="store_true",
                            help="Skip the yes/no prompt (assume yes).")
        return parser

    def lifecycle(self) -> LifecycleManager:
        """``client.updates`` or ``client.upgrades``, as :attr:`kind` says."""
        return self.client.upgrades if self.kind == "upgrade" else self.client.updates

    def confirm(self, args: argparse.Namespace) -> None:
        if args.yes:
            return
        self.app.stdout.write(_PROMPT.format(KIND=self.kind.upper(), kind=self.kind))
        self.app.stdout.flush()
        if self.app.stdin.readline().strip().lower() not in ("y", "yes"):
            raise exceptions.InvalidInput(f"{self.kind.capitalize()} not confirmed: nothing "
                                          "was changed (answer y, or give -y).")

    def add_client_options(self, parser: argparse.ArgumentParser, stage: str) -> None:
        """tripleoclient's deploy options a prepare or converge takes for what they ask
        (``-e``, ``--environment-directory``, ``--baremetal-deployment``,
        ``--run-validations``, ``--overcloud-ssh-user/-key``), those accepted as they
        ask for what tripleo-flow always does, and those refused (parsed, so the refusal
        can say what to use instead: :meth:`refuse_client_options`)."""
        add_deploy_options(parser)
        for option in lifecycle_options.ACCEPTED:
            parser.add_argument(*option.flags, dest=f"accepted_{option.dest}",
                                **_nargs(option),
                                help=f"Accepted for tripleoclient's scripts: {option.why}.")
        for option in lifecycle_options.REFUSED:
            parser.add_argument(*option.flags, dest=f"refused_{option.dest}",
                                **_nargs(option), help=argparse.SUPPRESS)
        if stage == "prepare":
            parser.add_argument("--stack-only", "--no-config-download",
                                dest="accepted_stack_only", action="store_true",
                                help="Accepted for tripleoclient's scripts: a prepare "
                                     "runs no playbook.")
            for flag in ("--limit", "--tags", "--skip-tags", "--ansible-forks"):
                parser.add_argument(flag, dest=f"refused_{flag[2:].replace('-', '_')}",
                                    help=argparse.SUPPRESS)

    def refuse_client_options(self, args: argparse.Namespace, stage: str) -> None:
        """Refuse (before anything runs) the first of tripleoclient's options given
        that tripleo-flow does not take on this command."""
        command = f"{self.kind} {stage}"
        for option in lifecycle_options.REFUSED:
            if getattr(args, f"refused_{option.dest}") not in (None, False):
                raise lifecycle_options.refusal(option, command, args.plan)
        for flag in ("--limit", "--tags", "--skip-tags", "--ansible-forks"):
            if getattr(args, f"refused_{flag[2:].replace('-', '_')}", None) is not None:
                raise exceptions.InvalidInput(
                    f"{flag} is refused by tripleo-flow's {command}: a prepare runs no "
                    f"playbook (give it to {self.kind} run or {self.kind} converge); "
                    "nothing was changed.")

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

    def add_run_arguments(self, parser: argparse.ArgumentParser) -> None:
        """``--tags``, ``--skip-tags``, ``--work-dir``, ``--ansible-connection`` and
        tripleoclient's ``--ansible-forks``, ``--ssh-user``, ``--static-inventory``."""
        for flag, metavar, what in ANSIBLE_SELECTION[:2]:
            parser.add_argument(flag, metavar=metavar, help=what)
        parser.add_argument("--work-dir", metavar="DIR",
                            help="The deployment's work dir (default: "
                                 "<data_dir>/deployments/<plan>).")
        parser.add_argument("--ansible-connection", metavar="PLUGIN",
                            help="Connect to the servers with this Ansible connection.")
        add_forks_argument(parser)
        parser.add_argument("--ssh-user", metavar="USER",
                            help="Log in to the overcloud hosts as USER (default: the "
                                 "user of the deployment's inventory).")
        parser.add_argument("--static-inventory", metavar="FILE",
                            help="An existing Ansible inventory to use in place of the "
                                 "config-download project's.")

    def run_options(self, args: argparse.Namespace) -> dict[str, Any]:
        """The run's options from ``args`` (:meth:`add_run_arguments`) and the app's
        ``-v``/``--debug`` (ansible-playbook's verbosity, as tripleoclient's)."""
        return {"work_dir": args.work_dir, "ansible_tags": args.tags,
                "ansible_skip_tags": args.skip_tags,
                "ansible_connection": args.ansible_connection,
                "ansible_forks": args.ansible_forks, "ssh_user": args.ssh_user,
                "static_inventory": args.static_inventory,
                "ansible_verbosity": verbosity(self)}

    def show_run(self, done: dict[str, Any]) -> Any:
        return show({"playbooks": ", ".join(done["playbooks"]), "limit": done["limit"] or ""})


class UpdatePrepare(_UpdateCommand):
    """Prepare a minor update: the stack updated with THT's update-prepare environment."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_deployment_arguments(parser)
        self.add_client_options(parser, "prepare")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        self.refuse_client_options(args, "prepare")
        self.confirm(args)
        check_deprecated_services(self, args)
        return self.deploy_with_progress(self.lifecycle().prepare, args.plan,
                                         work_dir=args.work_dir, heat_type=args.heat_type,
                                         **deploy_options(args))


class UpdateRun(_UpdateCommand):
    """Run the minor update playbooks (update_steps_playbook.yaml) on the hosts of --limit."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--limit", required=True, metavar="HOSTS",
                            help=f"The nodes or roles to {self.kind}, comma-separated "
                                 "(required: one role or a few nodes at a time).")
        parser.add_argument("--playbook", nargs="*", default=None, metavar="PLAYBOOK",
                            help="Playbooks of the config-download project to run, in "
                                 "order (default, or 'all': "
                                 f"{', '.join(self.default_playbooks())}).")
        self.add_run_arguments(parser)
        return parser

    def default_playbooks(self) -> tuple[str, ...]:
        return update.lifecycle(self.kind).playbooks

    def take_action(self, args: argparse.Namespace) -> Any:
        self.confirm(args)
        return self.show_run(self.lifecycle().run(
            args.plan, args.limit, playbooks=args.playbook,
            **self.run_options(args)))


class UpdateConverge(_UpdateCommand):
    """Converge a minor update: the update-prepare environment taken out, the plan deployed."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        add_deployment_arguments(parser)
        parser.add_argument("--stack-only", "--no-config-download", dest="stack_only",
                            action="store_true",
                            help="Update the stack and write config-download only: do not "
                                 "run the deploy steps playbook.")
        parser.add_argument("--ansible-connection", metavar="PLUGIN",
                            help="Connect to the servers with this Ansible connection.")
        for flag, metavar, what in ANSIBLE_SELECTION:
            parser.add_argument(flag, metavar=metavar, help=what)
        add_forks_argument(parser)
        self.add_client_options(parser, "converge")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        self.refuse_client_options(args, "converge")
        self.confirm(args)
        check_deprecated_services(self, args)
        return self.deploy_with_progress(
            self.lifecycle().converge, args.plan, work_dir=args.work_dir,
            heat_type=args.heat_type, run_ansible=not args.stack_only,
            ansible_connection=args.ansible_connection, ansible_tags=args.tags,
            ansible_skip_tags=args.skip_tags, ansible_limit=args.limit,
            ansible_forks=args.ansible_forks, ansible_verbosity=verbosity(self),
            **deploy_options(args))


class ExternalUpdateRun(_UpdateCommand):
    """Run the external update steps (external_update_steps_playbook.yaml) from here."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--limit", metavar="HOSTS",
                            help="Run on these nodes or roles only (comma-separated).")
        self.add_run_arguments(parser)
        parser.add_argument("-e", "--extra-vars", dest="extra_vars", action="append",
                            default=[], metavar="VARS",
                            help="Set variables for the playbook: key=value pairs, a "
                                 "YAML/JSON object, or @FILE (a YAML/JSON file here); "
                                 "repeatable, the later ones winning.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        self.confirm(args)
        return self.show_run(self.lifecycle().external_run(
            args.plan, args.limit, extra_vars=args.extra_vars,
            **self.run_options(args)))


def _nargs(option: lifecycle_options.ClientOption) -> dict[str, Any]:
    """argparse's arguments for how ``option`` takes its value."""
    if option.nargs == "0":
        return {"action": "store_true"}
    if option.nargs == "?":
        return {"nargs": "?", "const": True, "default": None}
    return {"metavar": "VALUE"}


def _upgrade(command: type[_UpdateCommand], doc: str) -> type[_UpdateCommand]:
    """``command`` of the major upgrade (``kind`` upgrade; ``doc``: its --help text)."""
    name = command.__name__.replace("Update", "Upgrade")
    return type(name, (command,), {"kind": "upgrade", "__doc__": doc, "__module__": __name__})


UpgradePrepare = _upgrade(
    UpdatePrepare, "Prepare a major upgrade: the stack updated with THT's upgrade-prepare "
                   "environment.")
UpgradeRun = _upgrade(
    UpdateRun, "Run the major upgrade playbooks (upgrade, deploy and post upgrade steps) on "
               "--limit.")
UpgradeConverge = _upgrade(
    UpdateConverge, "Converge a major upgrade: the upgrade-prepare environment taken out, "
                    "the plan deployed.")
ExternalUpgradeRun = _upgrade(
    ExternalUpdateRun, "Run the external upgrade steps (external_upgrade_steps_playbook.yaml) "
                       "from here.")
