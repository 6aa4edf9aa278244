"""Who runs an operation: host, pid and process start time, and whether it still runs.

A deployment records its owner in the plan's deployment status so a record
left DEPLOYING by a crashed process can be told from one still running.  The
start time (``/proc/<pid>/stat`` field 22) guards against a recycled pid.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RUNNING, GONE, UNKNOWN = "running", "gone", "unknown"


def start_ticks(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot (None when it does not exist)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in ("Z", "X"):  # exited, not reaped yet
        return None
    return int(fields[19])


def current() -> dict[str, Any]:
    """This process as an owner record."""
    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "started": start_ticks(pid)}


def liveness(owner: Mapping[str, Any] | None) -> str:
    """``running``, ``gone`` or ``unknown`` (no owner recorded, or another host's)."""
    if not owner or not owner.get("pid") or owner.get("host") != socket.gethostname():
        return UNKNOWN
    started = start_ticks(int(owner["pid"]))
    if started is None:
        return GONE
    recorded = owner.get("started")
    return RUNNING if recorded is None or recorded == started else GONE


def describe(owner: Mapping[str, Any] | None) -> str:
    """``pid 123 on host-a`` (or ``an unrecorded process``)."""
    if not owner or not owner.get("pid"):
        return "an unrecorded process"
    return f"pid {owner['pid']} on {owner.get('host', '?')}"


__all__ = ["GONE", "RUNNING", "UNKNOWN", "current", "describe", "liveness", "start_ticks"]
