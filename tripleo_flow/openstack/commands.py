"""The tripleo-flow commands as ``openstack tripleo ...`` commands.

Each attribute (``plan_list``, ``parameters_set`` ...) is the command class
registered under the same name in ``tripleo_flow.cli``, subclassed so that
``self.app.client`` (what the commands call) is a tripleo-flow
:class:`~tripleo_flow.client.Client` built from the configuration files given
with ``--tripleo-config-file``.  Nothing else changes: same parser, same
``take_action``.
"""

from __future__ import annotations

import functools
from importlib import metadata
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.openstack import plugin

NAMESPACE = "tripleo_flow.cli"


class AppShim:
    """openstackclient's app, plus the ``client`` attribute tripleo-flow commands use."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._client: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._app, name)

    @property
    def client(self) -> Any:
        if self._client is None:
            from tripleo_flow.client import Client

            options = getattr(self._app, "options", None)
            self._client = Client.from_config_files(plugin.config_files(options))
        return self._client

    def close_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def adapt(command_class: type) -> type:
    """A subclass of a tripleo-flow command that runs under openstackclient."""

    def __init__(self: Any, app: Any, app_args: Any, cmd_name: str | None = None) -> None:
        command_class.__init__(self, AppShim(app), app_args, cmd_name)  # type: ignore[misc]

    def run(self: Any, parsed_args: Any) -> int:
        try:
            return int(command_class.run(self, parsed_args) or 0)  # type: ignore[attr-defined]
        except exceptions.TripleoFlowError as exc:
            # openstackclient maps every error to exit 1; keep tripleo-flow's table
            # (SystemExit passes through cliff's error handling).
            if getattr(getattr(self.app, "options", None), "debug", False):
                raise
            self.app.stderr.write(f"{exc}\n")
            raise SystemExit(exceptions.exit_code(exc)) from exc
        finally:
            self.app.close_client()

    return type(command_class.__name__, (command_class,), {
        "__init__": __init__, "run": run, "auth_required": False,
        "__doc__": command_class.__doc__, "__module__": __name__})


@functools.cache
def _entry_points() -> dict[str, metadata.EntryPoint]:
    """By name, ``-`` read as ``_`` (``validation_show-result`` is the attribute
    ``validation_show_result``: an entry point's object reference has no ``-``)."""
    return {ep.name.replace("-", "_"): ep for ep in metadata.entry_points(group=NAMESPACE)}


@functools.cache
def command(name: str) -> type:
    """The adapted class of tripleo-flow command ``name`` (e.g. ``plan_list``)."""
    entry = _entry_points().get(name.replace("-", "_"))
    if entry is None:
        raise AttributeError(f"no tripleo-flow command {name!r} in {NAMESPACE}")
    return adapt(entry.load())


def __getattr__(name: str) -> type:
    if name.startswith("__"):
        raise AttributeError(name)
    return command(name)
