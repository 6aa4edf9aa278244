"""The plan-code mark of an execution (``tests/unit/actions/test_plan_code.py``) holds
when another process resumes it: a second Python process, hence here, not in the unit tier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.unit.actions.test_plan_code import host as host  # the fixture
from tests.unit.actions.test_plan_code import lines
from tripleo_flow.engine.store.executions import ORIGIN_API

ROOT = Path(__file__).resolve().parents[3]


def _resume_elsewhere(data_dir: Path, execution_id: str, allow: bool) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "resume", str(data_dir), execution_id,
         "true" if allow else "false"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("origin", [ORIGIN_API, None])
def test_the_mark_holds_when_another_process_resumes(host: Any, tmp_path: Path,
                                                     origin: str | None) -> None:
    log = tmp_path / "log"
    fd = host._session.runner().start("guarded", {"log": str(log)}, origin=origin)
    host._session.close_workflows()
    ended = _resume_elsewhere(tmp_path / "data", fd.uuid, allow=False)
    if origin == ORIGIN_API:
        assert "allow_plan_code" in ended["failed"], ended
        assert lines(log) == ["do before", "undo before"]
    else:
        assert ended == {"state": "SUCCESS"}
        assert lines(log) == ["do before", "do code", "do after"]
