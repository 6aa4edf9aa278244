"""Crash points: where the crash tests kill a plan change or a Heat teardown with SIGKILL.

The tests run real ``tripleo-flow`` processes with ``TRIPLEO_FLOW_TEST_CRASH_AT``
set to a point name (``plan.create:uploaded``, ``heat.kill:dumped``) or to an upload fraction
(``upload:0.5``: the first many-object upload of the process, once half of its
bytes are written); the process kills itself there, as ``kill -9`` would.
Without the variable (always, outside tests) these calls do nothing.
"""

from __future__ import annotations

import os
import signal

ENV = "TRIPLEO_FLOW_TEST_CRASH_AT"


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def reached(point: str) -> None:
    """Die here when the crash point is ``point``."""
    if os.environ.get(ENV) == point:
        _die()


def uploaded(done: int, total: int) -> None:
    """Die when an ``upload:<fraction>`` crash point is reached by ``done`` of ``total`` bytes."""
    spec = os.environ.get(ENV, "")
    if not spec.startswith("upload:") or total <= 0:
        return
    try:
        fraction = float(spec.split(":", 1)[1])
    except ValueError:
        return
    if done >= fraction * total:
        _die()
