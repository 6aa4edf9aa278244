"""Which command runs each Heat service for the two settings of tripleo_flow/heat/
unpaced.py, and the pauses of its quick RPC replies (pure; the runner in a real Heat:
tests/functional/heat/test_leaf_pacing.py and test_quick_replies.py)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tripleo_flow.heat import unpaced
from tripleo_flow.heat.native import NativeLauncher


def test_pauses_start_at_a_millisecond_and_double_up_to_oslo_messagings_half_second() -> None:
    assert list(itertools.islice(unpaced.pauses(), 12)) == [
        0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.5, 0.5, 0.5]


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    for name in ("python", "heat-all", "heat-engine", "heat-api"):
        binary = tmp_path / "bin" / name
        binary.parent.mkdir(exist_ok=True)
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    return tmp_path


@pytest.mark.parametrize(("pace_leaves", "quick", "service", "expected"), [
    (False, True, "all", ["unpaced", "all"]),
    (False, True, "engine", ["unpaced", "engine"]),
    (False, True, "api", ["unpaced", "api"]),
    (True, True, "engine", ["unpaced", "engine", "--paced"]),
    (True, True, "api", ["unpaced", "api"]),
    (False, False, "all", ["unpaced", "all", "--slow-replies"]),
    (False, False, "api", ["heat-api"]),  # nothing of the runner applies to heat-api
    (True, False, "all", ["heat-all"]),
    (True, False, "engine", ["heat-engine"]),
])
def test_each_service_runs_through_the_runner_unless_both_waits_are_heats(
        venv: Path, tmp_path: Path, pace_leaves: bool, quick: bool, service: str,
        expected: list[str]) -> None:
    launcher = NativeLauncher(tmp_path / "work", venv, pace_leaves=pace_leaves,
                              quick_rpc_replies=quick)
    command = launcher._service_command(service)
    if expected[0] == "unpaced":
        assert command == [str(venv / "bin" / "python"), "-I", unpaced.__file__, *expected[1:]]
    else:
        assert command == [str(venv / "bin" / expected[0])]
