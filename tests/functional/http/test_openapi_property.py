"""Property-based requests generated from /v1/openapi.json (schemathesis), bounded to
the read-only and idempotent routes that answer quickly (no Heat, no uploads).

``FUZZ_EXAMPLES`` x 2 cases per route (default 8), as :mod:`test_fuzz_api` counts them."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from tests.functional.http.conftest import Api, running_api
from tests.fuzz_report import count


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    with running_api(tmp_path_factory.mktemp("openapi")) as api:
        assert api("POST", "/v1/plans", params={"name": "overcloud",
                                                "sample": "true"}).status_code == 201
        yield api


@pytest.fixture(scope="module")
def openapi_schema(served: Api) -> Any:
    return schemathesis.openapi.from_url(served.url + "/v1/openapi.json")


EXAMPLES = 2 * int(os.environ.get("FUZZ_EXAMPLES", "4"))
SLOW_OR_STREAMING = re.compile(r"/(parameters/schema|events)$")


def test_read_routes_honour_their_schema(openapi_schema: Any, served: Api) -> None:
    """Every GET route: no 5xx, documented status codes, content types and bodies."""
    checked = []
    for result in openapi_schema.get_all_operations():
        operation = result.ok()
        if operation.method.upper() != "GET" or SLOW_OR_STREAMING.search(operation.path):
            continue

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow])
        def check(case: Any) -> None:
            case.call_and_validate(base_url=served.url,
                                   headers={"X-Auth-Token": served.token})
            count("openapi-schema-local")

        check()
        checked.append(operation.path)
    assert "/v1/plans/{name}/parameters" in checked and len(checked) >= 14


def test_the_document_is_valid_openapi(openapi_schema: Any) -> None:
    operations = list(openapi_schema.get_all_operations())
    assert len(operations) >= 20
    assert all(op.ok() for op in operations)
