"""The one error hierarchy of tripleo-flow.

The kinds live in :mod:`.kinds`, the errors of plans, inputs and workflows in
:mod:`.plans`, those of Heat, Ironic and Ansible in :mod:`.services`, those of
a running workbook in :mod:`.workflows`; every name is importable from here.

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
     |    |    +-- OutboundActionNotAllowed (403: ... would connect out: std.ssh, std.email)
     |    +-- ExpressionError              (a workflow expression: unparsable, failed, too big)
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
     |    +-- NoKeptStack                  (deploy --config-download-only with no kept stack)
     |    +-- ServersNotInStack            (overcloud node delete of a host the stack has not)
     |    +-- AnsibleNotInstalled          (no ansible-playbook: install the ansible extra)
     |    +-- ValidationsNotInstalled      (no validations virtualenv: names the script)
     |    +-- ValidationNotFound / ValidationResultNotFound
     |    +-- NoInventory                  (validations of a plan never deployed)
     +-- Conflict                          exit 4   409
     |    +-- PlanExists
     |    +-- RestoreWouldReplace          (a backup restore over state, without force)
     |    +-- PlanBeingCreated             (another live command is creating it)
     |    +-- PlanBusy                     (deployment in progress or recorded)
     |    +-- DeploymentRunning            (a live process is deploying the plan)
     |    +-- StackNotFinished             (the kept stack is not COMPLETE: deploy again)
     |    +-- DumpKindMismatch             (a SQLite dump for a MariaDB Heat, or back)
     |    +-- UpdateNotPrepared            (update or upgrade run before its prepare)
     |    +-- IronicRunning                (an Ironic already runs from that ironic-dir)
     |    +-- TooManyLaunchedHeats         (HTTP users left [api] launched_heats_max Heats running)
     |    +-- NoNodesInState               (--all-manageable found no node: their states)
     |    +-- LockTimeout
     |    +-- ExecutionLockTimeout         (another process resumes that execution)
     |    +-- SecretNotPersisted           (a resumed run needs a secret the records masked)
     |    +-- ValidationsNotRunning        (validation stop of an execution not running)
     +-- BackendUnavailable                exit 5   503
     |    +-- PlanStoreError
     |    +-- TooManyEventStreams          (every stream [api] max_event_streams allows is open)
     |    +-- TooManyConnections           (one address holds [api] connections_per_client)
     |    +-- IronicError                  (Ironic refused, failed or a node ended in error)
     +-- WorkflowFailed                    exit 6   500
          +-- StackFailed                  (the stack ended FAILED: each failed resource)
          +-- AnsibleFailed                (ansible-playbook failed: its output's tail)
          +-- ValidationsFailed            (deploy --run-validations: each one's reasons)
          +-- Interrupted          exit 130 (SIGINT/SIGTERM: the flow reverted)
     +-- TaskFailed                        exit 1   500 (a workbook task failed)
     |    +-- FailCommand                  (a ``fail`` transition)
     |    +-- JoinFailed                   (a join a failed task left unable to fire)
     |    +-- BreakRetry                   (``retry: break-on`` matched)
     |    +-- RetriesExhausted             (last attempt of a ``retry: count`` expression)
     +-- ChildPaused                       (a sub-workflow paused: its parent pauses)
     |    +-- ChildCancelled               (a sub-workflow was cancelled: its task reads so)
     +-- ActionFailed                      exit 1   500 (std.fail, a failed std.http)
"""

from __future__ import annotations

from tripleo_flow.exceptions.kinds import (
    API,
    CLI,
    BackendUnavailable,
    Conflict,
    Hint,
    InvalidInput,
    NotFound,
    TripleoFlowError,
    WorkflowFailed,
)
from tripleo_flow.exceptions.plans import (
    ActionNotFound,
    BodyTooLarge,
    ContainerExists,
    ContainerNotFound,
    ExecutionLockTimeout,
    ExecutionNotFound,
    InvalidArchive,
    InvalidNetworks,
    InvalidParameter,
    InvalidPlanName,
    InvalidRoles,
    InvalidTemplate,
    InvalidWorkbook,
    LockTimeout,
    MissingParameters,
    ObjectNotFound,
    OutboundActionNotAllowed,
    PathNotAllowed,
    PlanBeingCreated,
    PlanBusy,
    PlanCodeNotAllowed,
    PlanExists,
    PlanNotFound,
    PlanStoreError,
    PlanUpdateUnfinished,
    RestoreWouldReplace,
    SecretNotPersisted,
    TooManyConnections,
    TooManyEventStreams,
    UnknownEnvironment,
    VersionNotFound,
    WorkflowNotFound,
)
from tripleo_flow.exceptions.services import (
    AnsibleFailed,
    AnsibleNotInstalled,
    DeploymentRunning,
    DumpKindMismatch,
    DumpNotFound,
    HeatError,
    HeatNotInstalled,
    HeatRunning,
    Interrupted,
    InvalidNodes,
    IronicError,
    IronicNotConfigured,
    IronicNotInstalled,
    IronicRunning,
    NodeNotFound,
    NoKeptStack,
    NoNodesInState,
    PortInUse,
    ServersNotInStack,
    StackFailed,
    StackNotFinished,
    TooManyLaunchedHeats,
    UpdateNotPrepared,
)
from tripleo_flow.exceptions.validations import (
    NoInventory,
    ValidationNotFound,
    ValidationResultNotFound,
    ValidationsFailed,
    ValidationsNotInstalled,
    ValidationsNotRunning,
)
from tripleo_flow.exceptions.workflows import (
    ActionFailed,
    BreakRetry,
    ChildCancelled,
    ChildPaused,
    ExpressionError,
    FailCommand,
    JoinFailed,
    RetriesExhausted,
    TaskFailed,
)

__all__ = [
    "API",
    "CLI",
    "Hint",
    "ActionFailed",
    "ActionNotFound",
    "AnsibleFailed",
    "AnsibleNotInstalled",
    "BackendUnavailable",
    "BodyTooLarge",
    "BreakRetry",
    "ChildCancelled",
    "ChildPaused",
    "Conflict",
    "ContainerExists",
    "ContainerNotFound",
    "DeploymentRunning",
    "DumpKindMismatch",
    "DumpNotFound",
    "EXIT_CODES",
    "ExecutionNotFound",
    "ExpressionError",
    "FailCommand",
    "RetriesExhausted",
    "HTTP_STATUS",
    "HeatError",
    "HeatNotInstalled",
    "HeatRunning",
    "Interrupted",
    "InvalidArchive",
    "InvalidInput",
    "InvalidNetworks",
    "InvalidNodes",
    "InvalidParameter",
    "InvalidPlanName",
    "InvalidRoles",
    "InvalidTemplate",
    "InvalidWorkbook",
    "IronicError",
    "IronicNotConfigured",
    "IronicNotInstalled",
    "IronicRunning",
    "LockTimeout",
    "ExecutionLockTimeout",
    "MissingParameters",
    "NoInventory",
    "NoKeptStack",
    "ServersNotInStack",
    "UpdateNotPrepared",
    "NodeNotFound",
    "NoNodesInState",
    "NotFound",
    "ObjectNotFound",
    "OutboundActionNotAllowed",
    "PathNotAllowed",
    "PlanBeingCreated",
    "PlanBusy",
    "PlanCodeNotAllowed",
    "PlanExists",
    "PlanNotFound",
    "PlanStoreError",
    "PlanUpdateUnfinished",
    "RestoreWouldReplace",
    "PortInUse",
    "SecretNotPersisted",
    "StackFailed",
    "StackNotFinished",
    "TaskFailed",
    "JoinFailed",
    "TooManyConnections",
    "TooManyEventStreams",
    "TooManyLaunchedHeats",
    "TripleoFlowError",
    "UnknownEnvironment",
    "ValidationNotFound",
    "ValidationResultNotFound",
    "ValidationsFailed",
    "ValidationsNotInstalled",
    "ValidationsNotRunning",
    "VersionNotFound",
    "WorkflowFailed",
    "WorkflowNotFound",
    "exit_code",
    "http_status",
]


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
