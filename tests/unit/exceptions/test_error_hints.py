"""An error's next steps are named once (Hint) and worded by each interface: the CLI's
message names tripleo-flow commands, the HTTP API's names its own requests."""

from __future__ import annotations

import re

import pytest

from tripleo_flow import exceptions
from tripleo_flow.exceptions import operations
from tripleo_flow.http import hint_words
from tripleo_flow.http.app import ROUTES

#: Errors with hints, built as the library builds them.
SAMPLES: list[exceptions.TripleoFlowError] = [
    exceptions.PlanNotFound("oc"), exceptions.PlanExists("oc"),
    exceptions.VersionNotFound("oc", "v1"), exceptions.ActionNotFound("x.y"),
    exceptions.WorkflowNotFound("w"), exceptions.ExecutionNotFound("e1"),
    exceptions.PlanUpdateUnfinished("oc"), exceptions.ExecutionLockTimeout("e1", 3),
    exceptions.MissingParameters("oc", ["A"]), exceptions.UnknownEnvironment("oc", "x.yaml"),
    exceptions.NoKeptStack("oc", "/w"), exceptions.NodeNotFound("n1"),
    exceptions.StackNotFinished("oc", "CREATE_FAILED"),
    exceptions.StackFailed("oc", "CREATE_FAILED", "boom", []),
    exceptions.DeploymentRunning("oc", "pid 1 on h"), exceptions.DumpNotFound("/w/d.sql"),
    exceptions.HeatRunning("/w", "pid 1"), exceptions.IronicRunning("/i", "pid 1"),
    exceptions.IronicNotConfigured("/i"),
    exceptions.RestoreWouldReplace("/d", ["plans"], "/b.tar.gz"),
]


def _route(request: str) -> bool:
    """Whether ``METHOD /path[?query]`` is a route of the HTTP API with that method."""
    method, _, target = request.partition(" ")
    path = target.split("?")[0].split(" ")[0]  # words after the path: its body
    for route in ROUTES:
        pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", route.path) + "$"
        if re.match(pattern, path) and method.lower() in route.operations:
            return True
    return False


@pytest.mark.parametrize("error", SAMPLES, ids=lambda e: type(e).__name__)
def test_each_interface_words_the_next_steps_its_own_way(
        error: exceptions.TripleoFlowError) -> None:
    assert error.hints
    cli, api = str(error), error.render(exceptions.API)
    assert cli == error.render(exceptions.CLI) and cli.startswith(error.text)
    for hint in error.hints:
        command, request = hint.as_json()["command"], hint.as_json()["request"]
        assert command.startswith("tripleo-flow ") and command in cli
        if request is not None:
            assert request in api and command not in api
            assert _route(request), f"{request} is not a route of the HTTP API"
        else:  # only someone on the server can do it: the API says so
            assert operations.OPERATIONS[hint.op].server_only
            assert f"on the server: {command}" in api


@pytest.mark.parametrize("op", sorted(hint_words.REQUESTS))
def test_every_request_a_hint_names_is_a_route(op: str) -> None:
    args = {a: "x" for a in operations.OPERATIONS[op].args}
    request = hint_words.REQUESTS[op].format(**args)
    assert _route(request), f"{request} is not a route of the HTTP API"


def test_the_cli_message_is_unchanged_by_hints() -> None:
    assert str(exceptions.PlanExists("oc")) == (
        "Plan 'oc' already exists. Update it with: tripleo-flow plan update oc --templates "
        "DIR, or delete it first with: tripleo-flow plan delete oc")
    assert exceptions.PlanExists("oc").render(exceptions.API) == (
        "Plan 'oc' already exists. Update it with: PUT /v1/plans/oc, or delete it first "
        "with: DELETE /v1/plans/oc")
    plain = exceptions.Conflict("no hint here")
    assert plain.hints == () and plain.render(exceptions.API) == "no hint here"


def test_the_route_check_can_fail() -> None:
    assert _route("GET /v1/plans/oc/deployment")
    assert not _route("GET /v1/no/such/thing") and not _route("PATCH /v1/plans/oc")
