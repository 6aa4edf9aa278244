"""Make the real overcloud deployments in a process of their own (see
``tests/overcloud_background.py``): ``python -m tests.functional.overcloud.background
BASE NAME...`` makes each named deployment in ``BASE/NAME``, in order, and leaves
``deployed.json`` (the result) or ``failed.txt`` (the error) there.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

import pytest

from tests.functional.conftest import DEFAULT_HEAT_VENV
from tests.functional.overcloud import conftest as overcloud
from tripleo_flow import exceptions


def make(base: Path, name: str, heat_venv: Path) -> None:
    root = base / name
    root.mkdir(parents=True, exist_ok=True)
    if name == "overcloud18":
        overcloud._deploy(root, heat_venv, overcloud.THT_VERSION, overcloud.PLAN)
    elif name == "overcloud12":
        overcloud._deploy(root, heat_venv, "12.1.0", "overcloud12", networks="[]\n")
    elif name == "overcloud18-redeploy":
        first = overcloud.kept_deployment(base / "overcloud18", overcloud.PLAN)
        if first is None:
            raise RuntimeError("overcloud18 was not made, so it cannot be redeployed")
        overcloud._redeploy(first, root, heat_venv)
    elif name == "overcloud18-scaledown":
        redeployed = overcloud.kept_deployment(base / "overcloud18-redeploy", overcloud.PLAN)
        if redeployed is None:
            raise RuntimeError("overcloud18-redeploy was not made, so it cannot be scaled down")
        overcloud._scale_down(redeployed, root, heat_venv)
    else:
        raise ValueError(f"unknown deployment {name!r}")


def _leave_with_parent() -> None:
    """SIGTERM this process once the test session that started it is gone.

    The session stops the background when it ends; a session that is killed (or a
    ``timeout`` that signals pytest alone: the background leads a session of its own)
    would leave it deploying for an hour, its heat-all taking a core from whatever runs
    next.  Its parent gone, it is re-parented: that is the sign.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(2.0)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: list[str]) -> int:
    # A SIGTERM (the test session ending early) unwinds, so the deploy stops its Heat;
    # the deployment it interrupted reads failed, and no later one starts. (While a
    # workflow runs, the signal is the product's: it stops the run and raises
    # Interrupted.)
    stopping = threading.Event()

    def stop(*_: object) -> None:
        stopping.set()
        sys.exit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    _leave_with_parent()
    base, names = Path(argv[0]), argv[1:]
    heat_venv = Path(os.environ.get("TRIPLEO_FLOW_HEAT_VENV", DEFAULT_HEAT_VENV))
    failures = 0
    for name in names:
        if stopping.is_set():
            print(f"== {name} not started: stopped", flush=True)
            return 128 + signal.SIGTERM
        print(f"== {name}", flush=True)
        try:
            make(base, name, heat_venv)
        except (Exception, pytest.fail.Exception) as exc:  # fetch_tree_dir: pytest's
            if isinstance(exc, exceptions.Interrupted):
                stopping.set()
            failures += 1
            (base / name).mkdir(parents=True, exist_ok=True)
            (base / name / "failed.txt").write_text(traceback.format_exc())
            traceback.print_exc()
        print(f"== {name} done", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    from tripleo_flow.http import hint_words  # as the CLI and the HTTP API do at start

    hint_words.install()
    sys.exit(main(sys.argv[1:]))
