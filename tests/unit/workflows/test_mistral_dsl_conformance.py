"""Conformance with Mistral (issue 26): the DSL's policies, clauses and records.

Each test runs, on the real engine, a workflow taken from the Mistral test its
docstring names (mistral/tests/unit/engine/... or lang/v2/...) and asserts the
outcome that test asserts.  Where ours differs on purpose, the docstring says so.
Error and join semantics: ``test_mistral_conformance.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.workflows.test_mistral_conformance import ErrorOrResult, Run
from tripleo_flow.core import secrets


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", {**ACTIONS, "test.error_or_result": ErrorOrResult})
    yield host
    host.close_workflows()


# -- execution records: ordinary data is kept, secrets are masked --------------

def test_ordinary_keys_are_recorded_as_they_are(host: Host, tmp_path: Path) -> None:
    """Ported from test_dataflow.py (dicts such as ``key1: value2`` published and
    returned): the record keeps ordinary data; a password is still masked."""
    run = Run(host, tmp_path, """
        wf:
          output:
            result: <% $.data %>
            admin_password: <% $.pw %>
          tasks:
            task1:
              action: std.echo
              input:
                output:
                  key1: value2
                  cache_key: k-1
                  KeystoneFernetKey0: fernet-value-0
              publish:
                data: <% task().result %>
                pw: sekrit-value
        """)
    assert run.state == "SUCCESS"
    assert run.output == {"result": {"key1": "value2", "cache_key": "k-1",
                                     "KeystoneFernetKey0": secrets.MASK},
                          "admin_password": secrets.MASK}
    assert run.published["task1"]["data"]["key1"] == "value2"
    assert run.results["task1"]["key1"] == "value2"
