"""Small helpers shared by the command modules (formatting only)."""

from __future__ import annotations

import datetime
import json
from typing import Any

import yaml

from tripleo_flow.cli.common import parse_assignments


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


def parse_inputs(pairs: list[str], files: list[str]) -> dict[str, Any]:
    """``--input-file`` mappings then ``--input k=v`` pairs (values read as YAML)."""
    from tripleo_flow import exceptions

    result: dict[str, Any] = {}
    for path in files:
        try:
            with open(path, encoding="utf-8") as handle:
                loaded = yaml.safe_load(handle)
        except (OSError, yaml.YAMLError) as exc:
            raise exceptions.InvalidInput(f"Cannot read input file {path!r}: {exc}") from exc
        if not isinstance(loaded, dict):
            raise exceptions.InvalidInput(f"Input file {path!r} must hold a mapping.")
        result.update(loaded)
    result.update(parse_assignments(pairs))
    return result
