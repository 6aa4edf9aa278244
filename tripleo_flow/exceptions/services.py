"""Errors of the services tripleo-flow drives: Heat, Ironic, Ansible, deployments."""

from __future__ import annotations

from collections.abc import Mapping

from tripleo_flow.exceptions.kinds import (
    BackendUnavailable,
    Conflict,
    Hint,
    InvalidInput,
    NotFound,
    TripleoFlowError,
    WorkflowFailed,
)


def _deploy_hint(lead: str, plan: str) -> Hint:
    return Hint(lead, "deploy", {"plan": plan})


class InvalidNodes(InvalidInput):
    def __init__(self, source: str, entry: str, reason: str) -> None:
        super().__init__(
            f"{source}: {entry} {reason}. Fix that entry and import again; nothing was registered."
        )
        self.source = source
        self.entry = entry
        self.reason = reason


class HeatNotInstalled(NotFound):
    """A launcher needs something only an install command makes."""

    def __init__(self, what: str, command: str | Hint) -> None:
        """:param command: what makes it: a command of the system's (``apt-get install
            ...``), or a step of tripleo-flow's (a hint of lead "Create it with")"""
        if isinstance(command, Hint):
            super().__init__(f"{what} is missing.", hints=[command])
            command = str(command.as_json()["command"])
        else:
            super().__init__(f"{what} is missing. Create it with: {command}")
        self.what = what
        self.command = command


class AnsibleNotInstalled(NotFound):
    def __init__(self, command: str, venv: str | None = None) -> None:
        if venv:
            message = (f"No {command} in the Ansible virtualenv {venv!r} ([ansible] venv), so "
                       "the deployment cannot run its playbooks. Build it with "
                       "tools/setup-ansible.sh, or unset [ansible] venv.")
        else:
            message = (f"{command} is not installed next to this Python or on PATH, so the "
                       "deployment cannot run its playbooks. Install it with: pip install "
                       "'tripleo-flow[ansible]' (or build an Ansible virtualenv with "
                       "tripleo-ansible with tools/setup-ansible.sh and set [ansible] venv)")
        super().__init__(message)
        self.command = command


class DumpNotFound(NotFound):
    def __init__(self, path: str) -> None:
        super().__init__(
            f"No Heat database dump at {path!r} to restore. Launch without --restore-db, or "
            "kill a running Heat first to make one",
            hints=[Hint("", "heat.kill_any", sep=" (", tail=").")])
        self.path = path


class DumpKindMismatch(Conflict):
    #: The Heat types whose database each dump kind comes from, for the message.
    MADE_BY = {"sqlite": "SQLite (heat type native)",
               "mariadb": "MariaDB (heat type processes or pod, or [heat] database "
                          "mariadb)"}

    def __init__(self, path: str, found: str, wanted: str) -> None:
        super().__init__(
            f"The Heat database dump {path!r} was made by a Heat on "
            f"{self.MADE_BY.get(found, found)}, and this Heat keeps its database on "
            f"{self.MADE_BY.get(wanted, wanted)}: it cannot load that dump. Deploy (or "
            "launch) with the Heat type the stack was made with (or name none: the type "
            "that wrote the dump is used); nothing was changed."
        )
        self.path = path
        self.found = found
        self.wanted = wanted


class NoKeptStack(NotFound):
    def __init__(self, plan: str, work_dir: str) -> None:
        super().__init__(
            f"No stack of plan {plan!r} is kept in {work_dir!r} (no Heat dump or stack "
            f"request there):", hints=[_deploy_hint("deploy it first with", plan)])
        self.plan = plan
        self.work_dir = work_dir


class UpdateNotPrepared(Conflict):
    """A run of a minor update (``kind`` update) or of a major upgrade (upgrade) with no
    prepare of that kind in place."""

    def __init__(self, plan: str, kind: str = "update") -> None:
        what = "major upgrade" if kind == "upgrade" else "minor update"
        super().__init__(
            f"No {what} is prepared for plan {plan!r}: run first", hints=[Hint(
                "", "lifecycle.prepare", {"kind": kind, "plan": plan}, sep=" '",
                tail=f"' (the stack updated with the {kind} environment), then {kind} run; "
                "nothing was changed.")])
        self.plan = plan
        self.kind = kind


class ServersNotInStack(NotFound):
    def __init__(self, plan: str, missing: list[str], servers: list[str]) -> None:
        super().__init__(
            f"Stack {plan!r} has no server {', '.join(map(repr, missing))}; its servers "
            f"are: {', '.join(servers) or 'none'}. Name the servers to delete by those "
            "host names (those of its last deployment); nothing was changed.")
        self.plan = plan
        self.missing = missing
        self.servers = servers


class IronicNotInstalled(NotFound):
    def __init__(self, venv: str) -> None:
        super().__init__(
            f"The Ironic virtualenv {venv} is missing. Create it with: tools/setup-ironic.sh "
            "(or point [ironic] venv or $TRIPLEO_FLOW_IRONIC_VENV at one)."
        )
        self.venv = venv


class IronicNotConfigured(NotFound):
    def __init__(self, ironic_dir: str) -> None:
        super().__init__(
            f"No Ironic to talk to: [ironic] endpoint is unset and no Ironic runs from "
            f"{ironic_dir!r}.", hints=[Hint("Launch one with", "ironic.launch_in",
                                            {"ironic_dir": ironic_dir},
                                            tail=" (or set [ironic] endpoint).")])
        self.ironic_dir = ironic_dir


class NodeNotFound(NotFound):
    def __init__(self, node: str) -> None:
        super().__init__(
            f"Node {node!r} does not exist in Ironic.",
            hints=[Hint("List nodes with", "node.list")])
        self.node = node


class NoNodesInState(Conflict):
    """A selection of every node in a state (``--all-manageable``) found none."""

    def __init__(self, state: str, counts: Mapping[str, int]) -> None:
        total = sum(counts.values())
        if total:
            found = ", ".join(f"{count} {label}" for label, count in counts.items())
            seen = f"Ironic's {total} node{'s' if total > 1 else ''}: {found}"
            hints = [Hint("See them with", "node.list", tail=".")]
            if counts.get("enroll"):
                hints = [Hint("Move those in enroll to manageable with", "node.manage",
                              tail=";"),
                         Hint("see them with", "node.list", tail=".")]
        else:
            seen = "Ironic has no node"
            hints = [Hint("Register nodes with", "node.import", tail=".")]
        super().__init__(f"No node is {state} and out of maintenance, so nothing was done "
                         f"({seen}).", hints=hints)
        self.state = state
        self.counts = dict(counts)


class HeatRunning(Conflict):
    def __init__(self, heat_dir: str, detail: str) -> None:
        super().__init__(
            f"A Heat is already running from {heat_dir!r} ({detail}). Use it, or",
            hints=[Hint("stop it with", "heat.kill", {"heat_dir": heat_dir})])
        self.heat_dir = heat_dir


class TooManyLaunchedHeats(Conflict):
    """Workflows started over the HTTP API already left ``[api] launched_heats_max``
    Heats running on this server."""

    def __init__(self, limit: int, heat_dirs: list[str]) -> None:
        if not limit:
            super().__init__("This server launches no Heat that runs on after its execution "
                             "for the HTTP API ([api] launched_heats_max = 0).")
        else:
            count = len(heat_dirs)
            super().__init__(
                f"At most {limit} Heat{'s' if limit != 1 else ''} launched over the HTTP API "
                f"may run on after their execution on this server ([api] "
                f"launched_heats_max), and {count} run{'s' if count == 1 else ''} (heat "
                f"dirs: {', '.join(heat_dirs)}): no other is launched. Stop one first",
                hints=[Hint("with", "heat.kill", {"heat_dir": "DIR"}, tail=".")])
        self.limit = limit
        self.heat_dirs = list(heat_dirs)


class StackNotFinished(Conflict):
    def __init__(self, plan: str, status: str) -> None:
        super().__init__(
            f"The kept stack of plan {plan!r} is {status}, not finished: only a finished "
            f"stack can be re-rendered.", hints=[_deploy_hint("Deploy it again with", plan)])
        self.plan = plan
        self.status = status


class IronicRunning(Conflict):
    def __init__(self, ironic_dir: str, detail: str) -> None:
        super().__init__(
            f"An Ironic is already running from {ironic_dir!r} ({detail}). Use it, or",
            hints=[Hint("stop it with", "ironic.kill", {"ironic_dir": ironic_dir})]
        )
        self.ironic_dir = ironic_dir


class PortInUse(Conflict):
    def __init__(self, host: str, port: int) -> None:
        super().__init__(
            f"Port {port} on {host} is already in use, so Heat cannot listen there. Stop what "
            f"uses it, or leave [heat] api_port unset (each Heat then takes a free port of "
            f"its own) or set another one."
        )
        self.host = host
        self.port = port


class HeatError(BackendUnavailable):
    """Heat (or its database) failed to start, answer, stop, dump or restore."""


class IronicError(BackendUnavailable):
    """Ironic failed to start or answer, refused a request, or a node ended in error;
    ``status`` is the HTTP status of a refused request (None otherwise)."""

    status: int | None = None


class StackFailed(WorkflowFailed):
    """A stack create or update ended FAILED; ``failures`` lists each failed resource."""

    def __init__(
        self, stack: str, status: str, reason: str, failures: list[dict[str, str]]
    ) -> None:
        lines = "".join(
            f"; {f['stack']}/{f['resource']} ({f['type']}): {f['reason']}" for f in failures
        )
        TripleoFlowError.__init__(
            self,
            f"Stack {stack!r} ended {status}: {reason}{lines}.",
            hints=[Hint("See them again with", "deployment.failures", {"plan": stack})],
        )
        self.workflow = "deploy"
        self.task = "stack"
        self.cause = reason
        self.reverted = True
        self.stack = stack
        self.status = status
        self.failures = failures


class AnsibleFailed(WorkflowFailed):
    """ansible-playbook ended with a non-zero status; ``log`` holds its whole output."""

    #: What a failed run leaves, worded for its message, by whether it is reverted.
    AFTER = {True: "the deployment was reverted",
             False: "nothing was reverted: the hosts keep what the playbook changed, the "
                    "plan and its stack are as they were (run it again once fixed)"}

    def __init__(self, plan: str, playbook: str, returncode: int, log: str, tail: str,
                 reverted: bool = True) -> None:
        TripleoFlowError.__init__(
            self,
            f"Playbook {playbook!r} of plan {plan!r} failed (ansible-playbook exit "
            f"{returncode}); {self.AFTER[reverted]}. Last output: {tail} "
            f"(whole output in {log}).",
        )
        self.workflow = "deploy"
        self.task = "run_ansible"
        self.cause = f"ansible-playbook exit {returncode}"
        self.reverted = reverted
        self.plan = plan
        self.playbook = playbook
        self.returncode = returncode
        self.log = log


class Interrupted(WorkflowFailed):
    """SIGINT or SIGTERM arrived while a flow ran: raised in its running task, so the
    flow reverts like after any failure."""

    def __init__(self, what: str, signal_name: str, task: str | None) -> None:
        where = f" at task {task!r}" if task else ""
        TripleoFlowError.__init__(
            self,
            f"{what} was interrupted by {signal_name}{where}; its completed tasks were "
            "reverted. Run it again when ready.",
        )
        self.workflow = what
        self.task = task
        self.cause = f"interrupted by {signal_name}"
        self.reverted = True
        self.signal_name = signal_name


class DeploymentRunning(Conflict):
    def __init__(self, plan: str, owner: str) -> None:
        super().__init__(
            f"Plan {plan!r} is being deployed by {owner}. Wait for it to finish and",
            hints=[Hint("see it with", "deployment.status", {"plan": plan})])
        self.plan = plan
        self.owner = owner
