"""The engine tests' pause checks: a check that found no pause request is trusted for
0.05 s here (:data:`~tripleo_flow.engine.store.pause_requests.CHECK_INTERVAL`, 0.25 s
in the product).  A cancel or a stop of an execution another process runs waits that
long for every engine to read its request (:func:`~tripleo_flow.engine.store.cancels.
cancel`), as a follower of such an execution polls every 0.05 s
(:class:`tests.engine_helpers.Host`); what the tests check does not depend on how
long a "no" is trusted, and the tests of that window set their own.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _pause_checks_trusted_briefly(monkeypatch: pytest.MonkeyPatch) -> None:
    from tripleo_flow.engine.store import pause_requests

    monkeypatch.setattr(pause_requests, "CHECK_INTERVAL", 0.05)
