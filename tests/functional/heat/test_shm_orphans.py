"""A deploy killed with its database watcher (``kill -9`` of both, as a killed session
does): its Heat SQLite file (every password of the stack) stayed on /dev/shm for good.
The next launch of any heat-dir moves it into its own work dir, and leaves a live
Heat's file alone (real native heat-all, real deploy of the sample plan)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.functional.heat.test_deploy_crash import ROOT, Deploy, _heat_pids, _shm_files
from tests.functional.heat.test_deploy_progress import _conf_file
from tripleo_flow.client import Client
from tripleo_flow.heat import process
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional


def _launch(conf: Path, heat_dir: Path, *extra: str) -> None:
    """``launch heat`` (or ``--kill``) of ``heat_dir`` with config file ``conf``."""
    subprocess.run([sys.executable, "-m", "tripleo_flow.cli.main", "--config-file", str(conf),
                    "launch", "heat", "--heat-type", "native", "--heat-dir", str(heat_dir),
                    *extra], check=True, capture_output=True, text=True, cwd=ROOT,
                   timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _shm(heat_dir: Path) -> Path:
    return Path(f"/dev/shm/tripleo-flow-heat-{HeatDir(heat_dir).token}.sqlite")


def test_a_later_launch_moves_a_dead_runs_database_home_and_spares_a_live_one(
        tmp_path: Path, heat_venv: Path) -> None:
    conf = _conf_file(tmp_path, heat_venv)
    client = Client.from_config_files([str(conf)])
    try:
        client.plans.create("oc", sample=True)
    finally:
        client.close()
    deploy = Deploy(tmp_path, conf)
    live_conf = conf  # the live Heat takes a port of its own: no other config needed
    live_dir, later_dir = tmp_path / "live", tmp_path / "later"
    _launch(live_conf, live_dir)  # launch heat: a live Heat, no owner
    try:
        assert _shm(live_dir).exists()
        proc = deploy.start()
        deploy.wait_for(proc, lambda: bool(deploy.run_record().get("ready")),
                        "the stack being created")
        watcher = deploy.run_record()["db_watcher"]
        pids = _heat_pids(deploy)
        process.kill(watcher["pid"], watcher["label"])  # the watcher first, then its owner
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deploy.assert_no_heat(pids)
        time.sleep(2)
        if _shm_files(deploy):
            assert not deploy.heat.moved_db.exists()
        else:
            # Any launch on this machine sweeps (the test session's background THT
            # deployments, another test run): one started meanwhile already moved
            # it home, which is what is proven below all the same.
            assert deploy.heat.moved_db.exists(), (
                "the deploy's database is neither on /dev/shm nor moved home")

        _launch(conf, later_dir)  # any later launch
        assert _shm_files(deploy) == []
        assert deploy.heat.moved_db.stat().st_size > 0
        assert oct(deploy.heat.moved_db.stat().st_mode & 0o777) == "0o600"
        assert _shm(live_dir).exists() and _shm(later_dir).exists()
        _launch(conf, later_dir, "--kill")

        # The killed deploy's resume takes its database back from its work dir.
        status = deploy.status()
        assert status["deployment_status"] == "DEPLOY_INTERRUPTED", status
    finally:
        _launch(live_conf, live_dir, "--kill")
    assert not _shm(live_dir).exists() and not _shm(later_dir).exists()
