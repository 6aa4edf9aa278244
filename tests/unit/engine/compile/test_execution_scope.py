"""What a resumed execution's :class:`Scope` rebuilds from its persisted outcomes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from taskflow import states

from tripleo_flow.engine.compile import execution_scope


@dataclass
class _Detail:  # the three fields of a TaskFlow atom detail that attach() reads
    name: str
    state: str
    results: Any


class _Engine:
    storage = None

    def suspend(self) -> None:
        raise AssertionError("not called")


def _attached(details: list[_Detail]) -> execution_scope.Scope:
    scope = execution_scope.Scope()
    scope.attach(_Engine(), details, [d.name for d in details])
    return scope


def test_a_resumed_execution_knows_the_workflows_succeed_ended() -> None:
    scope = _attached([
        _Detail("call/first", states.SUCCESS, {"state": "SUCCESS",
                                                execution_scope.ENDED: "call/"}),
        _Detail("other", states.SUCCESS, {"state": "SUCCESS"}),
    ])
    assert scope.ended("call/") and scope.ended("call/deeper/")
    assert not scope.ended("") and not scope.ended("caller/")


def test_an_ended_top_level_ends_everything_and_globals_come_back_in_order() -> None:
    scope = _attached([
        _Detail("late", states.SUCCESS, {execution_scope.GLOBAL: {"x": 2}, "finished_at": 2.0,
                                          execution_scope.ENDED: ""}),
        _Detail("early", states.SUCCESS, {execution_scope.GLOBAL: {"x": 1}, "finished_at": 1.0}),
        _Detail("running", states.RUNNING, None),
        _Detail("failed", states.FAILURE, {execution_scope.ENDED: ""}),
    ])
    assert scope.ended("") and scope.ended("any/sub/")
    assert scope.get_global("x") == 2
    assert scope.interrupted == frozenset({"running"})


def test_nothing_ended_without_a_succeed() -> None:
    scope = _attached([_Detail("a", states.SUCCESS, {"state": "SUCCESS"}),
                       _Detail("b", states.FAILURE, {execution_scope.ENDED: ""})])
    assert not scope.ended("")
