"""Run a Heat service (``all`` or ``engine``) with its convergence engine's leaf pacing off.

Run by the *Heat virtualenv's* interpreter as a script (it imports nothing of
tripleo-flow): ``python unpaced.py all|engine --config-file FILE``.

Heat's convergence engine starts a stack by sending ``check_resource`` for each
leaf of the stack's graph, and waits one second after each (``converge_stack`` in
``heat/engine/stack.py``, ``if scheduler.ENABLE_SLEEP: eventlet.sleep(1)``): a
stack with 30 independent resources spends 30 s just starting them, and every
nested stack pays it again.  On an ephemeral Heat serving one deployment that wait
protects nothing (the checks it spreads are the same greenthread casts on the same
machine), so this runner gives ``heat.engine.stack`` a view of ``heat.engine.scheduler``
whose ``ENABLE_SLEEP`` is false.  Everything else is Heat's own: the scheduler's
polling sleeps (``TaskRunner``), which read the real module, are untouched, and the
stack Heat creates is the same.  ``[heat] pace_leaves = true`` runs Heat's own
``heat-all``/``heat-engine`` instead.
"""

import importlib
import sys
import types
from typing import Any

SERVICES = {"all": "heat.cmd.all", "engine": "heat.cmd.engine"}


class _SchedulerView(types.ModuleType):
    """``heat.engine.scheduler`` as ``heat.engine.stack`` sees it: leaf pacing off."""

    ENABLE_SLEEP = False

    def __init__(self, real: types.ModuleType) -> None:
        super().__init__(real.__name__, real.__doc__)
        self._real = real

    def __getattr__(self, name: str) -> object:  # anything but ENABLE_SLEEP: the real module's
        return getattr(self._real, name)


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in SERVICES:
        sys.stderr.write(f"usage: {sys.argv[0]} {'|'.join(SERVICES)} [heat options]\n")
        return 2
    service = sys.argv.pop(1)
    command = importlib.import_module(SERVICES[service])  # monkey-patches eventlet first
    stack: Any = importlib.import_module("heat.engine.stack")
    scheduler: Any = getattr(stack, "scheduler", None)
    if not hasattr(scheduler, "ENABLE_SLEEP"):
        sys.stderr.write("This Heat has no heat.engine.scheduler.ENABLE_SLEEP: leaf "
                         "pacing cannot be turned off; set [heat] pace_leaves = true.\n")
        return 2
    stack.scheduler = _SchedulerView(scheduler)
    sys.argv[0] = f"heat-{service}"
    sys.stderr.write(f"tripleo-flow: heat-{service} with leaf pacing off\n")
    return command.main() or 0


if __name__ == "__main__":
    sys.exit(main())
