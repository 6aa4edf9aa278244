"""The ephemeral Heat's container images, built by the test command while the tests run.

Building the images (``tripleo-flow heat image build``: a Debian rootfs, the Heat image,
the MariaDB and RabbitMQ image) takes 5-9 minutes on a new machine, mostly downloads.
``tools/run-tests.sh`` starts it in the background once Heat's virtualenv is there and
says where it writes its outcome (``TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS``: ``ok`` or
``failed``; the log beside it in ``TRIPLEO_FLOW_TEST_HEAT_IMAGES_LOG``). This plugin runs
the few tests that need the images (those using the ``heat_image`` fixture) after the
others, and the fixture waits for that outcome. Without the variable (images built by
hand, or by ``tools/setup-heat.sh`` in the foreground) nothing waits.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

#: How long the fixture waits for the background build (measured 5-9 min; generous
#: because the tests and the overcloud deployments share the two cores with it).
WAIT_SECONDS = 2700.0


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    if not os.environ.get("TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS"):
        return
    needs = [i for i in items if "heat_image" in getattr(i, "fixturenames", ())]
    if needs:  # stable: the others keep their order, these follow them
        items[:] = [i for i in items if i not in needs] + needs


def wait_for_images() -> None:
    """Return once the background image build succeeded; FAIL the test with its log when
    it failed or did not finish in ``WAIT_SECONDS``."""
    status = os.environ.get("TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS")
    if not status:
        return
    path, log = Path(status), Path(os.environ.get("TRIPLEO_FLOW_TEST_HEAT_IMAGES_LOG", "-"))
    deadline = time.monotonic() + WAIT_SECONDS
    while not path.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"The Heat images were not built in {WAIT_SECONDS:.0f} s:\n"
                        f"{_tail(log)}", pytrace=False)
        time.sleep(2.0)
    outcome = path.read_text().strip()
    if outcome != "ok":
        pytest.fail(f"Building the Heat images failed ({outcome}):\n{_tail(log)}",
                    pytrace=False)


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-4000:] if log.is_file() else f"(no log at {log})"
