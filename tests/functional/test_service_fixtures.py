"""The servers the tests start die with the test process that started them, even when
it is killed with SIGKILL: a killed pytest once left its MariaDB fixture's ``mariadbd``
running for 25 minutes (the fixture's teardown never ran)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Starts a private MariaDB and a Redis as the fixtures do, prints their pids, waits.
OWNER = """
import shutil, sys, time
from pathlib import Path
from tests.functional.mariadb import PrivateMariaDB
import tests.fixtures_services as fixtures

base = Path(sys.argv[1])
db = PrivateMariaDB(base / "db").start()
(base / "redis").mkdir()
redis = fixtures.start_redis(shutil.which("redis-server"), base / "redis", fixtures.free_port())
print(db.proc.pid, redis.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_killed_test_process_leaves_no_server_running(tmp_path: Path) -> None:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(tmp_path)], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    pids = [int(p) for p in owner.stdout.readline().split()]
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for pid in left:  # not to leave them running when the test fails
        os.kill(pid, signal.SIGKILL)
    assert left == []
