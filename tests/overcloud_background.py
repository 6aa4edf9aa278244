"""The real overcloud deployments, made by a process of their own while the other tests run.

A stack create of the upstream tripleo-heat-templates keeps one core busy with Heat for
five to nine minutes, and the three such deployments the overcloud tests read (see
``tests/functional/overcloud/conftest.py``) took a third of a CI run one after another.
Once the tests are collected, this plugin starts ``python -m
tests.functional.overcloud.background`` for the deployments the selected tests need, moves
the overcloud tests to the end of the run, and the session fixtures wait for the
deployment they need (its ``deployed.json``), or fail with the background's own error.

Set ``TRIPLEO_FLOW_TEST_OVERCLOUD_BACKGROUND=0`` to deploy inline (in the fixtures), as
``TRIPLEO_FLOW_TEST_OVERCLOUD_DIR`` (a kept deployment for local iteration) also does.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
OVERCLOUD_TESTS = "tests/functional/overcloud/"
#: fixture -> the background's name for its deployment, in the order they are made
#: (the redeploy copies the first; the scale-down, a delete and a redeploy, copies the
#: redeploy: last).
DEPLOYMENTS = {"tht18_deployment": "overcloud18", "tht12_deployment": "overcloud12",
               "tht18_redeployment": "overcloud18-redeploy",
               "tht18_scale_down": "overcloud18-scaledown"}
ORDER = ("overcloud18", "overcloud12", "overcloud18-redeploy", "overcloud18-scaledown")
#: deployment -> the deployments it is made from.
MADE_FROM = {"overcloud18-redeploy": ("overcloud18",),
             "overcloud18-scaledown": ("overcloud18-redeploy", "overcloud18")}
#: How long a fixture waits for its deployment (they take 5-10 min each here).
WAIT_SECONDS = 3600.0

_state: dict[str, Any] = {}


def _needed(item: pytest.Item) -> set[str]:
    """The deployments ``item`` reads: fixtures it names or takes as a parameter."""
    names = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        names.update(str(v) for v in callspec.params.values() if isinstance(v, str))
    found = {DEPLOYMENTS[n] for n in names if n in DEPLOYMENTS}
    return found.union(*(MADE_FROM.get(n, ()) for n in found))


def _enabled() -> bool:
    return (os.environ.get("TRIPLEO_FLOW_TEST_OVERCLOUD_BACKGROUND", "1") != "0"
            and not os.environ.get("TRIPLEO_FLOW_TEST_OVERCLOUD_DIR"))


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    overcloud = [i for i in items if i.nodeid.startswith(OVERCLOUD_TESTS)]
    if not overcloud:
        return
    needed: set[str] = set()
    for item in overcloud:
        needed |= _needed(item)

    def ready_at(item: pytest.Item) -> int:  # the tests whose deployment is made first run first
        return max((ORDER.index(n) for n in _needed(item)), default=-1)

    others = [i for i in items if not i.nodeid.startswith(OVERCLOUD_TESTS)]
    items[:] = others + sorted(overcloud, key=ready_at)
    if needed and _enabled() and not config.option.collectonly and "process" not in _state:
        _start([n for n in ORDER if n in needed])


def _start(names: list[str]) -> None:
    base = Path(tempfile.mkdtemp(prefix="tripleo-flow-overclouds-"))
    log = open(base / "background.log", "wb")  # noqa: SIM115 (kept open for the child)
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.functional.overcloud.background", str(base), *names],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True)
    log.close()
    _state.update(process=process, base=base, names=names, started=time.time(), waits={})


def root_of(name: str) -> Path | None:
    """Where the background makes deployment ``name``; None when it does not."""
    if name not in _state.get("names", ()):
        return None
    return Path(_state["base"]) / name


def root_of_any() -> bool:
    """Whether the background process was started (for the session being run)."""
    return bool(_state.get("names"))


def all_finished() -> bool:
    """Whether the background has made (or failed) every deployment it was given, or
    stopped."""
    process: subprocess.Popen[bytes] | None = _state.get("process")
    base = _state.get("base")
    if process is None or base is None or process.poll() is not None:
        return True
    return all((Path(base) / name / "deployed.json").exists()
               or (Path(base) / name / "failed.txt").exists() for name in _state["names"])


def wait_for(name: str) -> dict[str, Any]:
    """The result of deployment ``name`` once the background has made it (its
    ``deployed.json``); FAILS the test with the background's error otherwise."""
    root = root_of(name)
    assert root is not None, name
    process: subprocess.Popen[bytes] = _state["process"]
    deadline = time.monotonic() + WAIT_SECONDS
    asked = time.time()
    while True:
        if (root / "deployed.json").exists():
            _state["waits"].setdefault(name, (asked - _state["started"], time.time() - asked))
            return dict(json.loads((root / "deployed.json").read_text())["result"])
        failed = root / "failed.txt"
        if failed.exists():
            pytest.fail(f"The background deployment {name} failed:\n{failed.read_text()}",
                        pytrace=False)
        if process.poll() is not None:
            pytest.fail(f"The background deployments stopped (exit {process.returncode}) "
                        f"before {name} was made:\n{_log_tail()}", pytrace=False)
        if time.monotonic() > deadline:
            pytest.fail(f"The background deployment {name} was not made in "
                        f"{WAIT_SECONDS:.0f} s:\n{_log_tail()}", pytrace=False)
        time.sleep(2.0)


def _log_tail() -> str:
    log = Path(_state["base"]) / "background.log"
    return log.read_text(errors="replace")[-4000:] if log.exists() else "(no log)"


def _timeline() -> list[str]:
    """When each background deployment was ready and how long the tests waited for it,
    in seconds from the background's start: the line that says whether the tests or the
    deployments are a run's critical path."""
    lines = []
    for name in _state["names"]:
        done = Path(_state["base"]) / name / "deployed.json"
        ready = (f"ready at {done.stat().st_mtime - _state['started']:.0f} s"
                 if done.exists() else "not made")
        asked = _state["waits"].get(name)
        waited = ("" if asked is None else
                  f", first asked for at {asked[0]:.0f} s, waited {asked[1]:.0f} s")
        lines.append(f"{name}: {ready}{waited}")
    return lines


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = _state.pop("timeline", None)
    if lines:
        terminalreporter.write_sep("=", "background overcloud deployments")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    process: subprocess.Popen[bytes] | None = _state.pop("process", None)
    if process is None:
        return
    _state["timeline"] = _timeline()
    if process.poll() is None:  # an interrupted or partial run: stop it and its Heat
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    shutil.rmtree(_state.pop("base"), ignore_errors=True)
