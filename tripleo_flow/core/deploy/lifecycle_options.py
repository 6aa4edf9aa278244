"""tripleoclient's ``overcloud deploy`` options on ``update prepare|converge`` and
``upgrade prepare|converge`` (their commands are ``DeployOvercloud`` subclasses, so they
take every deploy option), and what tripleo-flow makes of each (pure: no I/O).

tripleo-flow keeps the templates, roles, networks and parameters in the plan, so the
options that change those on the fly are refused with the plan operation that does it;
those that only select how the deploy runs map to the deploy's own inputs
(:data:`MAPPED`); a few ask for what tripleo-flow always does and are accepted as they
are (:data:`ACCEPTED`).  Everything else is :data:`REFUSED`, with what to use instead.
The CLI reads the flags, the Python and HTTP APIs the ``dest`` names (what a caller
translating tripleoclient's arguments would send).

SSH admin access: tripleoclient's ``upgrade prepare`` (and ``converge``) then runs
``enable_ssh_admin`` (creates ``tripleo-admin`` with the undercloud's key on every host,
logging in as ``--overcloud-ssh-user``).  tripleo-flow creates no user on the servers: the
deploy writes config-download's inventory for ``--overcloud-ssh-user``/``-key`` (default
``[ansible] ssh_user``, ``tripleo-admin``), which must already log in, as for ``deploy``;
the options only ``enable_ssh_admin`` read are refused (:data:`SSH_ADMIN`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.exceptions import Hint


@dataclasses.dataclass(frozen=True)
class ClientOption:
    """One option of tripleoclient's ``DeployOvercloud`` parser."""

    flags: tuple[str, ...]  #: as tripleoclient spells it (``--templates``)
    dest: str               #: its argparse dest: the input name an API caller would send
    nargs: str | None       #: argparse's: None one value, "?" optional, "0" a flag
    why: str                #: why tripleo-flow refuses it, or what it does with it
    #: the next step (command and HTTP request) when one does what the option did
    hint: Hint | None = None


def _flag(flags: tuple[str, ...], dest: str, why: str, hint: Hint | None = None,
          nargs: str | None = None) -> ClientOption:
    return ClientOption(flags, dest, nargs, why, hint)


_PLAN_FILES = "the plan holds the templates, roles, networks and plan environment"
#: The hints' plan, the one refused (:func:`refusal`) named in its place.
_PLAN = {"plan": "NAME"}
_TEMPLATES = Hint("update the plan first with", "plan.update_files", _PLAN,
                  tail=", then run this again.")


def _parameter(name: str) -> Hint:
    return Hint("set it in the plan with", "parameter.set",
                {**_PLAN, "name": name, "value": "VALUE"}, tail=".")



#: Options that ask for what tripleo-flow always does: accepted, nothing to do.
ACCEPTED = (
    _flag(("--config-download",), "config_download",
          "the deploy always writes config-download", nargs="0"),
    _flag(("--disable-validations",), "disable_validations",
          "no built-in validations run; only --run-validations runs any", nargs="0"),
    _flag(("--disable-container-prepare",), "disable_container_prepare",
          "tripleo-flow prepares no container images: set them as parameters", nargs="0"),
    _flag(("--overcloud-ssh-enable-timeout",), "overcloud_ssh_enable_timeout",
          "no longer has any effect in tripleoclient either"),
)

#: tripleoclient's options that enable_ssh_admin alone reads (see the module docstring).
SSH_ADMIN = (
    _flag(("--overcloud-ssh-network",), "overcloud_ssh_network",
          "tripleo-flow does not run enable_ssh_admin, it creates no tripleo-admin user: "
          "Ansible logs in as --overcloud-ssh-user with --overcloud-ssh-key at the "
          "addresses of config-download's inventory, which must already work"),
    _flag(("--overcloud-ssh-port-timeout",), "overcloud_ssh_port_timeout",
          "tripleo-flow does not run enable_ssh_admin, so it waits for no SSH port: "
          "the servers must already accept --overcloud-ssh-user's key"),
)

#: Options tripleo-flow refuses on a prepare or converge, with what to use instead.
REFUSED = (
    _flag(("--templates",), "templates", f"{_PLAN_FILES}: a deploy does not re-upload them",
          _TEMPLATES, nargs="?"),
    _flag(("-r", "--roles-file"), "roles_file", f"{_PLAN_FILES}: a deploy does not change "
          "them", Hint("set the roles first with", "role.set", _PLAN, tail=".")),
    _flag(("-n", "--networks-file"), "networks_file", f"{_PLAN_FILES}: a deploy does not "
          "change them", Hint("set the networks first with", "network.set", _PLAN,
                              tail=".")),
    _flag(("-p", "--plan-environment-file"), "plan_environment_file",
          f"{_PLAN_FILES}: a deploy does not change them", _TEMPLATES),
    _flag(("--answers-file",), "answers_file", "an answers file names templates and "
          "environments together: give its environments with -e, after updating the "
          "plan's templates", _TEMPLATES),
    _flag(("--update-plan-only",), "update_plan_only", "this command deploys",
          _TEMPLATES, nargs="0"),
    _flag(("--ntp-server",), "ntp_server", "tripleo-flow passes no parameter outside the "
          "plan", _parameter("NtpServer")),
    _flag(("--libvirt-type",), "libvirt_type", "tripleo-flow passes no parameter outside "
          "the plan", _parameter("NovaComputeLibvirtType")),
    _flag(("--no-proxy",), "no_proxy", "tripleo-flow talks to no overcloud endpoint (its "
          "Heat runs on this machine)"),
    _flag(("-t", "--timeout"), "timeout", "the deploy follows the stack until Heat "
          "ends it (Ctrl-C stops it and the deploy reverts)"),
    _flag(("--config-download-timeout",), "config_download_timeout",
          "ansible-playbook runs until it ends (stop it with Ctrl-C: the deploy reverts)"),
    _flag(("--skip-deploy-identifier",), "skip_deploy_identifier",
          "a prepare or converge needs the new DeployIdentifier that makes the software "
          "deployments run again", nargs="0"),
    _flag(("--disable-password-generation",), "disable_password_generation",
          "the plan's passwords are generated once, when it is created, and kept",
          Hint("see or change them with", "password.show", _PLAN, tail="."), nargs="0"),
    _flag(("--deployed-server",), "deployed_server",
          "pre-provisioned servers are described by a baremetal deployment file "
          "(managed: false): give it with --baremetal-deployment", nargs="0"),
    _flag(("--config-download-only",), "config_download_only",
          "a prepare or converge is a stack update", Hint(
              "re-run config-download on the kept stack with",
              "deploy.config_download_only", _PLAN, tail="."), nargs="0"),
    _flag(("--output-dir",), "output_dir", "config-download is written into the "
          "deployment's work dir: give --work-dir"),
    _flag(("--override-ansible-cfg",), "override_ansible_cfg",
          "config-download's ansible.cfg is tripleoclient's own; set ANSIBLE_* "
          "variables in the environment of the run instead"),
    _flag(("--deployment-python-interpreter",), "deployment_python_interpreter",
          "the inventory names each host's Python (set ansible_python_interpreter with "
          "a static inventory)"),
    _flag(("--inflight-validations",), "inflight", "in-flight validations are not run",
          nargs="0"),
    _flag(("--validation-errors-nonfatal",), "validation_errors_fatal",
          "tripleo-flow has no built-in pre-checks; --run-validations stops on a failed "
          "validation", nargs="0"),
    _flag(("--validation-warnings-fatal",), "validation_warnings_fatal",
          "tripleo-flow has no built-in pre-checks", nargs="0"),
    _flag(("--dry-run",), "dry_run", "a prepare or converge changes the stack", Hint(
        "run only the validations with", "validation.run_pre_deployment", _PLAN, tail="."),
        nargs="0"),
    _flag(("--skip-postconfig",), "skip_postconfig", "tripleo-flow runs no overcloud "
          "post-configuration (Keystone endpoints)", nargs="0"),
    _flag(("--force-postconfig",), "force_postconfig", "tripleo-flow runs no overcloud "
          "post-configuration (Keystone endpoints)", nargs="0"),
    _flag(("--no-cleanup",), "no_cleanup", "the work dir keeps every file of the "
          "deployment", nargs="0"),
    *SSH_ADMIN,
)

#: tripleoclient's dests that a prepare or converge takes under another input name.
MAPPED = {
    "stack": "plan", "environment_files": "user_environments (or -e on the CLI)",
    "environment_directories": "user_environments (or --environment-directory on the CLI)",
    "config_download": "run_ansible (converge)", "no_config_download": "run_ansible: false",
    "limit": "ansible_limit", "tags": "ansible_tags", "skip_tags": "ansible_skip_tags",
}

#: The workflows whose inputs :func:`check_inputs` looks at (tripleo.<kind>.<stage>).
WORKFLOWS = tuple(f"tripleo.{kind}.{stage}" for kind in ("update", "upgrade")
                  for stage in ("prepare", "converge"))

_BY_DEST = {option.dest: option for option in REFUSED}


def refusal(option: ClientOption, command: str, plan: str = "NAME") -> exceptions.InvalidInput:
    """The error refusing ``option`` on ``command`` (``update prepare`` ...), nothing
    having changed; ``plan`` fills the hint's commands."""
    hints = []
    if option.hint is not None:
        hints.append(dataclasses.replace(option.hint, args={**option.hint.args, "plan": plan}))
    end = ";" if hints else "."
    return exceptions.InvalidInput(
        f"{' / '.join(option.flags)} is refused by tripleo-flow's {command}: {option.why}; "
        f"nothing was changed{end}", hints=hints)


def check_inputs(workflow: str, inputs: Mapping[str, Any]) -> None:
    """Refuse, before anything runs, the input of a lifecycle prepare or converge
    workflow that is one of tripleoclient's option names tripleo-flow does not take
    (:data:`REFUSED`) or takes under another name (:data:`MAPPED`); other workflows
    and other inputs pass (the workflow names unknown inputs itself).

    :raises InvalidInput: naming the option and what to use instead.
    """
    if workflow not in WORKFLOWS:
        return
    _, kind, stage = workflow.split(".")
    plan = inputs.get("plan")
    plan = plan if isinstance(plan, str) and plan else "NAME"
    for name in inputs:
        if name in _BY_DEST:
            raise refusal(_BY_DEST[name], f"{kind} {stage}", plan)
        if name in MAPPED:
            raise exceptions.InvalidInput(
                f"Workflow {workflow!r} takes tripleoclient's {name!r} as "
                f"{MAPPED[name]}; nothing was changed.")


__all__ = ["ACCEPTED", "MAPPED", "REFUSED", "SSH_ADMIN", "WORKFLOWS", "ClientOption",
           "check_inputs", "refusal"]
