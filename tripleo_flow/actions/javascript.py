"""Mistral's ``std.javascript`` (also ``std.js``): a script run on V8 embedded in the
process (PyPI's ``mini-racer``, the ``javascript`` extra), with ``$`` bound to the
``context`` given, as Mistral's.

V8 alone reaches no file, process or network (no Node.js APIs), so the action is
not gated for HTTP API users; a script runs at most :data:`TIMEOUT` seconds and
:data:`MAX_MEMORY` bytes of heap.  It changes nothing a revert could undo.
"""

from __future__ import annotations

import json
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.exceptions import ActionFailed

#: Seconds a script may run.
TIMEOUT = 60.0
#: Bytes of V8 heap a script may use.
MAX_MEMORY = 256 * 1024 * 1024


class JavaScript(Action):
    """Run ``script`` as the body of a function (its ``return`` is the result) with
    ``$`` set to ``context``; the result comes back as JSON data."""

    rerun = Rerun.READS

    def execute(self, script: str, context: Any = None) -> Any:
        if not isinstance(script, str):
            raise exceptions.InvalidInput("std.javascript 'script' must be text.")
        try:
            from py_mini_racer import MiniRacer
        except ImportError as exc:
            raise ActionFailed("std.javascript needs the embedded V8 engine: install "
                               "tripleo-flow[javascript] (mini-racer)") from exc
        try:
            data = json.dumps(context)
        except (TypeError, ValueError) as exc:
            raise exceptions.InvalidInput(
                f"std.javascript 'context' must be JSON data: {exc}") from exc
        code = (f"var $ = {data};\nJSON.stringify((function () {{\n{script}\n}})())")
        engine = MiniRacer()
        try:
            text = engine.eval(code, timeout_sec=TIMEOUT, max_memory=MAX_MEMORY)
        except Exception as exc:  # the engine's own errors: syntax, throw, timeout, memory
            # Not chained: a timeout's cause is a CancelledError, which TaskFlow cannot
            # record (a BaseException).
            raise ActionFailed(f"std.javascript failed: {type(exc).__name__}: "
                               f"{str(exc).strip()[:500]}") from None
        finally:
            engine.close()  # left to the garbage collector, V8 hangs the exit
        return None if text is None or not isinstance(text, str) else json.loads(text)


class Js(JavaScript):
    """``std.js``: Mistral's other name of ``std.javascript``."""
