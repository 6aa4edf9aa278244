"""Progress of long work, as values a listener receives.

* A stack being followed: resources complete / total and new events.  Pure:
  takes what the Heat API lists (resources and events, nested ones included)
  and returns a :class:`StackProgress` value and the lines a user reads.
* A plan create or update: files checked, then bytes written to the plan
  store (:class:`PlanProgress`), reported in whole-percent steps
  (:class:`PercentSteps`) so a listener is called about a hundred times
  whatever the size of the tree.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StackProgress:
    """One look at a stack: its status, resources complete of total, events since last."""

    stack: str
    status: str
    complete: int
    total: int
    events: tuple[str, ...] = ()
    #: How much of the stack tree is done, 0..1, never less than an earlier look at
    #: the same operation reported (:func:`stack_share`); ``complete / total`` when
    #: the follower did not work it out.
    share: float | None = None

    def fraction(self) -> float:
        """:attr:`share`, else ``complete / total`` (1 when there is nothing)."""
        if self.share is not None:
            return self.share
        return 1.0 if self.total <= 0 else min(1.0, self.complete / self.total)

    def line(self) -> str:
        """``Stack oc CREATE_IN_PROGRESS: 5/12 resources complete``."""
        return (f"Stack {self.stack} {self.status}: "
                f"{self.complete}/{self.total} resources complete")

    def stored(self) -> dict[str, Any]:
        """The details the workflow engine stores with the task for this report."""
        return {**_details("stack", self.complete, self.total, self.status),
                "share": round(self.fraction(), 4)}


#: What a deployment calls each time it looks at the stack.
ProgressListener = Callable[[StackProgress], None]


def is_complete(status: str) -> bool:
    """A resource is done when its status is ``*_COMPLETE`` (``INIT_COMPLETE`` is not)."""
    return status.endswith("_COMPLETE") and not status.startswith("INIT_")


def count_resources(resources: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """``(complete, total)`` over the listed resources."""
    statuses = [str(r.get("resource_status", "")) for r in resources]
    return sum(1 for s in statuses if is_complete(s)), len(statuses)


def _link_id(item: Mapping[str, Any], rel: str) -> str | None:
    """The last part of ``item``'s link ``rel`` (a stack's id), or None."""
    for link in item.get("links") or []:
        if link.get("rel") == rel:
            return str(link.get("href", "")).rstrip("/").rsplit("/", 1)[-1] or None
    return None


def stack_share(resources: Iterable[Mapping[str, Any]], stack_id: str) -> float | None:
    """How much of the stack ``stack_id`` and its nested stacks is done, 0..1.

    Heat lists a stack's resources all at once when the stack starts (each nested stack's
    when that one starts), so the plain count's total grows as nested stacks appear and a
    bar drawn from it runs backwards.  Here each resource of a stack weighs the same
    within its stack: a complete one counts 1, one whose nested stack is listed counts
    that stack's share, any other 0.  A nested stack appearing only splits a weight that
    counted 0, so while a stack is created the share never goes down.  None when the
    listing does not say which stack its resources belong to.
    """
    members: dict[str, list[Mapping[str, Any]]] = {}
    for resource in resources:
        owner = _link_id(resource, "stack")
        if owner is None:
            return None
        members.setdefault(owner, []).append(resource)
    if stack_id not in members:
        return None
    done: dict[str, float] = {}

    def share(owner: str, path: frozenset[str]) -> float:
        if owner in done:
            return done[owner]
        listed = members.get(owner) or []
        if not listed:
            return 0.0
        total = 0.0
        for resource in listed:
            if is_complete(str(resource.get("resource_status", ""))):
                total += 1.0
                continue
            nested = _link_id(resource, "nested")
            if nested is not None and nested not in path:
                total += share(nested, path | {nested})
        done[owner] = total / len(listed)
        return done[owner]

    return share(stack_id, frozenset({stack_id}))


def event_stack(event: Mapping[str, Any]) -> str:
    """The stack an event belongs to: ``stack_name``, else its ``stack`` link's name."""
    if event.get("stack_name"):
        return str(event["stack_name"])
    for link in event.get("links") or []:
        if link.get("rel") == "stack":
            parts = str(link.get("href", "")).rstrip("/").split("/")
            return parts[-2] if len(parts) >= 2 else ""
    return ""


def event_line(event: Mapping[str, Any]) -> str:
    """``<time> <stack>/<resource> <status>: <reason>`` (reason left out when empty)."""
    where = f"{event_stack(event)}/{event.get('resource_name') or ''}"
    line = f"{event.get('event_time', '')} {where} {event.get('resource_status', '')}"
    reason = str(event.get("resource_status_reason") or "")
    return f"{line}: {reason}" if reason and reason != "state changed" else line


def new_events(events: Iterable[Mapping[str, Any]], seen: set[str]) -> list[str]:
    """Lines of the events whose id is not in ``seen`` (oldest first); ``seen`` is updated."""
    fresh = []
    for event in sorted(events, key=lambda e: (str(e.get("event_time", "")), str(e.get("id")))):
        ident = str(event.get("id"))
        if ident not in seen:
            seen.add(ident)
            fresh.append(event_line(event))
    return fresh


@dataclass(frozen=True)
class PlanProgress:
    """How far a plan create or update is.

    ``stage`` is ``check`` (``done`` of ``total`` template files parsed) or
    ``upload`` (``done`` of ``total`` bytes written to the plan store).
    """

    plan: str
    stage: str
    done: int
    total: int

    def stored(self) -> dict[str, Any]:
        """The details the workflow engine stores with the task for this report."""
        return _details(self.stage, self.done, self.total)


#: What a plan create or update calls as it checks and uploads templates.
PlanProgressListener = Callable[[PlanProgress], None]

#: ``(done, total)`` of one stage of work.
CountListener = Callable[[int, int], None]


@dataclass(frozen=True)
class NodeProgress:
    """A node of a node workflow changed provision ``state``."""

    node: str
    state: str

    def stored(self) -> dict[str, Any]:
        """One node of a with-items task changed provision state."""
        return _details("node", 0, 1, f"{self.node}: {self.state}")


@dataclass(frozen=True)
class ValidationProgress:
    """A validation started (``running``) or ended (its status, per host)."""

    validation: str
    status: str

    def stored(self) -> dict[str, Any]:
        """One validation of a with-items task started or ended (status per host)."""
        return _details("validation", 0, 1, f"{self.validation}: {self.status}")


#: What a running action reports: one typed value for every interface.
Progress = PlanProgress | StackProgress | NodeProgress | ValidationProgress


def _details(stage: str, done: int, total: int, status: str = "") -> dict[str, Any]:
    """The workflow engine's stored shape of a report (``stored()`` of each type)."""
    return {"stage": stage, "done": done, "total": total, "status": status}

#: Where an action's reports go (:attr:`ActionContext.reporter`).
Reporter = Callable[[Progress], None]


class PercentSteps:
    """Forward ``(done, total)`` to ``listener`` only when another whole percent is
    done (and always at the end); safe to call from several threads."""

    def __init__(self, listener: CountListener) -> None:
        self._listener = listener
        self._lock = threading.Lock()
        self._last = -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 if total <= 0 else min(100, done * 100 // total)
        with self._lock:
            if percent <= self._last:
                return
            self._last = percent
            self._listener(done, total)


def plan_stage(listener: PlanProgressListener | None, plan: str,
               stage: str) -> CountListener | None:
    """The ``(done, total)`` callback of one stage for ``listener`` (None for none)."""
    if listener is None:
        return None
    return PercentSteps(lambda done, total: listener(PlanProgress(plan, stage, done, total)))


__all__ = ["CountListener", "NodeProgress", "PercentSteps", "PlanProgress",
           "PlanProgressListener", "Progress", "ProgressListener", "Reporter", "StackProgress",
           "ValidationProgress", "count_resources", "event_line", "event_stack",
           "is_complete", "new_events", "plan_stage", "stack_share"]
