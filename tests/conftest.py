"""Shared pytest configuration: the fixture plugins of every area.

Tests that only need some Heat run the one that starts soonest, ``native`` (one
heat-all on SQLite), rather than the product's default ``processes`` (a MariaDB, a
RabbitMQ and five Heat processes to start): oslo.config reads ``[heat] heat_type`` from
``OS_HEAT__HEAT_TYPE`` (over a config file; a set_override or --heat-type still wins),
and the CLI subprocesses of the tests inherit it.  Tests of the default itself remove it.
"""

import os

os.environ.setdefault("OS_HEAT__HEAT_TYPE", "native")

pytest_plugins = ["tests.fixtures_plans", "tests.fixtures_services", "tests.fixtures_swift",
                  "tests.fixtures_keystone", "tests.fixtures_ironic",
                  "tests.fuzz_report", "tests.overcloud_background", "tests.heat_images",
                  "tests.second_lane"]

# The errors' next steps in the interfaces' words, as the CLI and the HTTP API register
# them when they start (a test runs the API in this process without either).
from tripleo_flow.http import hint_words  # noqa: E402

hint_words.install()
