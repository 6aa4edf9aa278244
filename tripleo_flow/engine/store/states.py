"""Execution state names that readers need without the engine (no TaskFlow, no
SQLAlchemy): the CLI's plan commands import :mod:`tripleo_flow.client`, which names them."""

from __future__ import annotations

#: The state of a cancelled execution (Mistral's name).
CANCELLED = "CANCELLED"
#: Where a task execution that ended CANCELLED (its sub-workflow was cancelled) keeps
#: its message (Mistral's task ``state_info``) in its outcome.
CANCELLED_INFO = "cancelled"
#: The state of an execution a pause stopped (Mistral's name).
PAUSED = "PAUSED"
#: The stored (TaskFlow) states of a failed execution: FAILURE when its undo failed,
#: REVERTED once its completed tasks were undone.  Readers see both as ERROR
#: (Mistral's name), the undo as the record's ``reverted``.
STORED_FAILED = ("FAILURE", "REVERTED")
#: The states of an execution that ended by itself; a cancel leaves them as they are
#: (as readers see them, and as stored).
ENDED = ("SUCCESS", "ERROR", CANCELLED, *STORED_FAILED)
#: The states an execution update (Mistral's ``PUT /v2/executions/{id}``) may ask for:
#: RUNNING resumes, PAUSED pauses, CANCELLED cancels, ERROR/SUCCESS stop.
UPDATE_STATES = ("RUNNING", "PAUSED", "SUCCESS", "ERROR", "CANCELLED")
#: What a workbook task's outcome says of it (its atom's state aside): it ran and
#: succeeded, it failed, or it was skipped (a condition or join left it out).
SUCCESS, ERROR, SKIPPED = "SUCCESS", "ERROR", "SKIPPED"

#: The atom metadata key of the time (``clock.time()``) a task last started running
#: (:class:`~.engine_storage.OneSaveTaskAction` writes it with the RUNNING state).
STARTED_AT = "started_at"
#: The atom metadata key of the time a task ended in a failure, which TaskFlow keeps
#: instead of a result (so without the outcome's ``finished_at``).
FAILED_AT = "failed_at"
