"""When a ``join`` of a direct workflow fires, waits or fails: Mistral's rule
(``DirectWorkflowController._get_join_logical_state``), for :mod:`.state_machine`.

Each inbound task *induces* a state on the join: RUNNING when its latest task
execution fired the join, ERROR when it ended without firing it or can no longer
run (no route leads to it), WAITING otherwise.  ``join: all`` fires when every
inbound task induces RUNNING and fails as soon as one induces ERROR; ``join: N``
(``one`` is 1) fires at N RUNNING and fails once more than ``inbound - N``
induce ERROR.  Pure: the machine passes what ran.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

RUNNING, WAITING, ERROR = "RUNNING", "WAITING", "ERROR"


class Runs:
    """What the machine knows of the tasks: for each task that ran, what its latest
    task execution fired (None while it runs); the tasks with a task execution
    created but not started; each task's inbound tasks."""

    def __init__(self, fired: Mapping[str, Sequence[str] | None], ready: Collection[str],
                 inbound: Mapping[str, Sequence[str]]) -> None:
        self.fired = fired
        self.ready = ready
        self.inbound = inbound

    def induced(self, join: str, task: str) -> str:
        """The state inbound ``task`` induces on ``join``."""
        if task not in self.fired:
            return WAITING if self._possible(task, {join}) else ERROR
        fired = self.fired[task]
        if fired is None:
            return WAITING
        return RUNNING if join in fired else ERROR

    def _possible(self, task: str, seen: set[str]) -> bool:
        """Whether ``task``, which has not run, may still run (Mistral's possible route)."""
        if task in seen:
            return False
        seen.add(task)
        if not self.inbound[task] or task in self.ready:
            return True
        for pred in self.inbound[task]:
            if pred not in self.fired:
                if self._possible(pred, seen):
                    return True
            elif self.fired[pred] is None or task in (self.fired[pred] or ()):
                return True
        return False

    def state(self, join: str, rule: str | int) -> str:
        """RUNNING (fire it), WAITING or ERROR for ``join`` with ``join: rule``."""
        induced = [self.induced(join, task) for task in self.inbound[join]]
        total, running, errors = len(induced), induced.count(RUNNING), induced.count(ERROR)
        if rule == "all":
            return RUNNING if running == total else ERROR if errors else WAITING
        need = 1 if rule == "one" else int(rule)
        if running >= need:
            return RUNNING
        return ERROR if errors > total - need else WAITING

    def blocking(self, join: str) -> list[str]:
        """The inbound tasks of ``join`` that did not fire it."""
        return [task for task in self.inbound[join] if self.induced(join, task) != RUNNING]
