"""Small helpers shared by the command modules (formatting only)."""

from __future__ import annotations

import datetime
import json
from typing import Any

from tripleo_flow.cli.common import parse_assignments, read_yaml_file


def when(timestamp: float | None) -> str:
    if timestamp is None:
        return ""
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).isoformat(
        timespec="seconds")


def data(value: Any) -> str:
    """A value as one JSON line (for tables)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def parse_inputs(pairs: list[str], files: list[str], limits: Any = None) -> dict[str, Any]:
    """``--input-file`` mappings then ``--input k=v`` pairs (values read as YAML).

    :param limits: the ``[limits]`` group of the configuration (its defaults when None).
    """
    from tripleo_flow import exceptions

    result: dict[str, Any] = {}
    for path in files:
        loaded = read_yaml_file(path, limits)
        if not isinstance(loaded, dict):
            raise exceptions.InvalidInput(f"Input file {path!r} must hold a mapping.")
        result.update(loaded)
    result.update(parse_assignments(pairs, limits))
    return result
