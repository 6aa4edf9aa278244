"""Strict JSON in, valid JSON out: the API's falcon media handler.

Request bodies are refused (400) when they hold what Python's :mod:`json` accepts
but JSON does not, or what would break a later answer once stored
(:func:`tripleo_flow.common.jsonvalues.loads`, within ``[limits] yaml_max_depth``
and ``yaml_max_nodes``); answers are written by
:func:`tripleo_flow.common.jsonvalues.dumps`, which never fails on a stored value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from falcon import media

from tripleo_flow.common.jsonvalues import dumps, fields, loads

__all__ = ["dumps", "execution", "fields", "handler", "loads", "task"]


def execution(record: Any) -> dict[str, Any]:
    """An execution as the API shows it: its error in the API's words (its next steps
    as this API's requests, also listed in ``hints``)."""
    body = fields(record)
    api_error = body.pop("error_api", None)
    if api_error:
        body["error"] = api_error
    body["hints"] = body.get("hints") or []
    return body


def task(record: Any) -> dict[str, Any]:
    """A task record as the API shows it: its error in the API's words."""
    body = fields(record)
    api_error = body.pop("error_api", None)
    if api_error:
        body["error"] = api_error
    return body


def handler(max_depth: int = 100, max_nodes: int = 1_000_000,
            redact: Callable[[bytes], bytes] = lambda data: data) -> media.JSONHandler:
    """The falcon JSON handler with :func:`loads` and :func:`dumps` at these limits;
    every answer passes through ``redact`` (the server paths' labels, see
    :mod:`tripleo_flow.common.path_redaction`)."""
    return media.JSONHandler(
        dumps=lambda value: redact(dumps(value, max_depth)),
        loads=lambda text: loads(text, max_depth, max_nodes))
