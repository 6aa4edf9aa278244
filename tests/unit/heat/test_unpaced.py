"""Which command runs each Heat service for the two settings of tripleo_flow/heat/
unpaced.py, and the pauses of its quick RPC replies (pure; the runner in a real Heat:
tests/functional/heat/test_leaf_pacing.py and test_quick_replies.py)."""

from __future__ import annotations

import itertools
import sys
import threading
import types
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


def test_a_service_started_ahead_waits_for_its_start_file(tmp_path: Path) -> None:
    start = tmp_path / "heat-start"
    assert unpaced.wait_for(str(start), timeout=0.05) is False
    start.write_text("")
    assert unpaced.wait_for(str(start), timeout=0.05) is True


def test_the_start_file_is_passed_to_the_runner(venv: Path, tmp_path: Path) -> None:
    launcher = NativeLauncher(tmp_path / "work", venv)
    command = launcher._service_command("engine", tmp_path / "go")
    assert command[-3:] == ["engine", unpaced.START_WHEN, str(tmp_path / "go")]
    # Heat's own script (both waits as shipped) cannot wait: the launcher starts it late.
    shipped = NativeLauncher(tmp_path / "work", venv, pace_leaves=True, quick_rpc_replies=False)
    assert not shipped._through_runner("engine")
    assert shipped._service_command("engine", tmp_path / "go") == [
        str(venv / "bin" / "heat-engine")]


def test_the_runner_refuses_a_start_flag_without_its_file(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    monkeypatch.setattr("sys.argv", ["unpaced.py", "engine", unpaced.START_WHEN])
    assert unpaced.main() == 2
    assert "needs a file" in capsys.readouterr().err


def test_heat_engine_started_ahead_prepares_then_waits_to_launch_its_workers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """heat-engine reads its configuration and loads its plugins before the start file
    comes (its main runs at once); only oslo.service's launch (the fork of its workers,
    the first use of the database and the broker) waits for the file."""
    start = tmp_path / "heat-start"
    seen: list[tuple[str, bool]] = []
    in_main = threading.Event()

    def launcher() -> None:  # writes the start file once main runs (at the latest in 5 s)
        in_main.wait(5.0)
        start.write_text("")

    def launch(conf: str, service: str, workers: int = 1) -> str:
        seen.append(("launch", start.exists()))
        return f"{service} x{workers}"

    def main() -> int:
        seen.append(("main", start.exists()))
        in_main.set()
        assert command.service.launch("conf", "engine-service", workers=4) == \
            "engine-service x4"
        return 0

    command = types.ModuleType("fake_heat_engine")
    command.service = types.SimpleNamespace(launch=launch)  # type: ignore[attr-defined]
    command.main = main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, command.__name__, command)
    monkeypatch.setitem(unpaced.SERVICES, "engine", command.__name__)
    monkeypatch.setattr("sys.argv", ["unpaced.py", "engine", unpaced.PACED,
                                     unpaced.SLOW_REPLIES, unpaced.START_WHEN, str(start)])
    writer = threading.Thread(target=launcher)
    writer.start()
    assert unpaced.main() == 0
    writer.join()
    assert seen == [("main", False), ("launch", True)]
