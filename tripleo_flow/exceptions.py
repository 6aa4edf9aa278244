"""The one error hierarchy of tripleo-flow.

``str(error)`` is the message a user reads: what failed, on which object, and
what to do next.  Each kind maps once to a CLI exit code and an HTTP status
(:data:`EXIT_CODES`, :data:`HTTP_STATUS`)::

    TripleoFlowError                      exit 1   500
     +-- InvalidInput                      exit 2   400
     |    +-- InvalidPlanName
     |    +-- InvalidTemplate              (bad YAML, bad j2, unknown include)
     |    +-- InvalidArchive               (unsafe or unreadable tarball)
     |    +-- InvalidRoles / InvalidNetworks
     |    +-- InvalidParameter
     |    +-- MissingParameters            (nested ones too, each with its template)
     |    +-- UnknownEnvironment
     |    +-- InvalidWorkbook
     |    +-- BodyTooLarge                 (413: a request body past [api] max_upload_size)
     |    +-- PathNotAllowed               (a workflow started over HTTP names a server path)
     |    +-- PlanCodeNotAllowed           (403: started over HTTP, would run plan code here)
     |    +-- InvalidNodes                 (a node import file: names the bad entry)
     +-- NotFound                          exit 3   404
     |    +-- PlanNotFound
     |    +-- ObjectNotFound
     |    +-- VersionNotFound
     |    +-- ActionNotFound / WorkflowNotFound / ExecutionNotFound
 |    +-- HeatNotInstalled             (no Heat virtualenv or image: names the command)
 |    +-- DumpNotFound
     |    +-- IronicNotInstalled           (no Ironic virtualenv: names the script)
     |    +-- IronicNotConfigured          (no [ironic] endpoint and no launched Ironic)
     |    +-- NodeNotFound
     |    +-- AnsibleNotInstalled          (no ansible-playbook: install the ansible extra)
     +-- Conflict                          exit 4   409
     |    +-- PlanExists
     |    +-- PlanBeingCreated             (another live command is creating it)
     |    +-- PlanBusy                     (deployment in progress or recorded)
     |    +-- DeploymentRunning            (a live process is deploying the plan)
     |    +-- IronicRunning                (an Ironic already runs from that ironic-dir)
     |    +-- LockTimeout
     |    +-- SecretNotPersisted           (a resumed run needs a secret the records masked)
     +-- BackendUnavailable                exit 5   503
     |    +-- PlanStoreError
     |    +-- IronicError                  (Ironic refused, failed or a node ended in error)
     +-- WorkflowFailed                    exit 6   500
          +-- StackFailed                  (the stack ended FAILED: each failed resource)
          +-- AnsibleFailed                (ansible-playbook failed: its output's tail)
          +-- Interrupted          exit 130 (SIGINT/SIGTERM: the flow reverted)
"""

from __future__ import annotations


class TripleoFlowError(Exception):
    """Base of every error tripleo-flow raises on purpose."""

    kind = "error"


# -- invalid input -----------------------------------------------------------


def _shown(name: str, limit: int = 60) -> str:
    """``name`` quoted for a message, shortened when it is long."""
    return repr(name) if len(name) <= limit else f"{name[:limit]!r}... ({len(name)} characters)"


class InvalidInput(TripleoFlowError):
    kind = "invalid-input"


class InvalidPlanName(InvalidInput):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid plan name {_shown(name)}: use letters, digits and '-', starting with a "
            "letter or digit, at most 128 characters (pattern ^[a-zA-Z0-9][a-zA-Z0-9-]*$)."
        )
        self.name = name


class InvalidTemplate(InvalidInput):
    """A template, environment or data file that cannot be used."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"Invalid template file {path!r}: {reason}")
        self.path = path
        self.reason = reason


class InvalidArchive(InvalidInput):
    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"Refusing archive {source!r}: {reason}")
        self.source = source
        self.reason = reason


class InvalidRoles(InvalidInput):
    pass


class InvalidNetworks(InvalidInput):
    pass


class InvalidParameter(InvalidInput):
    pass


class MissingParameters(InvalidInput):
    """Parameters of the stack tree that would get no value (found before Heat runs)."""

    #: How many of them the message names.
    SHOWN = 10

    def __init__(self, plan: str, missing: list[str]) -> None:
        shown = "; ".join(missing[:self.SHOWN])
        more = f"; and {len(missing) - self.SHOWN} more" if len(missing) > self.SHOWN else ""
        super().__init__(
            f"Plan {plan!r} leaves {len(missing)} required parameter(s) without a value: "
            f"{shown}{more}. Set them with: tripleo-flow parameters set --plan {plan} "
            "NAME=VALUE (or in an environment of the plan)."
        )
        self.plan = plan
        self.missing = missing


class InvalidNodes(InvalidInput):
    def __init__(self, source: str, entry: str, reason: str) -> None:
        super().__init__(
            f"{source}: {entry} {reason}. Fix that entry and import again; nothing was "
            "registered."
        )
        self.source = source
        self.entry = entry
        self.reason = reason


class UnknownEnvironment(InvalidInput):
    def __init__(self, plan: str, path: str) -> None:
        super().__init__(
            f"Environment {path!r} is not in plan {plan!r}. "
            f"List the available ones with: tripleo-flow capabilities show --plan {plan}"
        )
        self.plan = plan
        self.path = path


class InvalidWorkbook(InvalidInput):
    pass


class BodyTooLarge(InvalidInput):
    """A request body (an uploaded archive) larger than ``[api] max_upload_size``."""

    kind = "too-large"

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"The request body is larger than the limit of {limit} bytes "
            "([api] max_upload_size). Send a smaller archive, or raise [api] max_upload_size "
            "in the server's configuration (0 means no limit)."
        )
        self.limit = limit


class PathNotAllowed(InvalidInput):
    """A workflow started over the HTTP API would use a server path it may not."""

    def __init__(self, workflow: str, reason: str) -> None:
        super().__init__(f"Workflow {workflow!r} cannot be started over the HTTP API: {reason}")
        self.workflow = workflow
        self.reason = reason


class PlanCodeNotAllowed(InvalidInput):
    """An execution started over the HTTP API reached an action that runs code taken from
    the plan on the server, and ``[api] allow_plan_code`` is off."""

    def __init__(self, action: str, task: str) -> None:
        super().__init__(
            f"Task {task!r} (action {action}) would run code taken from the plan on the "
            "server, and this execution was started over the HTTP API, where the server "
            "refuses that: any API writer could run commands as the server's user. Run it "
            "from the CLI or the Python API on your own machine, or, if every writer of this "
            "API may run code on the server, set [api] allow_plan_code = true in the "
            "server's configuration."
        )
        self.action = action
        self.task = task


# -- not found ---------------------------------------------------------------


class NotFound(TripleoFlowError):
    kind = "not-found"


class PlanNotFound(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Plan {name!r} does not exist. Create it with: "
            f"tripleo-flow plan create {name} --templates DIR"
        )
        self.name = name


class ObjectNotFound(NotFound):
    def __init__(self, container: str, name: str) -> None:
        super().__init__(f"Object {name!r} does not exist in container {container!r}.")
        self.container = container
        self.name = name


class ContainerNotFound(NotFound):
    def __init__(self, container: str) -> None:
        super().__init__(f"Container {container!r} does not exist.")
        self.container = container


class VersionNotFound(NotFound):
    def __init__(self, plan: str, version: str) -> None:
        super().__init__(
            f"Plan {plan!r} has no version {version!r}. "
            f"List versions with: tripleo-flow plan history {plan}"
        )
        self.plan = plan
        self.version = version


class ActionNotFound(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Action {name!r} is not registered. List actions with: tripleo-flow action list"
        )
        self.name = name


class WorkflowNotFound(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Workflow {name!r} does not exist. List workflows with: tripleo-flow workflow list"
        )
        self.name = name


class ExecutionNotFound(NotFound):
    def __init__(self, execution_id: str) -> None:
        super().__init__(
            f"Execution {execution_id!r} does not exist. "
            "List executions with: tripleo-flow execution list"
        )
        self.execution_id = execution_id


class HeatNotInstalled(NotFound):
    """A launcher needs something only an install command makes."""

    def __init__(self, what: str, command: str) -> None:
        super().__init__(f"{what} is missing. Create it with: {command}")
        self.what = what
        self.command = command


class AnsibleNotInstalled(NotFound):
    def __init__(self, command: str) -> None:
        super().__init__(
            f"{command} is not installed next to this Python or on PATH, so the deployment "
            f"cannot run its playbooks. Install it with: pip install 'tripleo-flow[ansible]'"
        )
        self.command = command


class DumpNotFound(NotFound):
    def __init__(self, path: str) -> None:
        super().__init__(
            f"No Heat database dump at {path!r} to restore. Launch without --restore-db, or "
            "kill a running Heat first to make one (tripleo-flow launch heat --kill ...)."
        )
        self.path = path


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
            f"{ironic_dir!r}. Launch one with: tripleo-flow launch ironic --ironic-dir "
            f"{ironic_dir} (or set [ironic] endpoint)."
        )
        self.ironic_dir = ironic_dir


class NodeNotFound(NotFound):
    def __init__(self, node: str) -> None:
        super().__init__(
            f"Node {node!r} does not exist in Ironic. List nodes with: tripleo-flow node list"
        )
        self.node = node


# -- conflict ----------------------------------------------------------------


class Conflict(TripleoFlowError):
    kind = "conflict"


class PlanExists(Conflict):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Plan {name!r} already exists. Update it with: "
            f"tripleo-flow plan update {name} --templates DIR, "
            f"or delete it first with: tripleo-flow plan delete {name}"
        )
        self.name = name


class PlanBeingCreated(Conflict):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Plan {name!r} is being created by another command. Wait for it to finish; "
            "if that command was killed, run this again in a minute (its lock expires "
            "and its incomplete plan is removed)."
        )
        self.name = name


class PlanUpdateUnfinished(Conflict):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Plan {name!r} has a template update that has not finished: it is running, "
            "or it was killed and left the plan mixed. Wait for it to finish, or run the "
            f"update again to repair the plan (tripleo-flow plan update {name} "
            "--templates DIR), then deploy."
        )
        self.name = name


class ContainerExists(Conflict):
    def __init__(self, container: str) -> None:
        super().__init__(f"Container {container!r} already exists.")
        self.container = container


class SecretNotPersisted(Conflict):
    """A resumed execution reached a task whose input was a secret: the executions
    database keeps a mask, never the value, so the task cannot run with it."""

    def __init__(self, task: str, inputs: list[str]) -> None:
        super().__init__(
            f"Task {task!r} of this resumed execution needs {', '.join(inputs)}, which held "
            "a secret that the executions database does not keep. Run the workflow again "
            "instead of resuming it.")
        self.task = task
        self.inputs = inputs


class PlanBusy(Conflict):
    def __init__(self, name: str, status: str) -> None:
        super().__init__(
            f"Plan {name!r} has a deployment with status {status}. "
            f"Refusing to delete it; use --force to delete it anyway."
        )
        self.name = name
        self.status = status


class LockTimeout(Conflict):
    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(
            f"Plan {name!r} is being changed by another operation "
            f"(waited {seconds:g} s for its lock). Try again when it has finished."
        )
        self.name = name
        self.seconds = seconds


class HeatRunning(Conflict):
    def __init__(self, heat_dir: str, detail: str) -> None:
        super().__init__(
            f"A Heat is already running from {heat_dir!r} ({detail}). Use it, or stop it with: "
            f"tripleo-flow launch heat --heat-dir {heat_dir} --kill"
        )
        self.heat_dir = heat_dir


class IronicRunning(Conflict):
    def __init__(self, ironic_dir: str, detail: str) -> None:
        super().__init__(
            f"An Ironic is already running from {ironic_dir!r} ({detail}). Use it, or stop it "
            f"with: tripleo-flow launch ironic --ironic-dir {ironic_dir} --kill"
        )
        self.ironic_dir = ironic_dir


class PortInUse(Conflict):
    def __init__(self, host: str, port: int) -> None:
        super().__init__(
            f"Port {port} on {host} is already in use, so Heat cannot listen there. Stop what "
            f"uses it, or choose another port with [heat] api_port."
        )
        self.host = host
        self.port = port


# -- backend -----------------------------------------------------------------


class BackendUnavailable(TripleoFlowError):
    kind = "backend-unavailable"


class PlanStoreError(BackendUnavailable):
    """The plan store (Swift or the local directory) failed."""


class HeatError(BackendUnavailable):
    """Heat (or its database) failed to start, answer, stop, dump or restore."""


class IronicError(BackendUnavailable):
    """Ironic failed to start or answer, refused a request, or a node ended in error."""


# -- workflows ---------------------------------------------------------------


class WorkflowFailed(TripleoFlowError):
    kind = "workflow-failed"

    def __init__(self, workflow: str, task: str | None, cause: str, reverted: bool) -> None:
        where = f" at task {task!r}" if task else ""
        after = "its completed tasks were reverted" if reverted else "nothing was reverted"
        super().__init__(f"Workflow {workflow!r} failed{where}: {cause} ({after}).")
        self.workflow = workflow
        self.task = task
        self.cause = cause
        self.reverted = reverted


class StackFailed(WorkflowFailed):
    """A stack create or update ended FAILED; ``failures`` lists each failed resource."""

    def __init__(self, stack: str, status: str, reason: str,
                 failures: list[dict[str, str]]) -> None:
        lines = "".join(f"; {f['stack']}/{f['resource']} ({f['type']}): {f['reason']}"
                        for f in failures)
        TripleoFlowError.__init__(
            self, f"Stack {stack!r} ended {status}: {reason}{lines}. See them again with: "
            f"tripleo-flow deployment failures --plan {stack}")
        self.workflow = "deploy"
        self.task = "stack"
        self.cause = reason
        self.reverted = True
        self.stack = stack
        self.status = status
        self.failures = failures


class AnsibleFailed(WorkflowFailed):
    """ansible-playbook ended with a non-zero status; ``log`` holds its whole output."""

    def __init__(self, plan: str, playbook: str, returncode: int, log: str, tail: str) -> None:
        TripleoFlowError.__init__(
            self, f"Playbook {playbook!r} of plan {plan!r} failed (ansible-playbook exit "
            f"{returncode}); the deployment was reverted. Last output: {tail} "
            f"(whole output in {log}).")
        self.workflow = "deploy"
        self.task = "run_ansible"
        self.cause = f"ansible-playbook exit {returncode}"
        self.reverted = True
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
            self, f"{what} was interrupted by {signal_name}{where}; its completed tasks were "
            "reverted. Run it again when ready.")
        self.workflow = what
        self.task = task
        self.cause = f"interrupted by {signal_name}"
        self.reverted = True
        self.signal_name = signal_name


class DeploymentRunning(Conflict):
    def __init__(self, plan: str, owner: str) -> None:
        super().__init__(
            f"Plan {plan!r} is being deployed by {owner}. Wait for it to finish and see it "
            f"with: tripleo-flow deployment status --plan {plan}"
        )
        self.plan = plan
        self.owner = owner


EXIT_CODES: dict[type[TripleoFlowError], int] = {
    Interrupted: 130,  # what a shell reports for a command ended by Ctrl-C
    InvalidInput: 2,
    NotFound: 3,
    Conflict: 4,
    BackendUnavailable: 5,
    WorkflowFailed: 6,
    TripleoFlowError: 1,
}

HTTP_STATUS: dict[type[TripleoFlowError], int] = {
    InvalidInput: 400,
    BodyTooLarge: 413,
    PlanCodeNotAllowed: 403,
    NotFound: 404,
    Conflict: 409,
    BackendUnavailable: 503,
    WorkflowFailed: 500,
    TripleoFlowError: 500,
}


def _lookup(table: dict[type[TripleoFlowError], int], error: BaseException, default: int) -> int:
    for cls in type(error).__mro__:
        if cls in table:
            return table[cls]  # type: ignore[index]
    return default


def exit_code(error: BaseException) -> int:
    """The CLI exit status for ``error`` (1 for anything unexpected)."""
    return _lookup(EXIT_CODES, error, 1)


def http_status(error: BaseException) -> int:
    """The HTTP status for ``error`` (500 for anything unexpected)."""
    return _lookup(HTTP_STATUS, error, 500)
