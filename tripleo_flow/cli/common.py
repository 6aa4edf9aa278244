"""Small helpers shared by the commands (argument parsing only; no logic)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

import yaml

from tripleo_flow import exceptions

if TYPE_CHECKING:
    from tripleo_flow.api import Client


def add_plan_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plan", default="overcloud", metavar="NAME",
                        help="Plan name (default: overcloud).")


def read_yaml_file(path: str) -> Any:
    """Load a YAML file given on the command line, with a one-line error."""
    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    except OSError as exc:
        raise exceptions.InvalidInput(f"Cannot read {path!r}: {exc.strerror}.") from exc
    except yaml.YAMLError as exc:
        raise exceptions.InvalidInput(f"File {path!r} is not valid YAML: {exc}") from exc


def parse_assignments(items: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` pairs; values are read as YAML (so 3 is a number, [a] a list)."""
    values: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise exceptions.InvalidInput(f"Bad value {item!r}: use NAME=VALUE.")
        try:
            values[name] = yaml.safe_load(raw) if raw else ""
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

    @property
    def client(self) -> Client:
        return self.app.client  # type: ignore[no-any-return]
