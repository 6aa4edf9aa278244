"""Workflows run as jobs on TaskFlow jobboards by conductor processes.

Real redis-server and ZooKeeper (private children), executions on the private
MariaDB; the conductors are separate processes (``tests.engine_helpers
conductor``: the conductor of :mod:`tripleo_flow.engine.jobs.conductor` with the test
actions).  Fails, not skips, when a service is missing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host, configured, until
from tests.fixtures_services import new_database
from tests.functional.mariadb import PrivateMariaDB
from tripleo_flow import exceptions

ROOT = Path(__file__).resolve().parents[2]
EFFECTS = ["do first", "do second", "do third"]


@pytest.fixture(scope="module")
def executions_db(mariadb_server: PrivateMariaDB) -> str:
    name, where = new_database(mariadb_server, "jobs")
    return f"mysql+pymysql://{where}/{name}"


@pytest.fixture(params=["redis", "zookeeper"])
def settings(request: pytest.FixtureRequest, executions_db: str) -> dict[str, Any]:
    """Overrides for one test: its own board namespace, the shared MariaDB."""
    url = request.getfixturevalue(f"{request.param}_url")
    return {"jobboard.backend_url": url, "jobboard.namespace": f"t{uuid.uuid4().hex[:10]}",
            "jobboard.claim_expiry": 6.0, "jobboard.heartbeat_interval": 2.0,
            "jobboard.poll_interval": 0.2, "workflows.connection": executions_db}


class Conductors:
    """Conductor processes of one test."""

    def __init__(self, data_dir: Path, settings: dict[str, Any]) -> None:
        self.data_dir, self.settings = data_dir, settings
        self.procs: dict[str, subprocess.Popen[str]] = {}

    def start(self, name: str, concurrency: int = 4) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.engine_helpers", "conductor", str(self.data_dir),
             json.dumps(self.settings), name, str(concurrency)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None and proc.stdout.readline() == "conductor started\n"
        self.procs[name] = proc
        return proc

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


@pytest.fixture
def host(tmp_path: Path, settings: dict[str, Any]) -> Iterator[Any]:
    data_dir = tmp_path / "data"
    Host(data_dir).install("jobs_demo")
    client = configured(data_dir, settings)
    yield client
    client._session.close_workflows()


@pytest.fixture
def conductors(host: Any, settings: dict[str, Any]) -> Iterator[Conductors]:
    group = Conductors(host.data_dir, settings)
    yield group
    group.stop_all()


def _ran_by(host: Any, execution_id: str) -> int:
    return int(host._session.runner().store.flow_detail(execution_id, lazy=True).meta["pid"])


def _one_running(host: Any, conductors: Conductors, name: str, log: Path,
                 pause: float) -> tuple[subprocess.Popen[str], Any]:
    """Conductor ``name`` running ``steps``, its first task done (in its pause)."""
    proc = conductors.start(name)
    execution = host.executions.create("jobs_demo.steps", {"log": str(log), "pause": pause},
                                       wait=False)
    deadline = time.monotonic() + 60
    while not (log.exists() and log.read_text()):
        assert time.monotonic() < deadline, "no conductor ran the job"
        time.sleep(0.05)
    return proc, execution


def test_two_conductors_run_twenty_workflows(host: Any, conductors: Conductors,
                                             tmp_path: Path) -> None:
    first, second = conductors.start("c1"), conductors.start("c2")
    started = [host.executions.create("jobs_demo.steps",
                                      {"log": str(tmp_path / f"log{i}"), "pause": 0.5}, wait=False)
               for i in range(20)]
    assert {e.state for e in started} == {"PENDING"}  # posted, not run here
    done = [host.executions.follow(e.id, timeout=120) for e in started]
    assert [e.state for e in done] == ["SUCCESS"] * 20
    assert [e.output for e in done] == [{"last": "third"}] * 20
    for i in range(20):
        assert (tmp_path / f"log{i}").read_text().splitlines() == EFFECTS
    assert {_ran_by(host, e.id) for e in done} == {first.pid, second.pid}


def test_kill_9_of_a_conductor_mid_workflow_the_other_finishes_it(
        host: Any, conductors: Conductors, tmp_path: Path) -> None:
    log = tmp_path / "log"
    doomed, execution = _one_running(host, conductors, "doomed", log, pause=4)
    os.kill(doomed.pid, signal.SIGKILL)  # in the middle of the 'wait' task
    doomed.wait(10)
    killed_at = time.monotonic()
    assert host.executions.get(execution.id).state == "INTERRUPTED"
    survivor = conductors.start("survivor")
    done = host.executions.follow(execution.id, timeout=120)
    took = time.monotonic() - killed_at
    assert done.state == "SUCCESS"
    assert log.read_text().splitlines() == EFFECTS  # each side effect exactly once
    assert _ran_by(host, execution.id) == survivor.pid
    tasks = {t.name: t.state for t in host.tasks.list(execution.id)}
    assert tasks == {"first": "SUCCESS", "wait": "SUCCESS", "second": "SUCCESS",
                     "third": "SUCCESS"}
    # Redis: claim expiry (6 s) + the pause run again (4 s); ZooKeeper: session timeout.
    print(f"killed conductor's job finished by the other {took:.1f} s after the kill")
    assert took < 40, took


def test_sigterm_suspends_and_another_conductor_continues(
        host: Any, conductors: Conductors, tmp_path: Path) -> None:
    log = tmp_path / "log"
    leaving, execution = _one_running(host, conductors, "leaving", log, pause=2)
    leaving.terminate()
    assert leaving.wait(30) == 0  # the running task ended, the job went back to the board
    assert host.executions.get(execution.id).state == "SUSPENDED"
    conductors.start("next")
    done = host.executions.follow(execution.id, timeout=60)
    assert done.state == "SUCCESS"
    assert log.read_text().splitlines() == EFFECTS


def test_a_loop_suspended_by_sigterm_is_finished_by_another_conductor(
        host: Any, conductors: Conductors, tmp_path: Path) -> None:
    """A direct workflow that loops runs on the state machine (issue 26), through the
    jobboard too: suspended mid-loop, another conductor goes on from its last
    completed task execution."""
    log = tmp_path / "log"
    leaving = conductors.start("leaving")
    execution = host.executions.create("jobs_demo.loop", {"log": str(log), "pause": 2},
                                       wait=False)
    deadline = time.monotonic() + 60
    while not (log.exists() and log.read_text()):
        assert time.monotonic() < deadline, "no conductor ran the job"
        time.sleep(0.05)
    leaving.terminate()
    assert leaving.wait(30) == 0
    assert host.executions.get(execution.id).state == "SUSPENDED"
    conductors.start("next")
    done = host.executions.follow(execution.id, timeout=60)
    assert done.state == "SUCCESS"
    assert done.output == {"n": 3}
    assert log.read_text().splitlines() == ["do step-0", "do step-1", "do step-2"]
    assert [t.name for t in host.tasks.list(execution.id)] == [
        "begin", "step", "wait", "step[2]", "wait[2]", "step[3]", "wait[3]"]


def test_a_job_longer_than_the_claim_expiry_runs_once(
        host: Any, conductors: Conductors, tmp_path: Path) -> None:
    """The heartbeat renews the claim: the other conductor never takes the job over.

    With one job at a time, the owner's dispatch loop stops looking at the board
    (TaskFlow's Redis claim script also renews a claim its owner tries again), so
    only the heartbeat keeps the claim."""
    counter = tmp_path / "counter"
    conductors.start("c1", concurrency=1)
    conductors.start("c2", concurrency=1)
    execution = host.executions.create("jobs_demo.slow", {"counter": str(counter), "pause": 9},
                                       wait=False)
    assert host.executions.follow(execution.id, timeout=60).state == "SUCCESS"
    time.sleep(10)  # a second run would have counted by now
    assert counter.read_text() == "1"


@pytest.mark.parametrize("settings", ["redis"], indirect=True)
def test_a_conductor_that_lost_its_claim_stops_and_the_other_takes_over(
        host: Any, conductors: Conductors, tmp_path: Path) -> None:
    """A conductor stalled (SIGSTOP) longer than the claim expiry loses its claim; the
    other conductor takes the job over and finishes it.  Running again, the stalled
    one stops at the end of the task it was in: it neither runs the counted step
    nor changes the finished execution."""
    counter = tmp_path / "counter"
    stalled = conductors.start("stalled", concurrency=1)
    execution = host.executions.create("jobs_demo.slow", {"counter": str(counter), "pause": 3},
                                       wait=False)
    deadline = time.monotonic() + 30
    while host.executions.get(execution.id).state != "RUNNING":
        assert time.monotonic() < deadline, "the conductor did not start the job"
        time.sleep(0.05)
    os.kill(stalled.pid, signal.SIGSTOP)  # in the 3 s pause
    try:
        taker = conductors.start("taker", concurrency=1)
        done = host.executions.follow(execution.id, timeout=60)
        assert done.state == "SUCCESS"
        assert _ran_by(host, execution.id) == taker.pid
    finally:
        os.kill(stalled.pid, signal.SIGCONT)
    time.sleep(4)  # the stalled conductor's pause ends and its heartbeat runs
    assert stalled.poll() is None
    assert counter.read_text() == "1"  # the counted step ran once
    after = host.executions.get(execution.id)
    assert (after.state, after.output) == ("SUCCESS", done.output)
    assert {t.name: t.state for t in host.tasks.list(execution.id)} == {
        "wait": "SUCCESS", "count": "SUCCESS"}


@pytest.mark.parametrize("settings", ["redis"], indirect=True)
def test_a_paused_execution_resumes_through_the_jobboard(
        host: Any, conductors: Conductors, tmp_path: Path) -> None:
    """A workflow that pauses on a conductor is PAUSED (its job done); ``resume`` posts a
    new job and a conductor continues it, each side effect once.  A SUSPENDED execution
    whose job is back on the board is not posted twice."""
    log = tmp_path / "log"
    conductors.start("c1", concurrency=1)
    execution = host.executions.create("jobs_demo.paused", {"log": str(log)}, wait=False)
    deadline = time.monotonic() + 60
    while host.executions.get(execution.id).state != "PAUSED":
        assert time.monotonic() < deadline, host.executions.get(execution.id).state
        time.sleep(0.1)
    time.sleep(1)  # nothing goes on while it is paused
    assert log.read_text().splitlines() == ["do first"]
    assert host.executions.get(execution.id).state == "PAUSED"
    resumed = host.executions.resume(execution.id, wait=False)
    assert resumed.state == "PAUSED"  # posted, not run here
    done = host.executions.follow(execution.id, timeout=60)
    assert done.state == "SUCCESS"
    assert log.read_text().splitlines() == EFFECTS
    # Ended: returned unchanged (Mistral's resume), nothing posted to the board.
    assert host.executions.resume(execution.id, wait=False).state == "SUCCESS"

    conductors.stop_all()
    log2 = tmp_path / "log2"
    leaving, suspended = _one_running(host, conductors, "leaving", log2, pause=2)
    leaving.terminate()
    assert leaving.wait(30) == 0
    assert host.executions.get(suspended.id).state == "SUSPENDED"
    with pytest.raises(exceptions.Conflict, match="already waits on the jobboard"):
        host.executions.resume(suspended.id, wait=False)
    conductors.start("next")
    assert host.executions.follow(suspended.id, timeout=60).state == "SUCCESS"
    assert log2.read_text().splitlines() == EFFECTS


@pytest.mark.parametrize("settings", ["redis"], indirect=True)
def test_pausing_an_execution_a_conductor_runs(host: Any, conductors: Conductors,
                                               tmp_path: Path) -> None:
    """Issue 26: this process asks a pause of an execution a conductor runs (a request
    in the executions database); the conductor's engine lets its running task end,
    starts nothing more and records it PAUSED, its job done; ``resume`` posts a job
    that a conductor runs to SUCCESS, each side effect once."""
    log = tmp_path / "log"
    _proc, execution = _one_running(host, conductors, "c1", log, pause=3)
    asked = host.executions.pause(execution.id)  # PAUSED at once; 'wait' ends first
    assert (asked.state, asked.pausing) == ("PAUSED", True)
    until("its engine stopped", lambda: not host.executions.get(execution.id).pausing)
    assert host.executions.get(execution.id).state == "PAUSED"
    time.sleep(1)  # nothing goes on while it is paused
    assert log.read_text().splitlines() == ["do first"]
    assert {t.name: t.state for t in host.tasks.list(execution.id)}.get(
        "second", "PENDING") == "PENDING"  # never started
    assert host.executions.pause(execution.id).state == "PAUSED"  # left as it is
    host.executions.resume(execution.id, wait=False)
    assert host.executions.follow(execution.id, timeout=60).state == "SUCCESS"
    assert log.read_text().splitlines() == EFFECTS
    assert host._session.runner().store.pause_requests.pending() == []


@pytest.mark.parametrize("settings", ["redis"], indirect=True)
def test_a_failure_killed_before_its_record_is_recorded_not_run_again(
        host: Any, conductors: Conductors, tmp_path: Path) -> None:
    """A conductor killed after TaskFlow saved a failed flow's end, before the
    execution's record (made here as such a kill leaves it: no crash point sits
    there): the execution reads INTERRUPTED; its resume posts a job, and the next
    conductor records the failure as the first run would have, without running the
    flow again (TaskFlow would run a REVERTED flow from its start)."""
    log = tmp_path / "log"
    conductors.start("c1", concurrency=1)
    execution = host.executions.create("jobs_demo.fails", {"log": str(log)}, wait=False)
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.follow(execution.id, timeout=60)
    first = host.executions.get(execution.id)
    assert first.state == "ERROR" and first.failed_task == "boom", first
    assert log.read_text().splitlines() == ["do first", "undo first"]
    store = host._session.runner().store
    fd = store.flow_detail(execution.id)
    fd.meta = {k: v for k, v in fd.meta.items()
               if k not in ("finished_at", "output", "error", "failed_task", "error_record")}
    dead = subprocess.Popen(["true"])
    dead.wait()
    store.update_meta(fd, pid=dead.pid)
    assert host.executions.get(execution.id).state == "INTERRUPTED"
    assert host.executions.resume(execution.id, wait=False).state == "INTERRUPTED"
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.follow(execution.id, timeout=60)
    done = host.executions.get(execution.id)
    assert (done.state, done.failed_task, done.error) == ("ERROR", "boom", first.error)
    assert done.finished_at is not None
    assert log.read_text().splitlines() == ["do first", "undo first"]  # not run again
