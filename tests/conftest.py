"""Shared pytest configuration: fixture plugins for every test package."""

pytest_plugins = ["tests.fixtures_swift"]
