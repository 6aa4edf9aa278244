"""Run a Heat service (``all``, ``engine`` or ``api``) without two waits that serve
nothing on an ephemeral Heat: the convergence engine's leaf pacing and oslo.messaging's
half-second wait for an RPC reply.

Run by the *Heat virtualenv's* interpreter as a script (it imports nothing of
tripleo-flow): ``python unpaced.py all|engine|api [--paced] [--slow-replies] --config-file
FILE``.

**Leaf pacing** (``all``, ``engine``).  Heat's convergence engine starts a stack by
sending ``check_resource`` for each leaf of the stack's graph, and waits one second
after each (``converge_stack`` in ``heat/engine/stack.py``, ``if scheduler.ENABLE_SLEEP:
eventlet.sleep(1)``): a stack with 30 independent resources spends 30 s just starting
them, and every nested stack pays it again.  On an ephemeral Heat serving one
deployment that wait protects nothing (the checks it spreads are the same greenthread
casts on the same machine), so this runner gives ``heat.engine.stack`` a view of
``heat.engine.scheduler`` whose ``ENABLE_SLEEP`` is false.  The scheduler's own polling
sleeps (``TaskRunner``), which read the real module, are untouched.  ``--paced`` keeps
it (``[heat] pace_leaves = true``).

**RPC replies** (every service; only the RabbitMQ transport of the ``processes`` type
uses them).  oslo.messaging waits for the reply to an RPC call (heat-api asking
heat-engine for anything, an engine asking another to create a nested stack) by
looking for it and sleeping half a second between looks (``ReplyWaiters.get`` in
``oslo_messaging/_drivers/amqpdriver.py``): every call takes at least 0.5 s however
soon the reply arrives.  This runner looks again after 1 ms, then twice as long each
time up to that same 0.5 s (:func:`pauses`): a reply is taken within about its own
time, and a long call is still looked for twice a second.  Non-blocking looks as
oslo.messaging's own (it avoids a blocking queue read on purpose).  ``--slow-replies``
keeps oslo.messaging's wait (``[heat] quick_rpc_replies = false``).

**Start when told** (``--start-when FILE``).  Importing a Heat service takes a
couple of seconds of CPU; the ``processes`` launcher starts heat-api and heat-engine
while its MariaDB and RabbitMQ are still starting, and this runner imports the
service, then waits until ``FILE`` exists (the launcher writes it once the database
has its schema and the broker takes connections) before the service starts for
real.  heat-engine goes further ahead: it reads its configuration and loads its
plugins and resource types (a second or two of CPU more, none of it touching the
database or the broker) and waits where it would fork its workers, at oslo.service's
``launch`` (:func:`launch_when`).  It gives up, exit 3, when no ``FILE`` comes within
:data:`START_TIMEOUT` seconds (a launcher killed meanwhile).

Everything else is Heat's own, and the stack Heat creates is the same.
"""

import importlib
import os
import sys
import time
import types
from collections.abc import Iterator
from typing import Any

SERVICES = {"all": "heat.cmd.all", "engine": "heat.cmd.engine", "api": "heat.cmd.api"}
#: The services with a convergence engine (leaf pacing).
ENGINES = ("all", "engine")
PACED = "--paced"
SLOW_REPLIES = "--slow-replies"
START_WHEN = "--start-when"
#: How long a service started ahead waits for its start file (seconds).
START_TIMEOUT = 600.0
#: The first and the longest pause between two looks for an RPC reply (the longest
#: is oslo.messaging's own, fixed, pause).
FIRST_PAUSE = 0.001
LONGEST_PAUSE = 0.5


class _SchedulerView(types.ModuleType):
    """``heat.engine.scheduler`` as ``heat.engine.stack`` sees it: leaf pacing off."""

    ENABLE_SLEEP = False

    def __init__(self, real: types.ModuleType) -> None:
        super().__init__(real.__name__, real.__doc__)
        self._real = real

    def __getattr__(self, name: str) -> object:  # anything but ENABLE_SLEEP: the real module's
        return getattr(self._real, name)


def pauses() -> Iterator[float]:
    """The pauses between looks for an RPC reply: from :data:`FIRST_PAUSE`, doubled each
    time, up to :data:`LONGEST_PAUSE`."""
    pause = FIRST_PAUSE
    while True:
        yield pause
        pause = min(pause * 2, LONGEST_PAUSE)


def quick_replies() -> str | None:
    """Make oslo.messaging's wait for an RPC reply look again soon (:func:`pauses`); the
    reason when this oslo.messaging has no such wait to change."""
    import queue

    import oslo_messaging
    from oslo_messaging._drivers import amqpdriver
    from oslo_utils import timeutils

    waiters: Any = getattr(amqpdriver, "ReplyWaiters", None)
    if waiters is None or not callable(getattr(waiters, "get", None)):
        return "oslo_messaging._drivers.amqpdriver.ReplyWaiters.get is gone"

    def get(self: Any, msg_id: str, timeout: float) -> Any:
        """The reply to ``msg_id`` (oslo.messaging's contract: MessagingTimeout after
        ``timeout`` seconds), looked for after each of :func:`pauses`."""
        watch = timeutils.StopWatch(duration=timeout)
        watch.start()
        waits = pauses()
        while not watch.expired():
            try:
                return self._queues[msg_id].get(block=False)
            except queue.Empty:
                time.sleep(next(waits))
        raise oslo_messaging.MessagingTimeout(
            f"Timed out waiting for a reply to message ID {msg_id}")

    waiters.get = get
    return None


def wait_for(path: str, timeout: float = START_TIMEOUT) -> bool:
    """Whether ``path`` came to exist within ``timeout`` seconds (looked for every 20 ms)."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in SERVICES:
        sys.stderr.write(f"usage: {sys.argv[0]} {'|'.join(SERVICES)} [{PACED}] "
                         f"[{SLOW_REPLIES}] [{START_WHEN} FILE] [heat options]\n")
        return 2
    service = sys.argv.pop(1)
    flags = set()
    start_when = None
    while len(sys.argv) > 1 and sys.argv[1] in (PACED, SLOW_REPLIES, START_WHEN):
        flag = sys.argv.pop(1)
        if flag == START_WHEN:
            if len(sys.argv) < 2:
                sys.stderr.write(f"{START_WHEN} needs a file.\n")
                return 2
            start_when = sys.argv.pop(1)
        flags.add(flag)
    command = importlib.import_module(SERVICES[service])  # monkey-patches eventlet first
    changed = []
    if service in ENGINES and PACED not in flags:
        stack: Any = importlib.import_module("heat.engine.stack")
        scheduler: Any = getattr(stack, "scheduler", None)
        if not hasattr(scheduler, "ENABLE_SLEEP"):
            sys.stderr.write("This Heat has no heat.engine.scheduler.ENABLE_SLEEP: leaf "
                             "pacing cannot be turned off; set [heat] pace_leaves = true.\n")
            return 2
        stack.scheduler = _SchedulerView(scheduler)
        changed.append("leaf pacing off")
    if SLOW_REPLIES not in flags:
        reason = quick_replies()
        if reason is not None:
            sys.stderr.write(f"RPC replies cannot be looked for sooner ({reason}); set "
                             "[heat] quick_rpc_replies = false.\n")
            return 2
        changed.append("quick RPC replies")
    sys.argv[0] = f"heat-{service}"
    sys.stderr.write(f"tripleo-flow: heat-{service} with {', '.join(changed) or 'no change'}\n")
    if start_when is not None and not (service in ENGINES
                                       and launch_when(command, service, start_when)):
        if not started(service, start_when):
            return 3
    return command.main() or 0


def started(service: str, start_when: str) -> bool:
    """Wait for the start file ``start_when`` of ``service``; whether it came."""
    if not wait_for(start_when):
        sys.stderr.write(f"tripleo-flow: {start_when} did not appear within "
                         f"{START_TIMEOUT:g} s: heat-{service} not started.\n")
        return False
    sys.stderr.write(f"tripleo-flow: heat-{service} starts ({start_when})\n")
    return True


def launch_when(command: Any, service: str, start_when: str) -> bool:
    """Make the ``launch`` of oslo.service that ``command`` (``heat.cmd.engine``) calls
    once its configuration, plugins and resource types are loaded wait for the start
    file first (exit 3 when it does not come); False when ``command`` has no such call."""
    module = getattr(command, "service", None)
    real = getattr(module, "launch", None)
    if not callable(real):
        return False

    def launch(*args: Any, **kwargs: Any) -> Any:
        if not started(service, start_when):
            sys.exit(3)
        return real(*args, **kwargs)

    module.launch = launch  # type: ignore[union-attr]
    return True


if __name__ == "__main__":
    sys.exit(main())
