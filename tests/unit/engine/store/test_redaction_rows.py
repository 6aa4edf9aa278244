"""Rows the execution backend writes are JSON whatever an exception carries."""

from __future__ import annotations

import json

import yaml
from taskflow.types import failure

from tripleo_flow.engine.store.redaction import Redactor


def test_a_failure_with_objects_in_its_arguments_becomes_json() -> None:
    try:
        yaml.safe_load("a: [\n")
    except yaml.YAMLError as exc:
        try:
            raise ValueError("bad template", exc.problem_mark) from exc
        except ValueError:
            caught = failure.Failure()
    row = {"name": "t", "failure": caught.to_dict(), "revert_failure": caught.to_dict(),
           "results": {"ok": 1}}
    stored = Redactor().atom_row(row)
    json.dumps(stored)  # raised TypeError on the yaml Mark before
    assert "bad template" in stored["failure"]["exception_str"]
    assert any("line 2" in str(arg) for arg in stored["failure"]["exc_args"])  # as text
    assert stored["results"] == {"ok": 1}
