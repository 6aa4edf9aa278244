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



@pytest.mark.parametrize(("listed", "kept"), [
    ("kernel, stdlib, ssl, ranch,\n\txmerl, rabbit_common", "kernel,stdlib,ranch,rabbit_common"),
    ("kernel,stdlib,ssl", "kernel,stdlib"),
    ("os_mon,inets,compiler,public_key,syntax_tools,tools", ""),
])
def test_unstarted_applications_left_out_of_the_list(listed: str, kept: str) -> None:
    text = (f"{{application, rabbit,\n [{{vsn, \"3.10.8\"}},\n  {{applications, [{listed}]}},"
            "\n  {env, [{ssl_listeners, []}, {ssl_options, [ssl]}]}]}.\n")
    lean = services.without_applications(text, services.UNSTARTED)
    assert f"{{applications, [{kept}]}}" in lean
    assert lean.replace(f"{{applications, [{kept}]}}", "") == text.replace(
        f"{{applications, [{listed}]}}", "")  # the rest as it was (env included)


def test_an_app_naming_none_of_them_is_unchanged() -> None:
    text = "{application, ra, [{applications, [kernel, stdlib, aten]}]}.\n"
    assert services.without_applications(text, services.UNSTARTED) == text


def test_broker_home_lists_no_unstarted_application(tmp_path: Path) -> None:
    lib = tmp_path / "rabbitmq_server-3.10.8"
    (lib / "sbin").mkdir(parents=True)
    (lib / "sbin" / "rabbitmq-server").write_text("#!/bin/sh\n")
    (lib / "escript").mkdir()
    plugins = lib / "plugins"
    _app(plugins, "rabbit", "3.10.8", "kernel, stdlib, os_mon, inets, ssl, ra")
    _app(plugins, "ra", "2.2.0", "kernel, stdlib")
    (plugins / "rabbit-3.10.8" / "ebin" / "rabbit.beam").write_bytes(b"FOR1")
    (plugins / "rabbit-3.10.8" / "priv").mkdir()
    svc = services.Services(root=tmp_path / "svc", log_dir=tmp_path / "log", ports={},
                            admin_password="a", rabbit_password="r")
    svc._link_server_home(lib)
    home = svc.server_home / "plugins"
    rabbit, installed = home / "rabbit-3.10.8", plugins / "rabbit-3.10.8"
    # its own directory: links to the installed files, its .app rewritten
    assert not rabbit.is_symlink() and (rabbit / "priv").resolve() == installed / "priv"
    assert (rabbit / "ebin" / "rabbit.beam").resolve() == installed / "ebin" / "rabbit.beam"
    app = rabbit / "ebin" / "rabbit.app"
    assert not app.is_symlink() and "{applications, [kernel,stdlib,ra]}" in app.read_text()
    assert (home / "ra-2.2.0").is_symlink()  # it names none of them: linked as it is
    assert "ssl" in (installed / "ebin" / "rabbit.app").read_text()  # the installed one kept
