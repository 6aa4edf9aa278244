"""Scale-down commands (thin: each calls one Python API method)."""

from __future__ import annotations

import argparse
from typing import Any

from cliff.show import ShowOne

from tripleo_flow import exceptions
from tripleo_flow.cli.common import ClientMixin, show
from tripleo_flow.cli.deploy import add_deployment_arguments, show_stack_progress
from tripleo_flow.cli.progress import Progress
from tripleo_flow.core.deploy.progress import StackProgress


class DeleteOvercloudNodes(ClientMixin, ShowOne):
    """Remove servers (by host name) from a deployment: scale-down playbook, stack update."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        chosen = parser.add_mutually_exclusive_group(required=True)
        chosen.add_argument("hosts", nargs="*", metavar="HOST", default=[],
                            help="Host names of the servers to remove (as the deployment's "
                                 "inventory names them).")
        chosen.add_argument("-b", "--baremetal-deployment", metavar="FILE",
                            help="TripleO's baremetal deployment file: remove its "
                                 "instances marked provisioned: false.")
        parser.add_argument("--plan", "--stack", dest="plan", default="overcloud",
                            metavar="NAME", help="Plan (= stack) name (default: overcloud).")
        parser.add_argument("-y", "--yes", action="store_true",
                            help="Skip the yes/no prompt (assume yes).")
        add_deployment_arguments(parser)
        parser.add_argument("--skip-scale-playbook", action="store_true",
                            help="Do not run config-download's scale_playbook.yaml on the "
                                 "leaving servers first (servers already gone).")
        parser.add_argument("--ansible-connection", metavar="PLUGIN",
                            help="Connect to the servers with this Ansible connection.")
        return parser

    def take_action(self, args: argparse.Namespace) -> Any:
        if not args.yes and not self._confirmed(
                args.hosts or [f"the instances {args.baremetal_deployment} marks "
                               "provisioned: false"]):
            raise exceptions.InvalidInput("Action not confirmed: nothing was changed "
                                          "(answer y, or give -y).")
        bar = Progress(self.app.stderr, "resources complete")

        def progress(report: StackProgress) -> None:
            show_stack_progress(bar, report)

        try:
            done = self.client.deployments.delete_nodes(
                args.plan, args.hosts, baremetal_deployment=args.baremetal_deployment,
                work_dir=args.work_dir, heat_type=args.heat_type,
                run_ansible=not args.skip_scale_playbook,
                ansible_connection=args.ansible_connection, progress=progress)
        finally:
            bar.finish()
        deployment = done["deployment"]
        return show({"removed": done["removed"], "parameters": done["parameters"],
                     **{k: deployment.get(k, "") for k in (
                         "deployment_status", "stack_status", "config_download")}})

    def _confirmed(self, hosts: list[str]) -> bool:
        listed = "\n".join(f"- {host}" for host in hosts)
        self.app.stdout.write(f"{listed}\nAre you sure you want to delete these overcloud "
                              "nodes [y/N]? ")
        self.app.stdout.flush()
        answer = self.app.stdin.readline()
        return answer.strip().lower() in ("y", "yes")
