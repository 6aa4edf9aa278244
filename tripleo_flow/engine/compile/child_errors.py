"""The error of a failed child execution, as its parent's task raises it.

Mistral hands a failed sub-workflow's ``state_info`` to its parent's task as the
task's own (``mistral/engine/workflows.py`` ``_send_result_to_parent_workflow``,
then the task's ``state_info`` is the action's error).  Ours does the same with the
error's kind and next steps: the child's execution record keeps its error as data
(:data:`~.error_records.ERROR_RECORD`, written with the record's ``error``), and the
parent's task raises an error of that kind, text and next steps, rebuilt from that
record.  So a deploy whose Ansible step runs in a sub-workflow still fails with
:class:`~tripleo_flow.exceptions.AnsibleFailed` (its exit code, its hints), whether
the child ran in this process, was resumed after ``kill -9`` or had ended before its
parent's task ran again.  The action's error data stays with the child's task:
the parent's ``task().result`` reads the child's error message, as Mistral's.
"""

from __future__ import annotations

from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.engine.store import error_records

#: Kinds that steer the workflow that raised them only (its ``fail`` command, its
#: task's retry): the parent's task retries and handles them as any failure.
_OWN_WORKFLOW = (exceptions.FailCommand, exceptions.BreakRetry, exceptions.RetriesExhausted)


def kept(exc: BaseException) -> dict[str, Any] | None:
    """What an execution that ``exc`` failed keeps of it as data (None: not ours)."""
    return error_records.describe(exc)


def child_error(store: Any, execution_id: str, workflow: str) -> exceptions.TripleoFlowError:
    """The error the task whose child execution ``execution_id`` (of ``workflow``)
    failed raises: the child's error rebuilt from its record (a plain task failure
    with the child's message when it was not one of ours)."""
    meta = store.flow_detail(execution_id, lazy=True).meta or {}
    record = meta.get(error_records.ERROR_RECORD)
    rebuilt = error_records.rebuild(record)
    if isinstance(rebuilt, _OWN_WORKFLOW):  # in the parent, a plain task failure
        rebuilt = error_records.rebuild({**dict(record or {}), "class": "TaskFailed"})
    if rebuilt is not None:
        return rebuilt
    return exceptions.TaskFailed(str(meta.get("error") or f"Failed sub-workflow {workflow!r} "
                                     f"[execution_id={execution_id}]"))


__all__ = ["child_error", "kept"]
