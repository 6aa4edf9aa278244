"""A workflow execution's input too large to keep is refused before it is recorded
(issue 29: a 7 MB parameter value, under ``[api] max_json_size``, was recorded and
only then failed, growing the executions database ~50 MB a request)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.functional.http.conftest import Api, running_api
from tripleo_flow import exceptions
from tripleo_flow.config import LIMITS_OPTS

UPDATE = "/v1/workflows/tripleo.parameters.update_parameters/executions"
RESET = "/v1/workflows/tripleo.parameters.reset_parameters/executions"
PARAMETERS_LIMIT = next(o.default for o in LIMITS_OPTS if o.name == "parameters_max_size")
INPUT_LIMIT = next(o.default for o in LIMITS_OPTS if o.name == "input_max_size")


def _db_size(api: Api) -> int:
    data = Path(api.client.data_dir)
    return sum(f.stat().st_size for f in data.glob("executions.sqlite*")
               if not f.name.endswith("-shm"))


def _ids(api: Api) -> list[str]:
    return [e["id"] for e in api("GET", "/v1/executions", params={"limit": 1000}).json()]


def _refused(api: Api, path: str, body: dict[str, object], option: str) -> None:
    """``body`` posted to ``path`` gets 400 naming ``option``, and nothing is written."""
    ids, before = _ids(api), _db_size(api)
    answer = api("POST", path, json=body)
    assert answer.status_code == 400, answer.text[:300]
    assert option in answer.json()["error"]["message"], answer.text[:300]
    assert _ids(api) == ids
    assert _db_size(api) == before


def test_inputs_too_large_to_keep_are_refused_before_the_record(tmp_path: Path) -> None:
    with running_api(tmp_path) as api:
        assert api.client.conf.limits.input_max_size == INPUT_LIMIT
        assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}) \
            .status_code == 201
        # a value over the workflow's own limit, well within the JSON body limit
        _refused(api, UPDATE, {"input": {"plan": "p", "parameters": {
            "NtpServer": "x" * (PARAMETERS_LIMIT + 1000)}}}, "[limits] parameters_max_size")
        _refused(api, UPDATE, {"input": {"plan": "p", "parameters": {
            "NtpServer": "x" * (7 << 20)}}}, "[limits] input_max_size")
        # any workflow: an input, or an environment, past [limits] input_max_size
        _refused(api, RESET, {"input": {"plan": "p", "names": ["x" * INPUT_LIMIT]}},
                 "[limits] input_max_size")
        _refused(api, RESET, {"input": {"plan": "p"}, "env": {"big": "x" * INPUT_LIMIT}},
                 "[limits] input_max_size")
        # counted as stored: a non-ASCII character is written as 6 bytes
        _refused(api, RESET, {"input": {"plan": "p", "names": ["\u20ac" * (INPUT_LIMIT // 5)]}},
                 "[limits] input_max_size")
        # a user environment file over the limit its action keeps
        _refused(api, "/v1/workflows/tripleo.plan.add_environments/executions",
                 {"input": {"plan": "p", "user_environments": [
                     {"name": "big.yaml", "files": {"big.yaml": "x" * (PARAMETERS_LIMIT + 10)}}]}},
                 "[limits] parameters_max_size")
        # the largest value still goes through
        started = api("POST", UPDATE, json={"input": {"plan": "p", "parameters": {
            "NtpServer": "y" * (PARAMETERS_LIMIT - 100)}}})
        assert started.status_code == 202, started.text[:300]

        # the Python API (and the CLI through it) refuses the same, nothing recorded
        ids = _ids(api)
        with pytest.raises(exceptions.InvalidInput, match=r"\[limits\] input_max_size"):
            api.client.executions.create("tripleo.parameters.reset_parameters",
                                         {"plan": "p", "names": ["x" * INPUT_LIMIT]})
        assert _ids(api) == ids


def test_the_limit_is_an_option(tmp_path: Path) -> None:
    with running_api(tmp_path, {"limits": {"input_max_size": 1000}}) as api:
        assert api("POST", "/v1/plans", params={"name": "p", "sample": "true"}) \
            .status_code == 201
        _refused(api, RESET, {"input": {"plan": "p", "names": ["x" * 1000]}},
                 "[limits] input_max_size")
        assert api("POST", RESET, json={"input": {"plan": "p", "names": ["x" * 900]}}) \
            .status_code == 202
