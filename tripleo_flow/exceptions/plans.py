"""Errors of plans, inputs, workflows and the HTTP API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tripleo_flow.exceptions.kinds import (
    BackendUnavailable,
    Conflict,
    Hint,
    InvalidInput,
    NotFound,
    _shown,
)


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
    """An archive that cannot be a plan's tree; ``label`` names it as its sender knows
    it (an upload that the server wrote to a file of its own), else its ``source``."""

    def __init__(self, source: str, reason: str, label: str | None = None) -> None:
        super().__init__(f"Refusing {label or f'archive {source!r}'}: {reason}")
        self.source = source
        self.reason = reason

    def labelled(self, label: str) -> InvalidArchive:
        """The same refusal naming the archive ``label``."""
        return InvalidArchive(self.source, self.reason, label)


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
        shown = "; ".join(missing[: self.SHOWN])
        more = f"; and {len(missing) - self.SHOWN} more" if len(missing) > self.SHOWN else ""
        super().__init__(
            f"Plan {plan!r} leaves {len(missing)} required parameter(s) without a value: "
            f"{shown}{more}.", hints=[Hint("Set them with", "parameter.set",
                                           {"plan": plan, "name": "NAME", "value": "VALUE"},
                                           tail=" (or in an environment of the plan).")])
        self.plan = plan
        self.missing = missing


class UnknownEnvironment(InvalidInput):
    def __init__(self, plan: str, path: str) -> None:
        super().__init__(
            f"Environment {path!r} is not in plan {plan!r}.",
            hints=[Hint("List the available ones with", "capabilities.show", {"plan": plan})])
        self.plan = plan
        self.path = path


class InvalidWorkbook(InvalidInput):
    pass


class TooManyEventStreams(BackendUnavailable):
    """Every event stream ``[api] max_event_streams`` allows is open (503): each holds a
    request thread until its execution ends."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"{limit} execution event streams are open, the most this server allows "
            "([api] max_event_streams). Close one, or poll", hints=[Hint(
                "", "execution.poll", {"execution": "{id}"},
                tail=" until its finished_at is set.")])
        self.limit = limit


class TooManyConnections(BackendUnavailable):
    """One client address already holds ``[api] connections_per_client`` connections to
    the HTTP API (503): a further one is answered this and closed at once."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"Your address already holds {limit} open connections to this API, the most "
            "one client may hold ([api] connections_per_client). Close the ones you do "
            "not use (or send several requests over one), then try again."
        )
        self.limit = limit


class BodyTooLarge(InvalidInput):
    """A request body (an uploaded archive) larger than ``[api] max_upload_size``."""

    kind = "too-large"

    def __init__(self, limit: int, option: str = "[api] max_upload_size") -> None:
        what = "a smaller archive" if option.endswith("max_upload_size") else (
            "less in one request (large content belongs in the plan's files)")
        super().__init__(
            f"The request body is larger than the limit of {limit} bytes "
            f"({option}). Send {what}, or raise {option} "
            "in the server's configuration (0 means no limit)."
        )
        self.limit = limit
        self.option = option


class PathNotAllowed(InvalidInput):
    """A workflow started over the HTTP API would use a server path it may not."""

    def __init__(self, workflow: str, reason: str, hints: Sequence[Hint] = ()) -> None:
        super().__init__(f"Workflow {workflow!r} cannot be started over the HTTP API: {reason}",
                         hints=hints)
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


class OutboundActionNotAllowed(PlanCodeNotAllowed):
    """An execution started over the HTTP API reached an action that connects from the
    server to another host (``std.ssh``, ``std.email``), and ``[api]
    allow_outbound_actions`` is off."""

    def __init__(self, action: str, task: str) -> None:
        InvalidInput.__init__(
            self,
            f"Task {task!r} (action {action}) would connect from the server to a host the "
            "workbook names, and this execution was started over the HTTP API, where the "
            "server refuses that: any API writer could reach what the server reaches. Run "
            "it from the CLI or the Python API, or, if every writer of this API may do so, "
            "set [api] allow_outbound_actions = true in the server's configuration."
        )
        self.action = action
        self.task = task


class PlanNotFound(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Plan {name!r} does not exist.",
            hints=[Hint("Create it with", "plan.create", {"plan": name})])
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
            f"Plan {plan!r} has no version {version!r}.",
            hints=[Hint("List versions with", "plan.history", {"plan": plan})])
        self.plan = plan
        self.version = version


class ActionNotFound(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Action {name!r} is not registered.",
            hints=[Hint("List actions with", "action.list")])
        self.name = name


class WorkflowNotFound(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Workflow {name!r} does not exist.",
            hints=[Hint("List workflows with", "workflow.list")])
        self.name = name


class ExecutionNotFound(NotFound):
    def __init__(self, execution_id: str) -> None:
        super().__init__(
            f"Execution {execution_id!r} does not exist.",
            hints=[Hint("List executions with", "execution.list")])
        self.execution_id = execution_id


class PlanExists(Conflict):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Plan {name!r} already exists.",
            hints=[Hint("Update it with", "plan.update", {"plan": name}),
                   Hint("or delete it first with", "plan.delete", {"plan": name}, sep=", ")])
        self.name = name


class RestoreWouldReplace(Conflict):
    """A backup restored into a data directory that holds state, without force."""

    reason_code = "restore-would-replace"

    def __init__(self, data_dir: str, holding: list[str], archive: str) -> None:
        super().__init__(
            f"Data directory {data_dir!r} already holds {', '.join(holding)}; restoring "
            "would replace them. Restore into an empty data directory, or replace them, "
            "keeping them aside,",
            hints=[Hint("with", "backup.restore_force", {"archive": archive}, tail=".")])
        self.data_dir = data_dir
        self.holding = holding

    def details(self) -> dict[str, Any]:
        """What the data directory holds (its top-level entries, no path)."""
        return {"holding": list(self.holding)}


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
            "update again to repair the plan",
            hints=[Hint("", "plan.update", {"plan": name}, sep=" (", tail="), then deploy.")])
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
            "instead of resuming it."
        )
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


class ExecutionLockTimeout(Conflict):
    def __init__(self, execution_id: str, seconds: float) -> None:
        super().__init__(
            f"Execution {execution_id!r} is being resumed by another process (waited "
            f"{seconds:g} s for its lock).",
            hints=[Hint("Follow it with", "execution.show", {"execution": execution_id})])
        self.execution_id = execution_id
        self.seconds = seconds


class PlanStoreError(BackendUnavailable):
    """The plan store (Swift or the local directory) failed."""
