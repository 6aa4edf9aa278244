"""Crash campaign of ``tripleo-flow deploy`` (sample plan, real native heat-all).

``kill -9`` of the deploy process at each point where it holds something (Heat
starting, the stack being created, config-download, the final database dump),
each retry being killed at the next point (the last one by a crash point inside
the teardown), then a retry that succeeds.  After
each kill: no Heat process (by pid and by port), and ``deployment status``
says the deployment was interrupted; killed while the stack is created, ``execution
resume`` finishes it (on native heat-all and on heat type ``processes``, whose MariaDB
data outlives the killed deploy as native's SQLite file does, moved off /dev/shm as
that file is).  And Ctrl-C (SIGINT):
the flow reverts, Heat stops, the status records it, exit 130 with one line.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.functional.heat.conftest import heat_processes
from tests.functional.heat.test_deploy_progress import _conf_file
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.common.crashpoints import ENV as CRASH_ENV
from tripleo_flow.heat import process
from tripleo_flow.heat.client import HeatClient
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional
ROOT = Path(__file__).resolve().parents[3]


class Deploy:
    """``tripleo-flow deploy`` of plan ``oc`` as a subprocess, watched from outside."""

    def __init__(self, tmp_path: Path, conf: Path, heat_type: str = "native") -> None:
        self.conf = conf
        self.heat_type = heat_type
        self.work = tmp_path / "work"
        self.heat = HeatDir(self.work)
        self.stderr = tmp_path / "deploy.err"
        #: The ports the work dir's Heats took since the last :meth:`assert_no_heat`.
        self.ports: set[int] = set()

    def port(self) -> int | None:
        """The port of the Heat its run record names now (None: no Heat), noted."""
        port = self.run_record().get("port")
        if port:
            self.ports.add(int(port))
        return int(port) if port else None

    def cli(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "tripleo_flow.cli.main", "--config-file",
                str(self.conf), *args]

    def start(self, crash_at: str | None = None,
              command: tuple[str, ...] = ("deploy", "--plan", "oc")) -> subprocess.Popen[str]:
        """Start ``command`` (default: the deploy) on the work dir."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        if crash_at:
            env[CRASH_ENV] = crash_at
        return subprocess.Popen(
            self.cli(*command, "--work-dir", str(self.work), "--heat-type", self.heat_type,
                     "-f", "value", "-c", "deployment_status"),
            stdout=subprocess.PIPE, stderr=self.stderr.open("w"), text=True,
            env=env, cwd=ROOT)

    def run_record(self) -> dict:
        try:
            return json.loads(self.heat.run_file.read_text())
        except (OSError, ValueError):
            return {}

    def wait_for(self, proc: subprocess.Popen[str], point: Callable[[], bool],
                 what: str, pause: float = 0.002) -> None:
        deadline = time.monotonic() + 300
        while not point():
            assert proc.poll() is None, f"deploy ended before {what}: {self.stderr.read_text()}"
            assert time.monotonic() < deadline, f"deploy never reached {what}"
            time.sleep(pause)

    def status(self) -> dict:
        out = subprocess.run(self.cli("deployment", "status", "--plan", "oc", "-f", "json"),
                             capture_output=True, text=True, check=True, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
        result: dict = json.loads(out)
        return result

    def kill_at(self, proc: subprocess.Popen[str], point: Callable[[], bool], what: str,
                pause: float = 0.002) -> None:
        """``kill -9`` the process once ``point`` holds (looked at every ``pause``
        seconds), then check that its Heat died with it."""
        self.wait_for(proc, point, what, pause)
        pids = _heat_pids(self)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.assert_no_heat(pids)

    def stack_in_progress(self) -> bool:
        """Whether the deploy's Heat is ready and says the stack is being created or
        updated (``*_IN_PROGRESS``): the moment to kill "while the stack is created"."""
        if not self.run_record().get("ready"):
            return False
        port = self.port()
        try:
            status = HeatClient(f"http://127.0.0.1:{port}/v1/admin",
                                timeout=5).stack_status("oc")
        except exceptions.HeatError:
            return False
        return bool(status and status.endswith("_IN_PROGRESS"))

    def started(self) -> bool:
        """Whether Heat's processes started (heat-all's pid, or the children of type
        processes)."""
        record = self.run_record()
        return bool(record.get("pid") or record.get("children"))

    def assert_no_heat(self, pids: list[int]) -> None:
        """No Heat process by pid or marker (nor a server of type processes), nothing
        listening on the ports its Heats took (bounded wait)."""
        self.port()
        deadline = time.monotonic() + 15
        while True:
            alive = [p for p in pids if Path(f"/proc/{p}/cmdline").exists()
                     and Path(f"/proc/{p}/cmdline").read_bytes()]
            alive += heat_processes(self.heat.conf_file)
            alive += process.find_naming(f"tripleo-flow-heat-{self.heat.token}-services")
            listening = sorted(p for p in self.ports if _listens(p))
            if not alive and not listening:
                self.ports.clear()  # free again: another program may take them now
                return
            assert time.monotonic() < deadline, (
                f"Heat outlived its deploy: pids {alive}, ports listening: {listening}")
            time.sleep(0.05)


def _shm_files(deploy: Deploy) -> list[Path]:
    return list(Path("/dev/shm").glob(f"tripleo-flow-heat-{deploy.heat.token}*"))


def assert_moved_off_shm(deploy: Deploy, moved: bool = True) -> None:
    """The killed run's Heat database (every password of the stack: native's SQLite
    file, the private MariaDB's data and the broker's files of type processes) leaves
    /dev/shm within seconds, for the heat-dir, directories 0700 and files 0600 (bounded
    wait): it stayed there until the next deploy (issue 29).  ``moved``: the database
    existed when the owner was killed (type processes may be killed before its MariaDB
    data is made: then nothing is left at all)."""
    deadline = time.monotonic() + 60
    while _shm_files(deploy):
        assert time.monotonic() < deadline, (
            f"{_shm_files(deploy)} still on /dev/shm; the watcher said: "
            f"{_watcher_log(deploy)}")
        time.sleep(0.1)
    target = deploy.heat.moved_db if deploy.heat_type == "native" else \
        deploy.heat.moved_mariadb
    if not moved and not target.exists():
        return
    assert target.exists(), _watcher_log(deploy)
    if target.is_dir():
        assert (target / "mysql").is_dir(), sorted(p.name for p in target.iterdir())
        modes = {str(p): oct(p.stat().st_mode & 0o777) for p in [target, *target.rglob("*")]}
        wrong = {path: mode for path, mode in modes.items()
                 if mode != ("0o700" if Path(path).is_dir() else "0o600")}
        assert not wrong, wrong
    else:
        assert oct(target.stat().st_mode & 0o777) == "0o600"


def _watcher_log(deploy: Deploy) -> str:
    log = deploy.heat.log_dir / "db-watcher.log"
    return log.read_text() if log.exists() else "(no log)"


def _listens(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _heat_pids(deploy: Deploy) -> list[int]:
    record = deploy.run_record()
    pid = record.get("pid")
    children = [child["pid"] for child in (record.get("children") or {}).values()]
    return [*([pid] if pid else []), *children, *heat_processes(deploy.heat.conf_file)]


def _deploy(tmp_path: Path, heat_venv: Path, heat_type: str = "native") -> Deploy:
    conf = _conf_file(tmp_path, heat_venv)
    if heat_type != "native":  # [heat] is the file's last section
        conf.write_text(conf.read_text() + "engine_workers = 2\n")
    client = Client.from_config_files([str(conf)])
    try:
        client.plans.create("oc", sample=True)
    finally:
        client.close()
    return Deploy(tmp_path, conf, heat_type)


@pytest.fixture
def deploy(tmp_path: Path, heat_venv: Path) -> Deploy:
    return _deploy(tmp_path, heat_venv)


@pytest.fixture(params=["native", "processes"])
def any_deploy(request: pytest.FixtureRequest, tmp_path: Path, heat_venv: Path) -> Deploy:
    """A deploy on each heat type whose database outlives a killed owner."""
    return _deploy(tmp_path, heat_venv, request.param)


def test_kill_9_at_each_point_then_a_retry_succeeds(deploy: Deploy) -> None:
    heat, work = deploy.heat, deploy.work
    points: list[tuple[str, Callable[[], bool]]] = [
        ("Heat starting", lambda: deploy.started() and not deploy.run_record().get("ready")),
        ("the stack being created", lambda: bool(deploy.run_record().get("ready"))),
        ("config-download", lambda: (work / "outputs.yaml").exists()),
    ]
    for what, point in points:
        proc = deploy.start()
        deploy.wait_for(proc, point, what)
        pids = _heat_pids(deploy)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deploy.assert_no_heat(pids)
        assert_moved_off_shm(deploy)
        status = deploy.status()
        assert status["deployment_status"] == "DEPLOY_INTERRUPTED", (what, status)
        assert "(gone)" in status["process"] and "deploy again" in status["message"]

    # The database dump: KillHeat stopped heat-all and dumped the database, and
    # the process dies before wiping it (a crash point: the window is too short
    # to hit from outside every time).
    proc = deploy.start(crash_at="heat.kill:dumped")
    proc.wait(timeout=600)
    assert proc.returncode == -signal.SIGKILL, deploy.stderr.read_text()
    record = deploy.run_record()
    assert record.get("ready") is True and record.get("pid") is None, record
    deploy.assert_no_heat([])
    assert_moved_off_shm(deploy)  # killed between the dump and the wipe
    status = deploy.status()
    assert status["deployment_status"] == "DEPLOY_INTERRUPTED", status

    proc = deploy.start()
    out, _ = proc.communicate(timeout=600)
    err = deploy.stderr.read_text()
    assert proc.returncode == 0 and out.strip() == "DEPLOY_SUCCESS", err
    # The retry said what it cleaned up after the last killed run (its database).
    assert "left by a killed deploy" in err and "removed its database" in err, err
    assert deploy.status()["deployment_status"] == "DEPLOY_SUCCESS"
    assert heat.read_run() is None and heat.dump_file.stat().st_size > 0
    deploy.assert_no_heat([])
    assert _shm_files(deploy) == [] and not heat.moved_db.exists()


@pytest.mark.parametrize("moment", ["while Heat starts", "while the stack is created"])
def test_a_deploy_killed_while_the_stack_is_created_resumes(any_deploy: Deploy,
                                                            moment: str) -> None:
    """``kill -9`` while Heat creates the stack, then ``execution resume``: the resumed
    execution launches Heat again on the database the killed run left, takes the stack
    over and finishes the deployment.  Killed while its Heat starts (``deploy.launch_heat``
    running), the resumed execution runs that task again: it cleans up after the
    killed Heat, launches a new one and creates the stack."""
    deploy = any_deploy
    proc = deploy.start()
    if moment == "while Heat starts":
        deploy.kill_at(proc, lambda: deploy.started()
                       and not deploy.run_record().get("ready"), "Heat starting")
    else:  # Heat says the stack is being created
        deploy.kill_at(proc, deploy.stack_in_progress, "the stack being created", 0.1)
    assert_moved_off_shm(deploy,
                         moved=deploy.heat_type == "native" or moment != "while Heat starts")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    listed = json.loads(subprocess.run(
        deploy.cli("execution", "list", "-f", "json"), capture_output=True, text=True,
        check=True, cwd=ROOT, env=env).stdout)
    [killed] = [row for row in listed if row["Workflow"] == "tripleo.deploy.deploy"]
    assert killed["State"] == "INTERRUPTED", killed
    assert deploy.status()["deployment_status"] == "DEPLOY_INTERRUPTED"

    resumed = subprocess.run(deploy.cli("execution", "resume", killed["ID"], "-f", "json"),
                             capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads(resumed.stdout)["State"] == "SUCCESS"
    if deploy.heat_type == "processes":  # the resumed execution launched the same type
        assert "MariaDB and RabbitMQ" in resumed.stderr, resumed.stderr
    if moment == "while Heat starts":  # launch_heat ran again; the stack is created
        assert "left by a killed deploy" in resumed.stderr, resumed.stderr
        assert "CREATE_COMPLETE" in resumed.stderr, resumed.stderr
    else:
        assert "kept its database for the resumed deploy" in resumed.stderr, resumed.stderr
        # The killed create was taken over by an update, not started again from nothing.
        assert "deploy_stack: stack" in resumed.stderr and "UPDATE_COMPLETE" in resumed.stderr
    # the resumed deploy found the moved database, and left no copy anywhere
    assert _shm_files(deploy) == [] and not deploy.heat.moved_db.exists()
    assert not deploy.heat.moved_mariadb.exists()
    status = deploy.status()
    assert status["deployment_status"] == "DEPLOY_SUCCESS", status
    assert (deploy.work / "config-download").is_dir()
    assert deploy.heat.read_run() is None and deploy.heat.dump_file.stat().st_size > 0
    deploy.assert_no_heat([])
    tasks = json.loads(subprocess.run(
        deploy.cli("execution", "tasks", killed["ID"], "-f", "json"), capture_output=True,
        text=True, check=True, cwd=ROOT, env=env).stdout)
    assert {t["Task"]: t["State"] for t in tasks}["finish"] == "SUCCESS"


def test_ctrl_c_reverts_stops_heat_and_records_it(deploy: Deploy) -> None:
    proc = deploy.start()
    deploy.wait_for(proc, lambda: bool(deploy.run_record().get("ready")), "the stack")
    pids = _heat_pids(deploy)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    err = deploy.stderr.read_text()
    assert proc.returncode == 130, err
    lines = [line for line in err.splitlines() if "interrupted by SIGINT" in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "Deployment of plan 'oc'" in lines[0] and "reverted" in lines[0]
    deploy.assert_no_heat(pids)
    assert deploy.heat.read_run() is None
    status = deploy.status()
    assert status["deployment_status"] == "DEPLOY_FAILED"
    assert "interrupted by SIGINT" in status["message"]
    assert not (deploy.work / "config-download").exists()
    # The deploy was the named workflow every interface runs, recorded as reverted.
    listed = json.loads(subprocess.run(
        deploy.cli("execution", "list", "-f", "json"), capture_output=True, text=True,
        check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout)
    assert [row["State"] for row in listed
            if row["Workflow"] == "tripleo.deploy.deploy"] == ["ERROR"]
