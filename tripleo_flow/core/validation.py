"""Checks on a whole template tree before any of it is written to a plan."""

from __future__ import annotations

from collections.abc import Mapping

from tripleo_flow.core import planenv

_YAML_SUFFIXES = (".yaml", ".yml")


def is_j2(path: str) -> bool:
    return path.endswith((".j2.yaml", ".j2.yml", ".j2"))


def check_yaml_files(files: Mapping[str, bytes]) -> int:
    """Parse every plain (non-j2) YAML file; raise InvalidTemplate naming the first bad one.

    :returns: how many files were checked.
    """
    checked = 0
    for path in sorted(files):
        if path.endswith(_YAML_SUFFIXES) and not is_j2(path):
            planenv.load_yaml(files[path], path)
            checked += 1
    return checked
