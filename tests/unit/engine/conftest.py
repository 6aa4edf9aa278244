"""The engine tests' clock and pause checks.

Every test runs the engine on a virtual clock (:mod:`tests.virtual_clock`, the
``virtual_clock`` fixture) unless marked ``real_clock``.  A pause check that found no
pause request is trusted for 0.05 s here
(:data:`~tripleo_flow.engine.store.pause_requests.CHECK_INTERVAL`, 0.25 s in the
product).  A cancel or a stop of an execution another process runs waits that
long for every engine to read its request (:func:`~tripleo_flow.engine.store.cancels.
cancel`), as a follower of such an execution polls every 0.05 s
(:class:`tests.engine_helpers.Host`); what the tests check does not depend on how
long a "no" is trusted, and the tests of that window set their own.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.virtual_clock import VirtualClock
from tripleo_flow.common import clock


@pytest.fixture(autouse=True)
def _pause_checks_trusted_briefly(monkeypatch: pytest.MonkeyPatch) -> None:
    from tripleo_flow.engine.store import pause_requests

    monkeypatch.setattr(pause_requests, "CHECK_INTERVAL", 0.05)


@pytest.fixture(autouse=True)
def virtual_clock(request: pytest.FixtureRequest) -> Iterator[VirtualClock | None]:
    """The engine's clock for the test: its waits end as soon as nothing could happen
    first (:mod:`tests.virtual_clock`), so a timeout, a ``wait-before`` or a retry's
    ``delay`` keeps its place among the events without taking its seconds.  A test
    marked ``real_clock`` waits on the real one (None)."""
    if request.node.get_closest_marker("real_clock") is not None:
        yield None
        return
    fake = VirtualClock()
    with clock.use(fake):
        fake.start()
        try:
            yield fake
        finally:
            fake.stop()
