"""Parallel requests started as a generator yields them (the checked chunks of a
plan create's upload), and a transfer meter that holds its reports back."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tripleo_flow.plans.swift_bulk import Failures
from tripleo_flow.plans.swift_conn import SwiftSession
from tripleo_flow.plans.transfer import TransferMeter


def _session() -> SwiftSession:
    return SwiftSession("http://127.0.0.1:1/auth/v1.0", "u", "k", upload_threads=4)


def test_each_item_starts_as_soon_as_it_is_yielded() -> None:
    started = {i: threading.Event() for i in range(3)}

    def items() -> Iterator[int]:
        for i in range(3):
            if i:  # item i is produced only once item i-1 runs
                assert started[i - 1].wait(30), f"item {i - 1} did not start"
            yield i

    def run(item: int) -> Failures:
        started[item].set()
        return [(f"obj{item}", "refused")] if item == 1 else []

    assert _session().parallel(run, items()) == [("obj1", "refused")]


def test_an_error_of_the_items_stops_them_and_waits_for_those_running() -> None:
    done: list[int] = []
    release = threading.Event()

    def items() -> Iterator[int]:
        yield 0
        yield 1
        release.set()
        raise ValueError("bad part")

    def run(item: int) -> Failures:
        assert release.wait(30)
        done.append(item)
        return [("x", "failed")]  # dropped: the error of the items is raised

    with pytest.raises(ValueError, match="bad part"):
        _session().parallel(run, items())
    assert sorted(done) == [0, 1]  # both finished before the error was raised


def test_a_held_meter_reports_once_released() -> None:
    heard: list[tuple[int, int]] = []
    meter = TransferMeter(100, lambda done, total: heard.append((done, total)), held=True)
    meter.at("a", 30)
    meter.at("b", 20)
    assert heard == []
    meter.release()
    meter.at("a", 50)
    assert heard == [(50, 100), (70, 100)]
