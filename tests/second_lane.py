"""A second lane: a second pytest that shares the session's test files once the machine has
a core to spare.

The test command runs on two cores: one for the tests, one for the background process
that makes the real overcloud deployments (``tests/overcloud_background.py``). That
process ends well before the tests do (a run here: all made at 31 min, the tests ended at
78 min), and a core stayed idle for the rest of the run. When the background deployments
are started, this plugin writes the session's test files to a plan, and once every
deployment is made (or failed) starts ``python -m pytest`` on them with its own JUnit
report and log. From then on the two share the files: each **claims a file before running
its tests** (an exclusively created file per test file in a shared directory), the session
from the front of its order (the functional tests first, the unit tests last), the lane
from the other end (the unit tests first, then the functional tests from the back), so
they meet wherever the work is balanced, whatever each test costs on the machine at hand.
The overcloud tests and the tests that wait for the Heat images stay in the session: they
read what the session's background processes make.

The session waits for the lane at its end, prints its summary (its failures in full), and
fails when the lane failed or did not run every test of the files it claimed.

``TRIPLEO_FLOW_TEST_SECOND_LANE=0`` keeps every test in the session; ``=now`` starts the
lane at once even without background deployments (to try the lane itself);
``TRIPLEO_FLOW_TEST_SECOND_LANE_JUNIT=FILE`` keeps the lane's JUnit report there.
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
from pathlib import Path
from typing import Any

import pytest

from tests import overcloud_background

ROOT = Path(__file__).resolve().parents[1]
#: The tests the lane starts with: pure Python (the session runs them last).
UNIT = ("tests/unit/",)
#: How often the watcher looks whether the background deployments are made.
POLL_SECONDS = 2.0

_lane: dict[str, Any] = {}
#: Set in the lane's environment: the plan (``plan.json``) and the claims beside it.
_PLAN = "TRIPLEO_FLOW_TEST_SECOND_LANE_PLAN"
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
        _lane.update(base=Path(plan_file).parent, who="lane")
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
    _lane.update(base=base, who="session", plan=ids, asked=time.time())
    threading.Thread(target=_start_when_free, name="second-lane", daemon=True,
                     args=(mode == "now",)).start()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """Run the tests of the files this process claims, a file at a time; the next file
    is claimed before the last test of the current one runs, so its teardown knows
    which test comes next."""
    if "who" not in _lane or session.config.option.collectonly:
        return None
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} errors during collection")
    base, who = Path(_lane["base"]), _lane["who"]
    groups: list[tuple[str | None, list[pytest.Item]]] = []  # (file to claim, its tests)
    for item in session.items:
        key = None if who == "session" and _pinned(item) else _file(item)
        if groups and groups[-1][0] == key:
            groups[-1][1].append(item)
        else:
            groups.append((key, [item]))

    def mine_from(start: int) -> int | None:
        for n in range(start, len(groups)):
            key = groups[n][0]
            if key is None or claim(base, key, who):
                return n
        return None

    current = mine_from(0)
    while current is not None:
        tests = groups[current][1]
        following: int | None = None
        for n, item in enumerate(tests):
            if n + 1 < len(tests):
                nextitem: pytest.Item | None = tests[n + 1]
            else:
                following = mine_from(current + 1)
                nextitem = None if following is None else groups[following][1][0]
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
        current = following
    return True


def _start_when_free(now: bool) -> None:
    """Start the lane once the background deployments are all made or failed."""
    while not now and not overcloud_background.all_finished():
        time.sleep(POLL_SECONDS)
    _start()


def _start() -> None:
    with _lock:
        if "process" in _lane or _lane.get("closed"):
            return
        base: Path = _lane["base"]
        log = open(base / "lane.log", "wb")  # noqa: SIM115 (kept open for the child)
        files = sorted(_lane["plan"])
        _lane["process"] = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--durations=20",
             f"--junitxml={base / 'junit.xml'}", *files],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "TRIPLEO_FLOW_TEST_SECOND_LANE": "0",
                 _PLAN: str(base / "plan.json")},
            start_new_session=True)
        _lane["started"] = time.time()
        log.close()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if "plan" not in _lane:
        return
    with _lock:
        _lane["closed"] = True  # every file is claimed: a lane started now has nothing to do
    process: subprocess.Popen[bytes] | None = _lane.get("process")
    stopped = (exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldfail)
               or bool(session.shouldstop))
    if process is not None and stopped:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    if process is not None:
        process.wait()
    _lane["failure"] = "" if stopped else _failure(process)
    if _lane["failure"] and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _failure(process: subprocess.Popen[bytes] | None) -> str:
    """Why the lane failed ("" when it ran every test of the files it claimed, each
    passing or skipped as its marks say, or never started because the session had run
    every file)."""
    base = Path(_lane["base"])
    taken = claimed_by(base, "lane")
    _lane["files"] = len(taken)
    expected = sum(len(_lane["plan"][path]) for path in taken)
    _lane["ids"] = expected
    if process is None:
        return ""  # the session claimed every file before there was a core to spare
    report = base / "junit.xml"
    if not report.exists():
        return f"the second lane wrote no report (exit {process.returncode})"
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    assert suite is not None
    ran = int(suite.get("tests", "0"))
    _lane["took"] = float(suite.get("time", "0"))
    if ran != expected:
        return (f"the second lane ran {ran} tests of the {expected} in the "
                f"{len(taken)} files it claimed")
    if process.returncode not in (0, pytest.ExitCode.NO_TESTS_COLLECTED) or (
            process.returncode == pytest.ExitCode.NO_TESTS_COLLECTED and expected):
        return f"the second lane failed (exit {process.returncode})"
    return ""


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if "plan" not in _lane or "failure" not in _lane:
        return
    base: Path = _lane.pop("base")
    write = terminalreporter.write_line
    terminalreporter.write_sep(
        "=", f"second lane: {_lane.get('ids', 0)} tests of {_lane.get('files', 0)} files")
    if "started" in _lane:
        write(f"started {_lane['started'] - _lane['asked']:.0f} s after collection, its "
              f"tests took {_lane.get('took', 0):.0f} s")
    else:
        write("not started: the session ran every file")
    text = (base / "lane.log").read_text(errors="replace") if (base / "lane.log").exists() else ""
    if _lane["failure"]:
        write(_lane["failure"])
    # its sections (failures in full), but its warnings: the progress dots before them
    shown = False
    for line in text.splitlines():
        if re.fullmatch(r"=+ .* =+", line):
            shown = "warnings summary" not in line
        elif line and not line.startswith((" ", "=")) and line.split()[0][0].isdigit():
            shown = True  # the closing count line ("2211 passed in ...")
        if shown:
            write(line)
    keep = os.environ.get("TRIPLEO_FLOW_TEST_SECOND_LANE_JUNIT")  # for timing a run
    if keep and (base / "junit.xml").exists():
        shutil.copyfile(base / "junit.xml", keep)
    shutil.rmtree(base, ignore_errors=True)
