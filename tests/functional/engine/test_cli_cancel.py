"""``tripleo-flow execution cancel ID [--message TEXT]`` (issue 26), as ``mistral
execution-update -s CANCELLED --state-info TEXT``, on an execution a ``kill -9`` left
INTERRUPTED: it reads CANCELLED with the message, ``execution resume`` then shows it
unchanged (exit 0, as Mistral's resume of a workflow that is not paused) and runs
nothing, ``execution pause`` is refused (exit 4), a second cancel leaves it as it is.

The command runs in this process (:mod:`tests.cli_inprocess`); the ``kill -9`` is a
real second process's, hence a functional test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests import cli_inprocess
from tests.engine_helpers import WORKBOOKS

ROOT = Path(__file__).resolve().parents[3]


def _cli(conf: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = cli_inprocess.run("--config-file", str(conf), *args)
    assert done.returncode == code, done.stderr
    return done


def _json(conf: Path, *args: str) -> Any:
    return json.loads(_cli(conf, *args, "-f", "json").stdout)


def interrupted(tmp_path: Path) -> tuple[Path, str]:
    """A configuration file over ``tmp_path`` and an execution of it a ``kill -9``
    left INTERRUPTED before its first task (its workbook created with the CLI)."""
    conf = tmp_path / "tripleo-flow.conf"
    conf.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n")
    _cli(conf, "workbook", "create", str(WORKBOOKS / "good" / "std_only.yaml"))
    died = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "record-then-die",
         str(tmp_path / "data"), "std_only.greet", json.dumps({"who": "you"})],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    return conf, json.loads(died.stdout.splitlines()[0])["recorded"]


def test_execution_cancel_from_the_cli(tmp_path: Path) -> None:
    conf, ident = interrupted(tmp_path)
    assert _json(conf, "execution", "show", ident)["State"] == "INTERRUPTED"

    helped = _cli(conf, "help", "execution", "cancel").stdout
    assert "Cancel an execution" in helped and "--message" in helped

    done = _json(conf, "execution", "cancel", ident, "--message", "Cancelled by user.")
    assert (done["State"], done["State info"]) == ("CANCELLED", "Cancelled by user.")
    assert json.loads(done["Output"]) == {"result": "Cancelled by user."}
    assert done["Finished"]

    resumed = _json(conf, "execution", "resume", ident)
    assert (resumed["State"], resumed["State info"]) == ("CANCELLED", "Cancelled by user.")
    refused = _cli(conf, "execution", "pause", ident, code=4)
    assert "has already ended (CANCELLED)" in refused.stderr
    again = _json(conf, "execution", "cancel", ident, "-m", "again")
    assert (again["State"], again["State info"]) == ("CANCELLED", "Cancelled by user.")
    tasks = _json(conf, "execution", "tasks", ident)
    assert all(t["State"] == "PENDING" for t in tasks), tasks  # nothing ran
    missing = _cli(conf, "execution", "cancel", "no-such-execution", code=3)
    assert "no-such-execution" in missing.stderr
