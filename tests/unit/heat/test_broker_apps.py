"""The Erlang applications the private RabbitMQ's code path holds (pure: a made-up
plugins directory; the real broker on it: tests/functional/heat/test_processes.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tripleo_flow import exceptions
from tripleo_flow.heat import services


def _app(plugins: Path, name: str, version: str, deps: str, included: str = "") -> None:
    ebin = plugins / f"{name}-{version}" / "ebin"
    ebin.mkdir(parents=True)
    extra = f",\n  {{included_applications, [{included}]}}" if included else ""
    ebin.joinpath(f"{name}.app").write_text(
        f"{{application, {name},\n [{{vsn, \"{version}\"}},\n  {{applications, [{deps}]}}"
        f"{extra},\n  {{env, [{{x, [a, b]}}]}}]}}.\n")


def test_only_rabbit_and_what_it_needs_transitively(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    _app(plugins, "rabbit", "3.10.8", "kernel, stdlib, rabbit_common,\n\tra")
    _app(plugins, "rabbit_common", "3.10.8", "kernel,jsx", included="credentials_obfuscation")
    _app(plugins, "ra", "2.2.0", "aten, gen_batch_server")
    for name in ("jsx", "aten", "gen_batch_server", "credentials_obfuscation"):
        _app(plugins, name, "1.0.0", "kernel")
    _app(plugins, "rabbitmq_management", "3.10.8", "rabbit, cowboy")
    _app(plugins, "cowboy", "2.8.0", "ranch")
    (plugins / "README").write_text("not an application")
    found = services.broker_applications(plugins)
    assert sorted(found) == ["aten", "credentials_obfuscation", "gen_batch_server", "jsx",
                             "ra", "rabbit", "rabbit_common"]
    assert found["ra"] == plugins / "ra-2.2.0"


def test_no_rabbit_is_not_installed(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    _app(plugins, "cowboy", "2.8.0", "kernel")
    with pytest.raises(exceptions.HeatNotInstalled):
        services.broker_applications(plugins)

