"""The operations an error's next step may name: what to do, not how to ask for it.

A :class:`~tripleo_flow.exceptions.Hint` names one of :data:`OPERATIONS` and gives
its arguments; each interface says how it is done in its own words: ``cli/``
spells it as a ``tripleo-flow`` command, ``http/`` as a request.  The interfaces
hand their spellings to :func:`register` when they start (nothing here imports
them); :func:`check` is what the tests hold every spelling table to.  An operation
marked ``server_only`` has no request: only someone on the server can do it
(launching Heat), and the HTTP API says so ("on the server: tripleo-flow ...").  One
marked ``api_only`` has no command (sending an upload): the CLI words it as the
request.

A spelling is a :meth:`str.format` template over the operation's arguments.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

#: The interfaces a message is worded for.
CLI = "cli"
API = "api"


@dataclass(frozen=True)
class Operation:
    """What a next step does: its arguments, and whether only the server can do it."""

    args: tuple[str, ...] = ()
    server_only: bool = False
    api_only: bool = False


#: Every operation a hint may name (the contract between the errors and the
#: interfaces' spellings).
OPERATIONS: dict[str, Operation] = {
    # plans
    "plan.create": Operation(("plan",)),
    "plan.update": Operation(("plan",)),
    "plan.update_files": Operation(("plan",)),
    "plan.delete": Operation(("plan",)),
    "plan.history": Operation(("plan",)),
    "plan.environments": Operation(("plan",)),
    "parameter.show": Operation(("plan",)),
    "parameter.schema": Operation(("plan",)),
    "parameter.set": Operation(("plan", "name", "value")),
    "capabilities.show": Operation(("plan",)),
    "capabilities.disable": Operation(("plan", "path")),
    "role.set": Operation(("plan",)),
    "network.set": Operation(("plan",)),
    "password.show": Operation(("plan",)),
    "backup.restore_force": Operation(("archive",)),
    "plan.export_with_secrets": Operation(server_only=True),
    # what only an HTTP API user does, or needs
    "upload.create": Operation(api_only=True),
    "download.get": Operation(api_only=True),
    "execution.poll": Operation(("execution",), api_only=True),
    # deployments
    "deploy": Operation(("plan",)),
    "deploy.config_download_only": Operation(("plan",), server_only=True),
    "deployment.status": Operation(("plan",)),
    "deployment.failures": Operation(("plan",)),
    "validation.run_pre_deployment": Operation(("plan",)),
    # (kind: update, upgrade)
    "lifecycle.prepare": Operation(("kind", "plan")),
    # nodes
    "node.list": Operation(),
    "node.manage": Operation(),
    "node.import": Operation(),
    "node.provision": Operation(("plan",)),
    # workflows, executions, workbooks
    "action.list": Operation(),
    "workflow.list": Operation(),
    "workflow.run": Operation(("workflow",)),
    "workflow.run_with_input": Operation(("workflow", "input")),
    "execution.list": Operation(),
    "execution.show": Operation(("execution",)),
    "execution.tasks": Operation(("execution",)),
    "execution.resume": Operation(("execution",)),
    # where it was started: a process the HTTP API does not reach
    # (verb: pause, resume, cancel, update)
    "execution.change_where_started": Operation(("verb", "execution"), server_only=True),
    "task.rerun_where_started": Operation(("execution", "task"), server_only=True),
    "workbook.list": Operation(),
    "workbook.create": Operation(("path",)),
    "workbook.update": Operation(("path",)),
    # the services only the server's own user launches
    "heat.launch": Operation(("heat_dir",), server_only=True),
    "heat.kill": Operation(("heat_dir",)),
    "heat.kill_any": Operation(server_only=True),
    "heat.status": Operation(server_only=True),
    "heat.install": Operation(server_only=True),
    "heat.install_force": Operation(server_only=True),
    "heat.image_build": Operation(server_only=True),
    "ironic.launch": Operation(server_only=True),
    "ironic.launch_in": Operation(("ironic_dir",), server_only=True),
    "ironic.kill": Operation(("ironic_dir",), server_only=True),
}

#: interface -> operation -> template, as the interfaces registered them.
_SPELLINGS: dict[str, Mapping[str, str]] = {}


def register(interface: str, spellings: Mapping[str, str]) -> None:
    """Word operations as ``interface`` (:data:`CLI`, :data:`API`) does, from now on
    in this process (each interface calls it when it starts)."""
    _SPELLINGS[interface] = spellings


def registered(interface: str) -> bool:
    return interface in _SPELLINGS


#: The environment variable a process started to run an execution (``api.worker``)
#: finds its starter's words in: it words the errors it records as its starter would.
ENVIRONMENT = "TRIPLEO_FLOW_HINT_WORDS"


def exported() -> dict[str, str]:
    """The environment a child process gets this process's words from."""
    return {ENVIRONMENT: json.dumps(_SPELLINGS)} if _SPELLINGS else {}


def install_exported() -> None:
    """Register the words :func:`exported` handed this process (none: nothing)."""
    given = os.environ.get(ENVIRONMENT)
    for interface, spellings in (json.loads(given) if given else {}).items():
        register(interface, spellings)


def check(interface: str, spellings: Mapping[str, str]) -> list[str]:
    """What is wrong with ``spellings`` as ``interface``'s table (empty: nothing): every
    operation spelled (the HTTP API: every one not ``server_only``), none unknown, no
    template naming an argument the operation has not."""
    problems = []
    for name, op in OPERATIONS.items():
        unspelled = op.server_only if interface == API else op.api_only
        if name not in spellings and not unspelled:
            problems.append(f"{name}: not spelled")
        if name in spellings and unspelled:
            problems.append(f"{name}: {'server' if interface == API else 'API'} only, "
                            "yet spelled")
    for name, template in spellings.items():
        if name not in OPERATIONS:
            problems.append(f"{name}: no such operation")
            continue
        try:
            template.format(**{a: a for a in OPERATIONS[name].args})
        except (KeyError, IndexError) as exc:
            problems.append(f"{name}: {template!r} names {exc}")
    return problems


def spell(interface: str, op: str, args: Mapping[str, object]) -> str | None:
    """``op`` with ``args`` in ``interface``'s words: a command (without
    ``tripleo-flow``) or a request; None when the interface cannot do it or has
    registered no words (see :func:`neutral`)."""
    template = _SPELLINGS.get(interface, {}).get(op)
    return None if template is None else template.format(**args)


def neutral(op: str, args: Mapping[str, object]) -> str:
    """``op`` worded by no interface (a Python caller that started none)."""
    given = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"operation {op}({given})"


__all__ = ["API", "CLI", "ENVIRONMENT", "OPERATIONS", "Operation", "check", "exported",
           "install_exported", "neutral", "register", "registered", "spell"]
