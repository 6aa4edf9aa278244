"""Stack progress: counting resources and turning events into lines (pure, table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow.core import progress


@pytest.mark.parametrize(("statuses", "expected"), [
    ([], (0, 0)),
    (["INIT_COMPLETE", "CREATE_IN_PROGRESS"], (0, 2)),
    (["CREATE_COMPLETE", "CREATE_IN_PROGRESS", "INIT_COMPLETE"], (1, 3)),
    (["UPDATE_COMPLETE", "CREATE_COMPLETE", "CREATE_FAILED"], (2, 3)),
    (["CHECK_COMPLETE", "SUSPEND_COMPLETE"], (2, 2)),
])
def test_count_resources(statuses: list[str], expected: tuple[int, int]) -> None:
    assert progress.count_resources([{"resource_status": s} for s in statuses]) == expected


@pytest.mark.parametrize(("event", "line"), [
    ({"event_time": "T1", "stack_name": "oc", "resource_name": "A",
      "resource_status": "CREATE_IN_PROGRESS", "resource_status_reason": "state changed"},
     "T1 oc/A CREATE_IN_PROGRESS"),
    ({"event_time": "T2", "stack_name": "oc", "resource_name": "B",
      "resource_status": "CREATE_FAILED", "resource_status_reason": "boom"},
     "T2 oc/B CREATE_FAILED: boom"),
    ({"event_time": "T3", "resource_name": "C", "resource_status": "CREATE_COMPLETE"},
     "T3 /C CREATE_COMPLETE"),
    ({"event_time": "T4", "resource_name": "D", "resource_status": "CREATE_COMPLETE",
      "links": [{"rel": "self", "href": "http://h/v1/t/stacks/oc-Compute-x/id1/events/e"},
                {"rel": "stack", "href": "http://h/v1/t/stacks/oc-Compute-x/id1"}]},
     "T4 oc-Compute-x/D CREATE_COMPLETE"),
])
def test_event_line(event: dict[str, Any], line: str) -> None:
    assert progress.event_line(event) == line


def test_new_events_reports_each_event_once_oldest_first() -> None:
    seen: set[str] = set()
    first = [{"id": "2", "event_time": "T2", "resource_name": "B", "resource_status": "X"},
             {"id": "1", "event_time": "T1", "resource_name": "A", "resource_status": "X"}]
    assert progress.new_events(first, seen) == ["T1 /A X", "T2 /B X"]
    more = [*first, {"id": "3", "event_time": "T3", "resource_name": "C", "resource_status": "Y"}]
    assert progress.new_events(more, seen) == ["T3 /C Y"]
    assert progress.new_events(more, seen) == []


def test_progress_line() -> None:
    report = progress.StackProgress("oc", "CREATE_IN_PROGRESS", 5, 12)
    assert report.line() == "Stack oc CREATE_IN_PROGRESS: 5/12 resources complete"
