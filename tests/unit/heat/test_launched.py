"""The notes of Heats launched over the HTTP API and their limit (no Heat: whether a
noted Heat runs is given)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tripleo_flow import config, exceptions
from tripleo_flow.heat import launched
from tripleo_flow.heat.launched import LaunchedHeats


def test_the_limit_counts_running_heats_and_forgets_stopped_ones(tmp_path: Path) -> None:
    running = {"/w/a", "/w/b"}
    heats = LaunchedHeats(tmp_path, lambda heat_dir: heat_dir in running)
    with heats.claim("/w/a", 2):
        pass
    with heats.claim("/w/b", 2):
        pass
    assert sorted(heats.running()) == ["/w/a", "/w/b"]
    with pytest.raises(exceptions.TooManyLaunchedHeats) as refused, heats.claim("/w/c", 2):
        raise AssertionError("launched past the limit")
    assert "/w/a" in str(refused.value) and "[api] launched_heats_max" in str(refused.value)
    assert exceptions.http_status(refused.value) == 409
    # The heat-dir's own Heat is not counted against it (a restore relaunches it).
    heats.check(2, "/w/a")
    running.discard("/w/a")  # killed: its note goes when counted
    with heats.claim("/w/c", 2):
        running.add("/w/c")
    assert sorted(heats.running()) == ["/w/b", "/w/c"]
    assert len(list((tmp_path / launched.DIR_NAME).glob("*.json"))) == 2


def test_a_failed_launch_takes_no_place(tmp_path: Path) -> None:
    heats = LaunchedHeats(tmp_path, lambda heat_dir: True)
    with pytest.raises(RuntimeError), heats.claim("/w/a", 1):
        raise RuntimeError("Heat did not start")
    assert heats.running() == []
    heats.check(1)


def test_zero_refuses_every_launch(tmp_path: Path) -> None:
    with pytest.raises(exceptions.TooManyLaunchedHeats, match="launched_heats_max = 0"):
        LaunchedHeats(tmp_path, lambda heat_dir: True).check(0)


def test_limit_of_a_configuration() -> None:
    conf = config.new_conf()
    assert launched.limit(conf) == 2
    conf.set_override("launched_heats_max", 5, group="api")
    assert launched.limit(conf) == 5
