"""The unit tests' scratch directories (``tmp_path``) on a tmpfs when one is writable.

A unit test's files are scratch: its executions database, plans and workbooks. On disk
every SQLite checkpoint and close waits for the disk to sync (milliseconds each, many per
workflow run), which made the unit tier wait on the disk more than it computed; nothing
a unit test checks depends on a sync (a ``kill -9`` loses no written page). Each test
gets its own directory under one per session in ``/dev/shm``; a passing test's is
removed when it ends, the session's at the end unless a test failed (then its path is
printed, as pytest keeps its own). Without a writable ``/dev/shm``, pytest's ``tmp_path``
is used as it is.

Once the tests are collected, every object made so far (the modules imported, the
collected tests: most of the heap, for as long as the session runs) is moved out of the
garbage collector's sight (:func:`gc.freeze`): each full collection would otherwise
walk them all again.  Garbage made by the tests is collected as before; nothing a test
checks depends on when a collection runs.
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

SHM = Path("/dev/shm")
#: The session directory's prefix: short (tests make sockets in it), and none of the
#: product's own names on /dev/shm (``tripleo_flow.heat.shm_orphans``).
PREFIX = "tf-unit-"


@pytest.fixture(scope="session")
def _scratch_root(request: pytest.FixtureRequest) -> Iterator[Path | None]:
    if not (SHM.is_dir() and os.access(SHM, os.W_OK | os.X_OK)):
        yield None
        return
    root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=SHM))
    yield root
    if request.session.testsfailed:
        print(f"\nthe unit tests' scratch files are kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, _scratch_root: Path | None,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A directory of this test's own (on tmpfs when there is one)."""
    name = re.sub(r"\W", "_", request.node.name)[:30]
    if _scratch_root is None:
        yield tmp_path_factory.mktemp(name, numbered=True)
        return
    path = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_scratch_root))
    yield path
    failed = any(getattr(request.node, f"rep_{when}", None) is not None
                 and getattr(request.node, f"rep_{when}").failed for when in ("setup", "call"))
    if not failed:
        shutil.rmtree(path, ignore_errors=True)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[pytest.TestReport]:
    """Each phase's report kept on the test (``rep_setup``, ``rep_call``): whether it
    failed decides if its scratch directory is kept."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def pytest_collection_finish(session: pytest.Session) -> None:
    """What is made by now lives as long as the session: the collector stops walking it."""
    gc.collect()
    gc.freeze()
