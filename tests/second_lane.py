"""A second lane: the unit tests run in a pytest of their own on the core the background
overcloud deployments leave free once they are made.

The test command runs on two cores: one for the tests, one for the background process
that makes the real overcloud deployments (``tests/overcloud_background.py``). That
process ends well before the tests do (CI: all made at ~51 min, the tests ended at ~71
min), and a core stayed idle for the rest of the run. When the background deployments are
started, this plugin takes the tests under :data:`PREFIXES` out of the session, writes
their node ids to a file, and once every deployment is made (or failed) starts ``python
-m pytest`` on their files, keeping exactly those ids, with its own JUnit report and log.
The session waits for it at its end, prints its summary (its failures in full), and fails
when it failed or did not run every test it was given.

``TRIPLEO_FLOW_TEST_SECOND_LANE=0`` keeps every test in the session; ``=now`` starts the
lane at once even without background deployments (to try the lane itself).
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
#: The tests the lane takes: pure Python, no shared service, no port of the session's.
PREFIXES = ("tests/unit/",)
#: How often the watcher looks whether the background deployments are made.
POLL_SECONDS = 2.0

_lane: dict[str, Any] = {}
#: Set in the lane's environment: the file of the node ids it runs.
_IDS = "TRIPLEO_FLOW_TEST_SECOND_LANE_IDS"
_lock = threading.Lock()


def _mode() -> str:
    return os.environ.get("TRIPLEO_FLOW_TEST_SECOND_LANE", "auto")


@pytest.hookimpl(trylast=True)  # after overcloud_background has started its process
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    chosen = os.environ.get(_IDS)
    if chosen:  # this is the lane: exactly the tests it was given
        wanted = set(json.loads(Path(chosen).read_text()))
        kept = [i for i in items if i.nodeid in wanted]
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid not in wanted])
        items[:] = kept
        return
    mode = _mode()
    if mode == "0" or config.option.collectonly or "ids" in _lane:
        return
    if mode != "now" and not overcloud_background.root_of_any():
        return
    taken = [i for i in items if i.nodeid.startswith(PREFIXES)]
    if not taken or len(taken) == len(items):
        return  # nothing to take, or nothing left to share the machine with
    base = Path(tempfile.mkdtemp(prefix="tripleo-flow-second-lane-"))
    # Node ids as data (a parametrized id can hold any escaped text, which pytest's
    # command line would parse), and the files that hold them as arguments.
    (base / "ids.json").write_text(json.dumps([i.nodeid for i in taken]))
    _lane["files"] = sorted({i.nodeid.split("::", 1)[0] for i in taken})
    kept = set(map(id, taken))
    items[:] = [i for i in items if id(i) not in kept]
    _lane.update(base=base, ids=len(taken), asked=time.time())
    threading.Thread(target=_start_when_free, name="second-lane", daemon=True,
                     args=(mode == "now",)).start()


def _start_when_free(now: bool) -> None:
    """Start the lane once the background deployments are all made or failed."""
    while not now and not overcloud_background.all_finished():
        time.sleep(POLL_SECONDS)
    _start()


def _start() -> None:
    with _lock:
        if "process" in _lane:
            return
        base: Path = _lane["base"]
        log = open(base / "lane.log", "wb")  # noqa: SIM115 (kept open for the child)
        _lane["process"] = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--durations=10",
             f"--junitxml={base / 'junit.xml'}", *_lane["files"]],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "TRIPLEO_FLOW_TEST_SECOND_LANE": "0",
                 _IDS: str(base / "ids.json")},
            start_new_session=True)
        _lane["started"] = time.time()
        log.close()



def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if "base" not in _lane:
        return
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
    if not interrupted:
        _start()  # a session that did not wait for the deployments: now
    process: subprocess.Popen[bytes] | None = _lane.get("process")
    if process is not None and interrupted:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    if process is not None:
        process.wait()
    _lane["failure"] = _failure(process)
    if _lane["failure"] and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _failure(process: subprocess.Popen[bytes] | None) -> str:
    """Why the lane failed ("" when it ran every test it was given, each passing or
    skipped as its marks say)."""
    if process is None:
        return "the second lane never started"
    report = Path(_lane["base"]) / "junit.xml"
    if not report.exists():
        return f"the second lane wrote no report (exit {process.returncode})"
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    assert suite is not None
    ran = int(suite.get("tests", "0"))
    _lane["took"] = float(suite.get("time", "0"))
    if ran != _lane["ids"]:
        return f"the second lane ran {ran} tests of the {_lane['ids']} it was given"
    if process.returncode != 0:
        return f"the second lane failed (exit {process.returncode})"
    return ""


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if "base" not in _lane:
        return
    base: Path = _lane.pop("base")
    write = terminalreporter.write_line
    terminalreporter.write_sep("=", f"second lane: {', '.join(PREFIXES)} ({_lane['ids']} tests)")
    if "started" in _lane:
        write(f"started {_lane['started'] - _lane['asked']:.0f} s after collection, its "
              f"tests took {_lane.get('took', 0):.0f} s")
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
    shutil.rmtree(base, ignore_errors=True)
