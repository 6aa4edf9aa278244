"""A task's error kept with its record, so any process reports it as the first did.

The error a task raises (a :class:`~tripleo_flow.exceptions.TripleoFlowError`)
carries its kind (the CLI's exit code, the HTTP status) and its next steps
(hints).  TaskFlow persists only its text, so an execution resumed in another
process (after ``kill -9``, a pause, a conductor's loss), whose workflow then
fails on that error, used to report a plain task failure.  :func:`describe`
turns the error into data kept beside the task's outcome; :func:`rebuild` makes
an error of the same kind, text and hints from it.  :func:`combined` is the
error of a workflow several tasks failed: every task named (Mistral's state
info), the next steps of each, and the kind they share (a plain task failure
when they differ).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tripleo_flow import exceptions

#: Outcome (or atom metadata) key of a task's error as data.
ERROR_RECORD = "error_record"


def describe(error: BaseException | None) -> dict[str, Any] | None:
    """``error`` as data (None: not one of ours, nothing to keep beyond its text)."""
    if not isinstance(error, exceptions.TripleoFlowError):
        return None
    name = type(error).__name__
    if getattr(exceptions, name, None) is not type(error):
        name = _known_base(type(error)).__name__
    return {"class": name, "text": error.text,
            "hints": [h.as_record() for h in error.hints]}


def _known_base(cls: type) -> type:
    """The nearest class of ``cls`` that :mod:`tripleo_flow.exceptions` names."""
    for base in cls.__mro__:
        if getattr(exceptions, base.__name__, None) is base:
            return base
    return exceptions.TripleoFlowError


def _make(cls: type[exceptions.TripleoFlowError], text: str,
          hints: Sequence[exceptions.Hint]) -> exceptions.TripleoFlowError:
    # The class's own constructor takes other arguments (a plan's name...): its kind,
    # text and hints are what a reader and an exit code go by.
    error = cls.__new__(cls)
    exceptions.TripleoFlowError.__init__(error, text, hints=hints)
    if isinstance(error, exceptions.ActionFailed):
        error.data = None  # the action's error data stays with the task that raised it
    return error


def rebuild(data: Any) -> exceptions.TripleoFlowError | None:
    """The error :func:`describe` gave ``data`` for (None when ``data`` is not one)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("text"), str):
        return None
    cls = getattr(exceptions, str(data.get("class")), None)
    if not (isinstance(cls, type) and issubclass(cls, exceptions.TripleoFlowError)):
        return None
    try:
        # an older version's hints kept their words (command, request): read as they are
        hints = [exceptions.Hint.from_record(h) for h in data.get("hints") or ()]
    except (TypeError, KeyError, ValueError, AttributeError):
        hints = []
    return _make(cls, data["text"], hints)


def prefixed(prefix: str, error: BaseException) -> exceptions.TripleoFlowError:
    """``error`` worded after ``prefix`` (a ``with-items`` task's "one of 3 items
    failed: "), of its kind and with its next steps (a plain task failure when it is
    not one of ours)."""
    if not isinstance(error, exceptions.TripleoFlowError):
        return exceptions.TaskFailed(prefix + (str(error) or type(error).__name__))
    return _make(_known_base(type(error)), prefix + error.text, error.hints)


def combined(message: str, causes: Sequence[BaseException | None]) -> BaseException:
    """The error of a workflow that ``causes`` (one per failed task, None when not
    known) failed, worded ``message``: of the kind they all share, with each one's
    next steps (once each)."""
    hints: list[exceptions.Hint] = []
    # A join that failed because another task did is that failure's consequence: the
    # kind and next steps are the failed tasks' (a failed Heat launch beside the plan
    # check stays a HeatNotInstalled, not a TaskFailed).
    own = [c for c in causes if not isinstance(c, exceptions.JoinFailed)]
    causes = own or causes
    for cause in causes:
        for hint in getattr(cause, "hints", ()) or ():
            if hint not in hints:
                hints.append(hint)
    kind: type[exceptions.TripleoFlowError] = exceptions.TaskFailed
    known = [c for c in causes if isinstance(c, exceptions.TripleoFlowError)]
    if known and len(known) == len(causes):
        for base in type(known[0]).__mro__:
            if isinstance(base, type) and issubclass(base, exceptions.TripleoFlowError) and \
                    all(isinstance(c, base) for c in known):
                kind = _known_base(base)
                break
    if kind is exceptions.TripleoFlowError:
        kind = exceptions.TaskFailed
    error = _make(kind, message, hints)
    error.several = True  # type: ignore[attr-defined]  # the execution's error is this
    return error


__all__ = ["ERROR_RECORD", "combined", "describe", "prefixed", "rebuild"]
