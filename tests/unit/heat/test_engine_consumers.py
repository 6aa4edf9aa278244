"""The watcher of heat-engine's consumer on the private broker (the process handling
only: a stand-in program prints what the real watcher would; the real broker and
engines: tests/functional/heat/test_processes.py)."""

from __future__ import annotations

import time
from pathlib import Path

from tripleo_flow.heat import services


def _stand_in(tmp_path: Path, outputs: list[str]) -> tuple[str, Path]:
    """A program run as ``PROGRAM -c SCRIPT`` that prints the next of ``outputs`` (after
    ``release`` exists for a "wait" entry) and counts its starts in ``starts``."""
    for i, out in enumerate(outputs):
        tmp_path.joinpath(f"out{i}").write_text(out)
    program = tmp_path / "python"
    program.write_text(
        "#!/bin/sh\n"
        f"cd {tmp_path}\n"
        "cat > /dev/null\n"  # the credentials on stdin
        "n=$(cat starts 2>/dev/null || echo 0); echo $((n + 1)) > starts\n"
        "out=$(cat out$n)\n"
        "if [ \"$out\" = wait ]; then while [ ! -e release ]; do sleep 0.01; done; out=3; fi\n"
        "echo $out\n")
    program.chmod(0o700)
    return str(program), tmp_path / "starts"


def _services(tmp_path: Path) -> services.Services:
    return services.Services(root=tmp_path, log_dir=tmp_path, ports={"amqp": 1},
                             admin_password="a", rabbit_password="r")


def _until_done(watch: services.EngineConsumers, starts: Path, count: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = watch.found()
        if found or (starts.exists() and int(starts.read_text()) >= count
                     and watch._proc is None):
            return found
        time.sleep(0.01)
    raise AssertionError("the stand-in watcher did not finish")


def test_one_watcher_runs_until_it_sees_a_consumer(tmp_path: Path) -> None:
    python, starts = _stand_in(tmp_path, ["wait"])
    watch = services.EngineConsumers(python, _services(tmp_path))
    assert not watch.found() and not watch.found()  # still watching: not started again
    (tmp_path / "release").touch()
    assert _until_done(watch, starts, 1)
    assert watch.found()  # kept: no watcher started after a consumer was seen
    assert starts.read_text().strip() == "1"


def test_a_watcher_that_saw_none_is_started_again(tmp_path: Path) -> None:
    python, starts = _stand_in(tmp_path, ["0", "oops", "2"])
    watch = services.EngineConsumers(python, _services(tmp_path))
    assert not _until_done(watch, starts, 1)  # its deadline, nothing seen
    assert not _until_done(watch, starts, 2)  # what it printed is not a count
    assert _until_done(watch, starts, 3)
    assert starts.read_text().strip() == "3"


def test_stop_kills_a_running_watcher(tmp_path: Path) -> None:
    python, starts = _stand_in(tmp_path, ["wait"])
    watch = services.EngineConsumers(python, _services(tmp_path))
    assert not watch.found()
    proc = watch._proc
    assert proc is not None
    watch.stop()
    assert proc.returncode is not None and watch._proc is None
