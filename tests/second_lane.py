"""Lanes: further pytest processes that share the session's test files while the machine
has a core to spare.

The test command runs on two cores: the session's tests and the background process that
makes the real overcloud deployments (``tests/overcloud_background.py``), and many
functional tests spend much of their time waiting for services. When the background
deployments are started, this plugin writes the session's test files to a plan and
starts ``python -m pytest`` lanes on them, each with its own JUnit report and log: the
first once every deployment is made (or failed), any further one while a core idles
(fewer than ``cores - IDLE_CORES`` busy over the last ``IDLE_WINDOW`` seconds), up to
``TRIPLEO_FLOW_TEST_LANES`` lanes (default 1: see :func:`max_lanes`). From then on they share
the files: each **claims a file before running its tests** (an exclusively created file
per test file in a shared directory), the session from the front of its order (the
functional tests first, the unit tests last), the lanes from the other end (the unit
tests first, then the functional tests from the back), so they meet wherever the work
is balanced, whatever each test costs on the machine at hand. The overcloud tests and
the tests that wait for the Heat images stay in the session (they read what its
background processes make) and run **as soon as** what they read is made, ahead of the
shared files left, so they do not become a tail the session runs alone.

The session waits for the lanes at its end, prints their summaries (failures in full)
and how many cores each phase kept busy, and fails when a lane failed or did not run
every test of the files it claimed.

``TRIPLEO_FLOW_TEST_SECOND_LANE=0`` keeps every test in the session; ``=now`` starts a
lane at once (and counts the deployments as made) (to try the lanes themselves);
``TRIPLEO_FLOW_TEST_SECOND_LANE_JUNIT=FILE`` keeps each lane's JUnit report as
``FILE.laneN``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import overcloud_background

ROOT = Path(__file__).resolve().parents[1]
#: The tests the lane starts with: pure Python (the session runs them last).
UNIT = ("tests/unit/",)
#: How often the watcher looks whether the background deployments are made.
#: How often the machine's CPU use is sampled and lanes are considered.
CPU_SAMPLE_SECONDS = 5.0
#: A further lane starts when this much of a core idled over the last IDLE_WINDOW s.
IDLE_CORES = 0.6
IDLE_WINDOW = 90.0
#: No lane starts for fewer test files left unclaimed (collecting costs ~20 s a lane).
MIN_FILES_LEFT = 4

_lane: dict[str, Any] = {}
#: Set in the lane's environment: the plan (``plan.json``) and the claims beside it.
_PLAN = "TRIPLEO_FLOW_TEST_SECOND_LANE_PLAN"
#: Set in a lane's environment: its name (``lane1``, ``lane2``: the owner of its claims).
_WHO = "TRIPLEO_FLOW_TEST_SECOND_LANE_WHO"
_lock = threading.Lock()


def _mode() -> str:
    return os.environ.get("TRIPLEO_FLOW_TEST_SECOND_LANE", "auto")


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _pinned(item: pytest.Item) -> bool:
    """Whether ``item`` must run in the session (it reads the session's background work)."""
    return (item.nodeid.startswith(overcloud_background.OVERCLOUD_TESTS)
            or "heat_image" in getattr(item, "fixturenames", ()))


def claim(base: Path, path: str, who: str) -> bool:
    """Claim test file ``path`` for ``who``; False when the other lane has it."""
    claims = base / "claims"
    claims.mkdir(exist_ok=True)
    try:
        fd = os.open(claims / path.replace("/", "%"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as out:
        out.write(who)
    return True


def claimed_by(base: Path, who: str) -> list[str]:
    claims = base / "claims"
    if not claims.is_dir():
        return []
    return sorted(p.name.replace("%", "/") for p in claims.iterdir()
                  if p.read_text() == who)


@pytest.hookimpl(trylast=True)  # after overcloud_background and heat_images have ordered
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    plan_file = os.environ.get(_PLAN)
    if plan_file:  # this is the lane: the plan's tests, in the lane's order
        plan = json.loads(Path(plan_file).read_text())
        wanted = {nodeid for ids in plan["ids"].values() for nodeid in ids}
        rank = {path: n for n, path in enumerate(plan["lane_order"])}
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid not in wanted])
        kept = [i for i in items if i.nodeid in wanted]
        items[:] = sorted(kept, key=lambda i: rank[_file(i)])  # stable within a file
        _lane.update(base=Path(plan_file).parent, who=os.environ.get(_WHO, "lane1"))
        return
    mode = _mode()
    if mode == "0" or config.option.collectonly or "plan" in _lane:
        return
    if mode != "now" and not overcloud_background.root_of_any():
        return
    shared = [i for i in items if not _pinned(i)]
    if not shared:
        return
    ids: dict[str, list[str]] = {}
    for item in shared:
        ids.setdefault(_file(item), []).append(item.nodeid)
    unit = [f for f in ids if f.startswith(UNIT)]
    functional = [f for f in ids if not f.startswith(UNIT)]
    rank = {path: n for n, path in enumerate(functional + unit)}
    pinned = [i for i in items if _pinned(i)]
    items[:] = sorted(shared, key=lambda i: rank[_file(i)]) + pinned
    base = Path(tempfile.mkdtemp(prefix="tripleo-flow-second-lane-"))
    # Node ids as data (a parametrized id can hold any escaped text, which pytest's
    # command line would parse), and the files that hold them as arguments.
    (base / "plan.json").write_text(json.dumps(
        {"lane_order": unit + functional[::-1], "ids": ids}))
    _lane.update(base=base, who="session", plan=ids, asked=time.time(), cpu=[], lanes=[])
    threading.Thread(target=_watch, name="test-lanes", daemon=True,
                     args=(mode == "now",)).start()


class Schedule:
    """Which group of tests a process runs next.

    ``groups`` are the process's tests in its order, as (test file, tests, pinned): a
    shared group runs once this process claims its file (``claim``); a pinned group
    (session only) needs no claim and runs **as soon as** ``ready`` says what it reads
    is made, ahead of the shared files left, so that it does not become a tail the
    session runs alone; without a shared file left it runs anyway (its fixtures wait).
    """

    def __init__(self, groups: list[tuple[str, list[Any], bool]],
                 claim: Callable[[str], bool], ready: Callable[[list[Any]], bool]) -> None:
        self._shared = [(path, tests) for path, tests, pinned in groups if not pinned]
        self._pinned = [(path, tests) for path, tests, pinned in groups if pinned]
        self._claim, self._ready = claim, ready

    def next(self) -> list[Any] | None:
        if self._pinned and self._ready(self._pinned[0][1]):
            return self._pinned.pop(0)[1]
        while self._shared:
            path, tests = self._shared.pop(0)
            if self._claim(path):
                return tests
        return self._pinned.pop(0)[1] if self._pinned else None


def _ready(tests: list[pytest.Item]) -> bool:
    """Whether the pinned ``tests`` may start: every background deployment is made (the
    later ones are made from copies of the earlier, so none is read while copied; and
    the Heat-image tests, pod and container Heats of their own, would slow the
    deployments the lanes wait for: a run that let them start early made its
    deployments 6 min later), and the Heat images' build has its status file."""
    if not overcloud_background.all_finished():
        return False
    status = os.environ.get("TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS")
    return not (status and any("heat_image" in getattr(t, "fixturenames", ()) for t in tests)
                and not Path(status).exists())


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """Run the tests of the files this process claims (and the session's pinned tests as
    soon as they can run), a file at a time; the next file is chosen before the last
    test of the current one runs, so its teardown knows which test comes next."""
    if "who" not in _lane or session.config.option.collectonly:
        return None
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} errors during collection")
    base, who = Path(_lane["base"]), _lane["who"]
    groups: list[tuple[str, list[Any], bool]] = []  # (test file, its tests, pinned)
    for item in session.items:
        pinned = who == "session" and _pinned(item)
        if groups and groups[-1][0] == _file(item) and groups[-1][2] == pinned:
            groups[-1][1].append(item)
        else:
            groups.append((_file(item), [item], pinned))
    schedule = Schedule(groups, lambda path: claim(base, path, who), _ready)
    tests = schedule.next()
    while tests is not None:
        following: list[pytest.Item] | None = None
        for n, item in enumerate(tests):
            if n + 1 < len(tests):
                nextitem: pytest.Item | None = tests[n + 1]
            else:
                following = schedule.next()
                nextitem = None if following is None else following[0]
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
        tests = following
    return True


def _cpu_times() -> tuple[float, float]:
    """(busy, all) CPU seconds of the machine so far, summed over its cores."""
    with open("/proc/stat") as stat:
        fields = [float(v) for v in stat.readline().split()[1:8]]
    ticks = os.sysconf("SC_CLK_TCK")
    free = fields[3] + fields[4]  # idle, iowait
    return (sum(fields) - free) / ticks, sum(fields) / ticks


def busy_cores(samples: list[tuple[float, float, float]], start: float,
               end: float) -> float | None:
    """The mean number of busy cores between ``start`` and ``end`` from samples of
    (time, busy CPU seconds, all CPU seconds); None with fewer than two samples there."""
    inside = [s for s in samples if start <= s[0] <= end]
    if len(inside) < 2 or inside[-1][2] == inside[0][2]:
        return None
    cores = os.cpu_count() or 1
    return cores * (inside[-1][1] - inside[0][1]) / (inside[-1][2] - inside[0][2])


def wants_a_lane(samples: list[tuple[float, float, float]], now: float, lanes: int,
                 last_start: float | None, background_done: bool, files_left: int) -> bool:
    """Whether to start one more lane: none while the background deployments are made
    (they are the run's longest chain: a lane beside them slowed them threefold in a
    trial), the first once they are, any other once a core idles: fewer than ``cores -
    IDLE_CORES`` busy over the last ``IDLE_WINDOW`` s, the last lane started at least
    that long ago (it has found its pace); never more than ``max_lanes()``, nor for the
    last few files (a lane's collection costs more than they do)."""
    if not background_done or lanes >= max_lanes() or files_left < MIN_FILES_LEFT:
        return False
    if lanes == 0:
        return True
    if last_start is not None and now - last_start < IDLE_WINDOW:
        return False
    cores = busy_cores(samples, now - IDLE_WINDOW, now)
    return (cores is not None and samples[0][0] <= now - IDLE_WINDOW + CPU_SAMPLE_SECONDS
            and cores < (os.cpu_count() or 1) - IDLE_CORES)


def max_lanes() -> int:
    """How many lanes may run beside the session (``TRIPLEO_FLOW_TEST_LANES``, default
    1: a run here kept 1.8-2.0 of 2 cores busy from start to end, and a second lane
    only added its own collection and service fixtures)."""
    return int(os.environ.get("TRIPLEO_FLOW_TEST_LANES", "1"))


def _watch(now: bool) -> None:
    """Sample the machine's CPU use, start lanes as :func:`wants_a_lane` says, note when
    each ends (the summary's busy cores per phase)."""
    samples: list[tuple[float, float, float]] = _lane["cpu"]
    lanes: list[dict[str, Any]] = _lane["lanes"]
    if now:
        _start()
    while not _lane.get("closed") or any("ended" not in lane for lane in lanes):
        with contextlib.suppress(OSError):
            samples.append((time.time(), *_cpu_times()))
        for lane in lanes:
            if "ended" not in lane and lane["process"].poll() is not None:
                lane["ended"] = time.time()
        if not _lane.get("closed") and wants_a_lane(
                samples, time.time(), len(lanes), lanes[-1]["started"] if lanes else None,
                now or overcloud_background.all_finished(), _files_left()):
            _start()
        time.sleep(CPU_SAMPLE_SECONDS)


def _files_left() -> int:
    claims = Path(_lane["base"]) / "claims"
    return len(_lane["plan"]) - (len(os.listdir(claims)) if claims.is_dir() else 0)


def _start() -> None:
    with _lock:
        if _lane.get("closed"):
            return
        base: Path = _lane["base"]
        lanes: list[dict[str, Any]] = _lane["lanes"]
        who = f"lane{len(lanes) + 1}"
        log = open(base / f"{who}.log", "wb")  # noqa: SIM115 (kept open for the child)
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--durations=20",
             f"--junitxml={base / who}.xml", *sorted(_lane["plan"])],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "TRIPLEO_FLOW_TEST_SECOND_LANE": "0",
                 _PLAN: str(base / "plan.json"), _WHO: who},
            start_new_session=True)
        log.close()
        lanes.append({"who": who, "process": process, "started": time.time()})


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if "plan" not in _lane:
        return
    with _lock:
        _lane["closed"] = True  # every file is claimed: a lane started now has nothing to do
    lanes: list[dict[str, Any]] = _lane["lanes"]
    stopped = (exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldfail)
               or bool(session.shouldstop))
    for lane in lanes:
        if stopped:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(lane["process"].pid, signal.SIGTERM)
        lane["process"].wait()
        lane.setdefault("ended", time.time())
    _lane["finished"] = time.time()
    failures = [] if stopped else [f for f in map(_failure, lanes) if f]
    _lane["failure"] = "; ".join(failures)
    if failures and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _failure(lane: dict[str, Any]) -> str:
    """Why ``lane`` failed ("" when it ran every test of the files it claimed, each
    passing or skipped as its marks say)."""
    base, who, process = Path(_lane["base"]), lane["who"], lane["process"]
    taken = claimed_by(base, who)
    expected = sum(len(_lane["plan"][path]) for path in taken)
    lane.update(files=len(taken), ids=expected)
    report = base / f"{who}.xml"
    if not report.exists():
        return f"{who} wrote no report (exit {process.returncode})"
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    assert suite is not None
    ran = int(suite.get("tests", "0"))
    lane["took"] = float(suite.get("time", "0"))
    if ran != expected:
        return f"{who} ran {ran} tests of the {expected} in the {len(taken)} files it claimed"
    failed = int(suite.get("failures", "0")) + int(suite.get("errors", "0"))
    if failed:  # its report says so, whatever its exit status (one read 0 with failures)
        return f"{who} failed: {failed} tests failed or erred (exit {process.returncode})"
    if process.returncode not in (0, pytest.ExitCode.NO_TESTS_COLLECTED) or (
            process.returncode == pytest.ExitCode.NO_TESTS_COLLECTED and expected):
        return f"{who} failed (exit {process.returncode})"
    return ""


def _cpu_line() -> str:
    """How many of the machine's cores each phase kept busy (idle ones are time a further
    lane could have used)."""
    samples, finished = _lane["cpu"], _lane["finished"]
    marks = sorted([(_lane["asked"], "start")]
                   + [(lane["started"], f"{lane['who']} starts") for lane in _lane["lanes"]]
                   + [(lane["ended"], f"{lane['who']} ends") for lane in _lane["lanes"]])
    parts = []
    for (start, name), (end, _) in zip(marks, [*marks[1:], (finished, "end")], strict=True):
        cores = busy_cores(samples, start, end)
        if cores is not None:
            parts.append(f"from {name} {cores:.2f} ({end - start:.0f} s)")
    return (f"busy cores of {os.cpu_count()}: " + ", ".join(parts)) if parts else \
        "busy cores: not sampled"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if "plan" not in _lane or "failure" not in _lane:
        return
    base: Path = _lane.pop("base")
    write = terminalreporter.write_line
    lanes: list[dict[str, Any]] = _lane["lanes"]
    terminalreporter.write_sep(
        "=", f"lanes beside the session: {len(lanes)}, "
             f"{sum(lane.get('ids', 0) for lane in lanes)} tests of "
             f"{sum(lane.get('files', 0) for lane in lanes)} files")
    for lane in lanes:
        write(f"{lane['who']}: started {lane['started'] - _lane['asked']:.0f} s after "
              f"collection, {lane.get('ids', 0)} tests of {lane.get('files', 0)} files took "
              f"{lane.get('took', 0):.0f} s")
    if not lanes:
        write("none started: the session ran every file")
    write(_cpu_line())
    if _lane["failure"]:
        write(_lane["failure"])
    for lane in lanes:
        log = base / f"{lane['who']}.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        # its sections (failures in full), but its warnings: the progress dots before them
        shown = False
        for line in text.splitlines():
            if re.fullmatch(r"=+ .* =+", line):
                shown = "warnings summary" not in line
            elif line and not line.startswith((" ", "=")) and line.split()[0][0].isdigit():
                shown = True  # the closing count line ("2211 passed in ...")
            if shown:
                write(f"{lane['who']}| {line}")
    keep = os.environ.get("TRIPLEO_FLOW_TEST_SECOND_LANE_JUNIT")  # for timing a run
    if keep:
        for lane in lanes:
            if (base / f"{lane['who']}.xml").exists():
                shutil.copyfile(base / f"{lane['who']}.xml", f"{keep}.{lane['who']}")
    shutil.rmtree(base, ignore_errors=True)
