"""Execution records as readers see them, made from a stored flow detail's row.

Light on purpose: no TaskFlow, no SQLAlchemy, so a reader of the executions
database (:mod:`.execution_reader`, what ``tripleo-flow execution list`` uses) and
the engine's store (:mod:`.executions`) build the same records from the same
columns (a flow detail's ``uuid``, ``name``, ``state`` and ``meta``).
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import pids, secret_masking
from tripleo_flow.engine.store import error_records
from tripleo_flow.engine.store.states import ERROR, PAUSED, STORED_FAILED

#: The logbook every execution is a flow detail of.
BOOK_NAME = "tripleo-flow"
BOOK_UUID = str(uuid.uuid5(uuid.NAMESPACE_URL, "tripleo-flow:executions"))


@dataclass(frozen=True)
class Execution:
    """An execution as stored: what ran, with what, and how it ended."""

    id: str
    workflow: str
    state: str
    input: dict[str, Any]
    output: Any = None
    error: str | None = None
    failed_task: str | None = None
    created_at: float | None = None
    updated_at: float | None = None
    finished_at: float | None = None
    target: str | None = None
    #: The execution's environment (Mistral's ``env``), read by ``env()``.
    env: dict[str, Any] | None = None
    #: ``error`` in the HTTP API's words (its next steps as its requests), and those
    #: steps as data (:class:`~tripleo_flow.exceptions.Hint`), when the error had some.
    error_api: str | None = None
    hints: list[dict[str, Any]] | None = None
    #: What the ``succeed``/``pause`` command that ended or paused the workflow said
    #: (``succeed(msg=...)``: Mistral's ``state_info``; a failure's is ``error``).
    state_info: str | None = None
    #: A sub-workflow's execution: the parent execution and its task execution that
    #: started it (Mistral's ``task_execution_id``).
    parent_id: str | None = None
    parent_task: str | None = None
    #: Read PAUSED at once after a pause request, while the engine that runs it
    #: (another process) still ends its running tasks; no new task starts
    #: (:mod:`~tripleo_flow.engine.store.pause_views`).
    pausing: bool = False
    #: Mistral's execution ``description``: text a user gave (``execution update
    #: --description``), shown as given.
    description: str | None = None
    #: It failed (reads ERROR, Mistral's name) and what its completed tasks did was
    #: undone (its flow ended REVERTED); False when the undo itself failed, or nothing
    #: failed.
    reverted: bool = False


def _state(fd: Any) -> str:
    meta = fd.meta or {}
    state = fd.state or "PENDING"
    if state in ("SUCCESS", *STORED_FAILED) and meta.get("pid") \
            and meta.get("finished_at") is None:
        # TaskFlow saved the flow's end; the execution's own end (its output, or its
        # error, and the time: run_outcomes) is the next write.  Until then it is still
        # ending, as Mistral shows no ended execution without its output; its process
        # gone before that write, it reads INTERRUPTED, as any run whose process died.
        state = "RUNNING"
    if state in ("RUNNING", "PENDING") and meta.get("pid"):
        if meta.get("host") == socket.gethostname() and not pids.alive(int(meta["pid"])):
            # A PENDING one stays PENDING when a jobboard holds it (another conductor
            # takes it); one this host was to run never starts now: interrupted.
            if state == "RUNNING" or meta.get("local"):
                return "INTERRUPTED"
            return str(state)
    if state == "SUSPENDED" and meta.get("paused_at"):
        return PAUSED  # Mistral's name: a 'pause' stopped it (SUSPENDED: a conductor's
        # SIGTERM or lost claim, its job back on the board)
    if state in STORED_FAILED:
        return ERROR  # Mistral's name; the undo is ``reverted``
    return str(state)


def to_execution(fd: Any) -> Execution:
    """The record of flow detail ``fd`` (anything with its ``uuid``, ``name``, ``state``
    and ``meta``), its stored secrets masked."""
    meta = fd.meta or {}
    error_api, hints = _error_words(meta)
    return Execution(
        id=fd.uuid, workflow=str(meta.get("workflow", fd.name)), state=_state(fd),
        input=masked(dict(meta.get("input") or {})), output=masked(meta.get("output")),
        error=meta.get("error"), failed_task=meta.get("failed_task"),
        created_at=meta.get("created_at"), updated_at=meta.get("updated_at"),
        finished_at=meta.get("finished_at"), target=meta.get("target"),
        env=masked(dict(meta.get("env") or {})), error_api=error_api,
        hints=hints, state_info=meta.get("state_info"),
        parent_id=meta.get("parent_id"), parent_task=meta.get("parent_task"),
        description=meta.get("description"), reverted=fd.state == "REVERTED")


def _error_words(meta: Mapping[str, Any]) -> tuple[str | None, list[dict[str, Any]] | None]:
    """The execution's error in the HTTP API's words and its next steps as data, worded
    here, by the reader, from the error kept as data (an older version's record: the
    words it kept, ``error_api`` and ``error_hints``)."""
    kept = error_records.rebuild(meta.get(error_records.ERROR_RECORD))
    if kept is not None and kept.hints and str(kept) == meta.get("error"):
        return kept.render(exceptions.API), [h.as_json() for h in kept.hints]
    return meta.get("error_api"), meta.get("error_hints")


def masked(value: Any, everything: bool = False) -> Any:
    """What a reader may see of a stored value (rows written before redaction too)."""
    return secret_masking.redact(value, everything=everything)[0]


__all__ = ["BOOK_NAME", "BOOK_UUID", "PAUSED", "Execution", "masked",
           "to_execution"]
