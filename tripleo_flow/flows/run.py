"""Running a flow in memory for a direct API call.

Named, persisted workflow executions go through the workbook runner; this is
the short path for one synchronous operation.  A failure re-raises the error
of the task that failed, after the completed tasks have reverted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taskflow import engines
from taskflow import exceptions as tf_exceptions
from taskflow.patterns import linear_flow


def run_flow(flow: linear_flow.Flow, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Run ``flow`` with ``inputs``; return every provided value by name."""
    engine = engines.load(flow, store=dict(inputs), engine="serial")
    try:
        engine.run()
    except tf_exceptions.WrappedFailure as wrapped:
        first = next(iter(wrapped))
        first.reraise()
    return dict(engine.storage.fetch_all())
