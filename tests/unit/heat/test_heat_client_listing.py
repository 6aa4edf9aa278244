"""A resource listing that meets Heat's transient 404 is asked again; others are not.
A look at a followed stack that Heat does not answer in time is asked again."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.heat import client as heat_client

TRANSIENT = ("Heat refused GET /stacks/oc/1/resources: HTTP 404 NotFound: "
             "ResourcePropertiesData with id {} not found")


class _Answers(heat_client.HeatClient):
    """A client whose calls answer from a list (an exception is raised)."""

    def __init__(self, answers: list[Any]) -> None:
        super().__init__("http://127.0.0.1:1/v1/admin")
        self.answers, self.calls = answers, 0

    def _call(self, method: str, path: str, body: Any = None,
              missing_ok: bool = False) -> Any:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


waits: list[float] = []


@pytest.fixture(autouse=True)
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    waits.clear()
    monkeypatch.setattr(heat_client.time, "sleep", waits.append)


def test_a_transient_404_is_asked_again() -> None:
    client = _Answers([exceptions.HeatError(TRANSIENT), exceptions.HeatError(TRANSIENT),
                       {"resources": [{"resource_name": "TripleODeployment"}]}])
    assert client.resources("oc", "1", resource_name="TripleODeployment") == [
        {"resource_name": "TripleODeployment"}]
    assert client.calls == 3


def test_it_gives_up_after_its_attempts() -> None:
    client = _Answers([exceptions.HeatError(TRANSIENT)] * heat_client.LISTING_ATTEMPTS)
    with pytest.raises(exceptions.HeatError, match="ResourcePropertiesData"):
        client.resources("oc", "1")
    assert client.calls == heat_client.LISTING_ATTEMPTS
    # Longer waits each time, capped; tens of seconds in all (a busy Heat's purge
    # after an update outlasted five tries a second apart in CI).
    assert waits == sorted(waits) and waits[0] == heat_client.LISTING_DELAY
    assert max(waits) == heat_client.LISTING_MAX_DELAY
    assert 30 <= sum(waits) <= 60


def test_any_other_error_is_raised_at_once() -> None:
    client = _Answers([exceptions.HeatError("Heat refused GET ...: HTTP 404 Stack not found"),
                       {"resources": []}])
    with pytest.raises(exceptions.HeatError, match="Stack not found"):
        client.resources("oc", "1")
    assert client.calls == 1


def _timeout(cause: BaseException) -> exceptions.HeatError:
    error = exceptions.HeatError("Heat at http://127.0.0.1:1/v1/admin does not answer")
    error.__cause__ = cause
    return error


@pytest.mark.parametrize("cause", [TimeoutError("timed out"),
                                   heat_client.urllib.error.URLError(TimeoutError())])
def test_a_followed_stack_heat_answers_late_is_looked_at_again(cause: BaseException) -> None:
    client = _Answers([_timeout(cause), _listed("UPDATE_COMPLETE"), _stack("UPDATE_COMPLETE")])
    assert client.wait("oc")["stack_status"] == "UPDATE_COMPLETE"
    assert client.calls == 3


@pytest.mark.parametrize("error", [
    _timeout(ConnectionRefusedError()),  # Heat is gone: no use asking again
    exceptions.HeatError("Heat refused GET /stacks/oc: HTTP 500"),
])
def test_other_errors_stop_the_wait(error: exceptions.HeatError) -> None:
    client = _Answers([error])
    with pytest.raises(exceptions.HeatError):
        client.wait("oc")
    assert client.calls == 1


def _listed(status: str) -> dict[str, Any]:
    return {"stacks": [{"id": "1", "stack_status": status}]}


def _stack(status: str) -> dict[str, Any]:
    return {"stack": {"id": "1", "stack_status": status}}


def test_a_followed_stack_is_read_whole_only_once_it_ended(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The status alone is looked at every ``poll`` (the end is seen ``poll`` seconds
    after it); progress gets that look at once and every ``interval``, and the whole
    stack once it ended: while it is created the stack is never read whole (each read
    resolves its outputs in the engine that creates it)."""
    clock = [0.0]

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(heat_client.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(heat_client.time, "sleep", sleep)
    client = _Answers([
        _listed("CREATE_IN_PROGRESS"),                                 # 0 s: reported
        *[_listed("CREATE_IN_PROGRESS")] * 3,                          # 0.5, 1.0, 1.5 s
        _listed("CREATE_IN_PROGRESS"),                                 # 2 s: reported
        _listed("CREATE_COMPLETE"), _stack("CREATE_COMPLETE")])        # 2.5 s: read whole
    reported: list[dict[str, Any]] = []
    stack = client.wait("oc", reported.append, interval=2.0, poll=0.5)
    assert stack == _stack("CREATE_COMPLETE")["stack"]
    assert client.answers == [] and client.calls == 7
    assert reported == [_listed("CREATE_IN_PROGRESS")["stacks"][0]] * 2 + [stack]
    assert waits == [0.5] * 5 and clock[0] == 2.5


def test_a_followed_stack_that_disappears_is_an_error() -> None:
    client = _Answers([_listed("UPDATE_IN_PROGRESS"), {"stacks": []}])
    with pytest.raises(exceptions.HeatError, match="disappeared"):
        client.wait("oc", poll=0.5)
    assert client.answers == []
