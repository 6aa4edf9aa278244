"""Quick RPC replies (tripleo_flow/heat/unpaced.py) on the Heat virtualenv's real
oslo.messaging: how often its wait for a reply looks, as shipped and as changed.

The wait is driven with a recording ``time.sleep`` (no clock is read by the test): the
reply is put in the waiter's queue at the third pause, and the pauses taken until it is
found are compared.  As shipped, oslo.messaging pauses half a second each time (so every
RPC call of heat-api or heat-engine on RabbitMQ takes at least that); changed, from 1 ms
doubling.  Should a new oslo.messaging change that wait, the first assertion says so.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tripleo_flow.heat import unpaced

pytestmark = pytest.mark.functional

SCRIPT = r"""
import importlib.util, json, sys, time
spec = importlib.util.spec_from_file_location("unpaced", sys.argv[1])
unpaced = importlib.util.module_from_spec(spec)
spec.loader.exec_module(unpaced)
from oslo_messaging._drivers import amqpdriver
import oslo_messaging

def pauses_until_found(waiters):
    taken = []
    real_sleep = time.sleep
    def sleep(seconds):
        taken.append(seconds)
        if len(taken) == 3:
            waiters.put("msg-1", {"result": "the reply"})
    time.sleep = sleep
    try:
        waiters.add("msg-1")
        reply = waiters.get("msg-1", timeout=60)
    finally:
        time.sleep = real_sleep
    return taken, reply

shipped = pauses_until_found(amqpdriver.ReplyWaiters())
reason = unpaced.quick_replies()
changed = pauses_until_found(amqpdriver.ReplyWaiters())
waiters = amqpdriver.ReplyWaiters()
waiters.add("never")
try:
    waiters.get("never", timeout=0.05)
    timeout = None
except oslo_messaging.MessagingTimeout as exc:
    timeout = str(exc)
print(json.dumps({"shipped": shipped, "reason": reason, "changed": changed,
                  "timeout": timeout}))
"""


def test_the_wait_for_a_reply_looks_again_after_a_millisecond_and_doubles(
        heat_venv: Path) -> None:
    done = subprocess.run(
        [str(heat_venv / "bin" / "python"), "-I", "-c", SCRIPT,
         unpaced.__file__],
        capture_output=True, text=True, timeout=120, check=True)
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["shipped"] == [[0.5, 0.5, 0.5], {"result": "the reply"}], found
    assert found["reason"] is None
    assert found["changed"] == [[0.001, 0.002, 0.004], {"result": "the reply"}], found
    assert "Timed out waiting for a reply to message ID never" in found["timeout"]
