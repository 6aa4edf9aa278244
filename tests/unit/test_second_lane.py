"""The test lanes' scheduling (tests/second_lane.py): which group of tests a process
runs next, and the busy-cores figure of the run's summary."""

from __future__ import annotations

import os

from tests.second_lane import Schedule, busy_cores, wants_a_lane


def _run(schedule: Schedule) -> list[list[str]]:
    order = []
    while (tests := schedule.next()) is not None:
        order.append(tests)
    return order


def test_shared_files_run_in_order_when_claimed_and_are_skipped_when_the_other_lane_has_them():
    taken_by_other = {"b.py"}
    claims: list[str] = []

    def claim(path: str) -> bool:
        claims.append(path)
        return path not in taken_by_other

    groups = [("a.py", ["a1", "a2"], False), ("b.py", ["b1"], False), ("c.py", ["c1"], False)]
    assert _run(Schedule(groups, claim, lambda tests: True)) == [["a1", "a2"], ["c1"]]
    assert claims == ["a.py", "b.py", "c.py"]


def test_a_pinned_group_runs_as_soon_as_ready_ahead_of_the_shared_files_left():
    ready = {"now": False}
    groups = [("a.py", ["a1"], False), ("b.py", ["b1"], False), ("c.py", ["c1"], False),
              ("over/x.py", ["x1", "x2"], True), ("over/y.py", ["y1"], True)]
    claimed: list[str] = []
    schedule = Schedule(groups, lambda path: claimed.append(path) is None,
                        lambda tests: ready["now"])
    assert schedule.next() == ["a1"]
    ready["now"] = True  # the background deployments are made
    assert schedule.next() == ["x1", "x2"]
    assert schedule.next() == ["y1"]
    assert schedule.next() == ["b1"]
    assert schedule.next() == ["c1"]
    assert schedule.next() is None
    assert claimed == ["a.py", "b.py", "c.py"]  # pinned files are never claimed


def test_pinned_groups_not_ready_run_once_no_shared_file_is_left():
    groups = [("a.py", ["a1"], False), ("over/x.py", ["x1"], True), ("b.py", ["b1"], False)]
    mine = {"a.py"}
    order = _run(Schedule(groups, lambda path: path in mine, lambda tests: False))
    assert order == [["a1"], ["x1"]]  # b.py was the other lane's; x waits in its fixtures


def test_busy_cores_is_the_busy_share_of_the_cpu_time_between_two_samples():
    cores = os.cpu_count() or 1
    samples = [(0.0, 0.0, 0.0), (10.0, 5.0 * cores, 10.0 * cores),
               (20.0, 15.0 * cores, 20.0 * cores), (30.0, 15.0 * cores, 30.0 * cores)]
    assert busy_cores(samples, 0.0, 10.0) == cores * 0.5
    assert busy_cores(samples, 10.0, 20.0) == cores * 1.0
    assert busy_cores(samples, 20.0, 30.0) == 0.0
    assert busy_cores(samples, 0.0, 30.0) == cores * 0.5
    assert busy_cores(samples, 31.0, 40.0) is None  # no sample there
    assert busy_cores(samples[:1], 0.0, 30.0) is None


def _steady(busy: float, seconds: float, start: float = 0.0) -> list[tuple[float, float, float]]:
    """Samples every 5 s of a machine keeping ``busy`` cores busy."""
    cores = os.cpu_count() or 1
    return [(start + t, busy * t, cores * t) for t in range(0, int(seconds) + 1, 5)]


def test_the_first_lane_starts_once_the_background_is_made_and_not_before(monkeypatch):
    monkeypatch.setenv("TRIPLEO_FLOW_TEST_LANES", "2")
    cores = os.cpu_count() or 1
    busy = _steady(cores, 200)
    assert wants_a_lane(busy, 200, 0, None, background_done=True, files_left=50)
    assert not wants_a_lane(busy, 200, 0, None, background_done=False, files_left=50)


def test_a_lane_starts_while_a_core_idles_and_never_beyond_the_limit(monkeypatch):
    monkeypatch.setenv("TRIPLEO_FLOW_TEST_LANES", "2")
    cores = os.cpu_count() or 1
    idle = _steady(cores - 1.0, 300)
    assert wants_a_lane(idle, 300, 1, 100.0, background_done=True, files_left=50)
    # none beside the background deployments, however idle the machine
    assert not wants_a_lane(idle, 300, 0, None, background_done=False, files_left=50)
    assert not wants_a_lane(idle, 300, 1, 100.0, background_done=False, files_left=50)
    # the last lane has not found its pace yet; the limit; too few files left
    assert not wants_a_lane(idle, 300, 1, 250.0, background_done=True, files_left=50)
    assert not wants_a_lane(idle, 300, 2, 100.0, background_done=True, files_left=50)
    assert not wants_a_lane(idle, 300, 1, 100.0, background_done=True, files_left=3)
    monkeypatch.setenv("TRIPLEO_FLOW_TEST_LANES", "0")
    assert not wants_a_lane(idle, 300, 0, None, background_done=True, files_left=50)


def test_no_lane_starts_while_every_core_works_or_before_a_whole_window_was_seen(monkeypatch):
    monkeypatch.setenv("TRIPLEO_FLOW_TEST_LANES", "2")
    cores = os.cpu_count() or 1
    assert not wants_a_lane(_steady(cores - 0.3, 300), 300, 1, 100.0,
                            background_done=True, files_left=50)
    young = _steady(0.0, 60)  # all idle, but only 60 s of samples
    assert not wants_a_lane(young, 60, 1, None, background_done=True, files_left=50)


def test_a_lane_whose_report_has_failures_fails_the_run_whatever_its_exit_status(
        tmp_path, monkeypatch):
    """A CI run ended 0 although lane1's report counted 2 failures (its process had
    exited 0): the report decides, not only the exit status."""
    from tests import second_lane

    base = tmp_path
    assert second_lane.claim(base, "tests/functional/test_x.py", "lane1")
    plan = {"tests/functional/test_x.py": ["tests/functional/test_x.py::a",
                                           "tests/functional/test_x.py::b"]}
    monkeypatch.setattr(second_lane, "_lane", {"base": str(base), "plan": plan})

    class Exited:
        returncode = 0

    def report(failures: int) -> None:
        (base / "lane1.xml").write_text(
            f'<testsuites><testsuite tests="2" failures="{failures}" errors="0" '
            f'time="1.0"></testsuite></testsuites>')

    report(0)
    assert second_lane._failure({"who": "lane1", "process": Exited()}) == ""
    report(2)
    assert second_lane._failure({"who": "lane1", "process": Exited()}) == (
        "lane1 failed: 2 tests failed or erred (exit 0)")
