"""Small helpers shared by the commands (argument parsing only; no logic)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

import yaml

from tripleo_flow import exceptions
from tripleo_flow.cli.command_table import RENAMED
from tripleo_flow.common import safe_yaml, value_limits

if TYPE_CHECKING:
    from tripleo_flow.client import Client


def add_plan_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plan", default="overcloud", metavar="NAME",
                        help="Plan name (default: overcloud).")


def yaml_limits(limits: Any = None) -> dict[str, int]:
    """``load_yaml`` keyword arguments from the ``[limits]`` group (defaults when None)."""
    if limits is None:
        return {"max_nodes": safe_yaml.DEFAULT_MAX_NODES, "max_depth": safe_yaml.DEFAULT_MAX_DEPTH}
    return {"max_nodes": limits.yaml_max_nodes, "max_depth": limits.yaml_max_depth}


def read_yaml_file(path: str, limits: Any = None) -> Any:
    """Load a YAML file given on the command line, with a one-line error.

    :param limits: the ``[limits]`` group of the configuration (its defaults when None).
    :raises InvalidInput: unreadable, binary, not YAML, or over a YAML limit (a
        mapping or list of over ``input_max_items`` entries refused before it is built).
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise exceptions.InvalidInput(f"Cannot read {path!r}: {exc.strerror}.") from exc
    if b"\0" in data:
        raise exceptions.InvalidInput(
            f"File {path!r} is binary, not a YAML text file. Give a YAML file.")
    value_limits.check_yaml_entries(data, value_limits.INPUT_MAX_ITEMS if limits is None
                                  else limits.input_max_items, f"File {path!r}")
    try:
        return safe_yaml.load_yaml(data, path, **yaml_limits(limits))
    except exceptions.InvalidTemplate as exc:
        raise exceptions.InvalidInput(f"File {path!r} is not valid YAML: {exc.reason}") from exc


def parse_assignments(items: list[str], limits: Any = None) -> dict[str, Any]:
    """``NAME=VALUE`` pairs; values are read as YAML (so 3 is a number, [a] a list).

    A value that is not YAML is kept as text; one over a YAML limit is refused.
    """
    values: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise exceptions.InvalidInput(f"Bad value {item!r}: use NAME=VALUE.")
        try:
            values[name] = safe_yaml.parse_yaml(raw, **yaml_limits(limits)) if raw else ""
        except safe_yaml.YamlRefused as exc:
            raise exceptions.InvalidInput(
                f"Bad value for {name!r}: {safe_yaml.describe_yaml_error(exc)}") from exc
        except yaml.YAMLError:
            values[name] = raw
    return values


def show(data: dict[str, Any]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """A ShowOne result from a dict, keys sorted."""
    keys = tuple(sorted(data))
    return keys, tuple(data[k] for k in keys)


class ClientMixin:
    """Gives a command ``self.client``: the app's Python API session."""

    app: Any

    def __init__(self, app: Any, app_args: Any, cmd_name: str | None = None) -> None:
        super().__init__(app, app_args, cmd_name)  # type: ignore[call-arg]
        # cliff leaves a deprecated command out of ``help``: this one is when it runs
        # under a name of RENAMED (``roles list``, ``tripleo roles list`` under
        # openstackclient).
        self.deprecated = (cmd_name or "").removeprefix("tripleo ") in RENAMED

    @property
    def client(self) -> Client:
        return self.app.client  # type: ignore[no-any-return]

    def get_epilog(self) -> str:
        """cliff's epilog, without its line naming the plugin that provides the command
        when the app is tripleo-flow's own (``own_commands``), whose commands are all
        its own: cliff finds that name by reading the metadata of every installed
        distribution (about 0.2 s of each command's start-up).  Under another app
        (``openstack tripleo ...``) cliff's epilog is kept whole."""
        if not getattr(self.app, "own_commands", False):
            return super().get_epilog()  # type: ignore[misc,no-any-return]
        epilogs = [hook.obj.get_epilog() for hook in getattr(self, "_hooks", ())
                   if hook.obj is not None]
        return "\n\n".join([getattr(self, "_epilog", None) or "",
                             *(e for e in epilogs if e is not None)])
