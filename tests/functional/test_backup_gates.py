"""Backup restore against workflow starts, and backups killed while written, on real data
directories (a local plan store, a real SQLite executions database, real executions).

The interleavings are staged with events, never timed: a restore stopped between its
check that nothing runs and its swap refuses a workflow start (from another client, as
another process would); a start stopped before its execution is recorded refuses the
restore.  A stored backup's writer killed with SIGKILL leaves a partial file that the next
listing removes (issue 27)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.functional.test_backup import make_client, tree_state
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.engine.store.executions import Execution
from tripleo_flow.workspace import backup_archive

QUICK = ("version: '2.0'\nname: naps\nworkflows:\n  quick:\n    tasks:\n"
         "      hi:\n        action: std.noop\n")


@pytest.fixture
def used(tmp_path: Path) -> tuple[Path, Path]:
    """A data directory with a plan, a workbook and two executions (the plan's create
    and a run); its backup."""
    data = tmp_path / "a"
    workbook = tmp_path / "naps.yaml"
    workbook.write_text(QUICK)
    archive = tmp_path / "backup.tar.gz"
    with make_client(data) as client:
        client.plans.create("oc", sample=True)
        client.workbooks.create(workbook)
        client.executions.create("naps.quick")
        client.backups.create(archive)
    return data, archive


def test_a_workflow_start_during_a_restore_is_refused(
        used: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    data, archive = used
    checked, go = threading.Event(), threading.Event()
    real_stage = backup_archive.stage

    def stage(*args: Any) -> Path:  # the restore has checked that nothing runs
        checked.set()
        assert go.wait(60)
        return real_stage(*args)

    monkeypatch.setattr(backup_archive, "stage", stage)
    results: list[object] = []
    with make_client(data) as restorer, make_client(data) as starter:
        thread = threading.Thread(target=lambda: results.append(
            restorer.backups.restore(archive, force=True)))
        thread.start()
        try:
            assert checked.wait(60)
            with pytest.raises(exceptions.Conflict, match="while a backup restore"):
                starter.executions.create("naps.quick")
        finally:
            go.set()
            thread.join()
    assert isinstance(results[0], dict)
    with make_client(data) as client:  # the restored database, and starts work again
        assert len(client.executions.list()) == results[0]["executions"] == 2
        assert client.executions.create("naps.quick").state == "SUCCESS"


#: A workflow start of :func:`held_start`'s client reached its hold / may go on.
START_REACHED, START_GOES = threading.Event(), threading.Event()


def held_start(conf: Any) -> Client:
    """A client whose workflow start stops before its execution is recorded (its
    executions manager's ``_start`` held until :data:`START_GOES`)."""
    client = Client(conf)
    start = client.executions._start

    def held(*args: Any, **kwargs: Any) -> Execution:
        START_REACHED.set()
        assert START_GOES.wait(60)
        return start(*args, **kwargs)

    client.executions._start = held  # type: ignore[method-assign]
    return client


def test_a_restore_during_a_workflow_start_is_refused(used: tuple[Path, Path]) -> None:
    data, archive = used
    started: list[Execution] = []
    with held_start(make_client(data).conf) as starter, make_client(data) as restorer:
        thread = threading.Thread(target=lambda: started.append(
            starter.executions.create("naps.quick")))
        thread.start()
        try:
            assert START_REACHED.wait(60)
            before = tree_state(data.parent)
            with pytest.raises(exceptions.Conflict, match="while a workflow is starting"):
                restorer.backups.restore(archive, force=True)
            assert tree_state(data.parent) == before
        finally:
            START_GOES.set()
            thread.join()
        assert started[0].state == "SUCCESS"
        assert len(starter.executions.list()) == 3  # recorded where it was started


WRITER = textwrap.dedent("""
    import sys
    from tests.functional.test_backup import make_client
    from tripleo_flow.client import Client

    with Client(make_client(sys.argv[1]).conf) as client:
        check_quiet, seen = client.backups._check_quiet, []

        def stopped():  # the second look comes once the archive is written
            seen.append(1)
            if len(seen) == 2:
                print("written", flush=True)
                sys.stdin.readline()
            return check_quiet()

        client.backups._check_quiet = stopped
        client.backups.store("a long enough passphrase")
""")


def partials(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob(f".*{backup_archive.PARTIAL}"))


def test_a_backup_killed_while_written_is_swept_at_the_next_listing(
        used: tuple[Path, Path]) -> None:
    data, _ = used
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(data)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[2])
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "written\n"
        backups = data / backup_archive.BACKUPS
        assert len(partials(backups)) == 1  # the whole archive, not yet renamed in place
        writer.send_signal(signal.SIGKILL)
        assert writer.wait(60) == -signal.SIGKILL
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    assert len(partials(backups)) == 1
    with make_client(data) as client:
        assert client.backups.list() == []
        assert partials(backups) == [] and os.listdir(backups) == []


def test_a_partial_backup_older_than_the_stale_age_is_swept(used: tuple[Path, Path]) -> None:
    data, _ = used
    backups = data / backup_archive.BACKUPS
    backups.mkdir(mode=0o700)
    live = os.getpid()  # a process that runs: only its age makes the partial stale
    old = backups / f".{'1' * 32}.tfbackup.{live}-0123abcd{backup_archive.PARTIAL}"
    fresh = backups / f".{'2' * 32}.tfbackup.{live}-4567cdef{backup_archive.PARTIAL}"
    other = backups / "notes.txt"  # not a partial backup: left alone
    for path in (old, fresh, other):
        path.write_bytes(b"partial")
    with make_client(data) as client:
        age = client.conf.api.stale_backup_age
        os.utime(old, (time.time() - age - 60, time.time() - age - 60))
        made = client.backups.store("a long enough passphrase")
        assert sorted(os.listdir(backups)) == sorted(
            [fresh.name, other.name, f"{made['id']}.tfbackup"])
        client.conf.set_override("stale_backup_age", 1, group="api")
        os.utime(fresh, (time.time() - 120, time.time() - 120))
        assert [b["id"] for b in client.backups.list()] == [made["id"]]
        assert partials(backups) == []
