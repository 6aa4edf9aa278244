"""Shared pytest configuration: the fixture plugins of every area."""

pytest_plugins = ["tests.fixtures_plans", "tests.fixtures_services", "tests.fixtures_swift",
                  "tests.fixtures_keystone", "tests.fixtures_ironic",
                  "tests.fuzz_report", "tests.overcloud_background", "tests.heat_images",
                  "tests.second_lane"]
