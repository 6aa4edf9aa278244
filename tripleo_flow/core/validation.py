"""Checks on a whole template tree before any of it is written to a plan."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tripleo_flow.core import planenv

_YAML_SUFFIXES = (".yaml", ".yml")


def is_j2(path: str) -> bool:
    return path.endswith((".j2.yaml", ".j2.yml", ".j2"))


def check_yaml_files(files: Mapping[str, bytes],
                     progress: Callable[[int, int], None] | None = None) -> int:
    """Parse every plain (non-j2) YAML file; raise InvalidTemplate naming the first bad one.

    :param progress: called with ``(files checked, files to check)`` after each file.
    :returns: how many files were checked.
    """
    paths = [p for p in sorted(files) if p.endswith(_YAML_SUFFIXES) and not is_j2(p)]
    for checked, path in enumerate(paths, 1):
        planenv.load_yaml(files[path], path)
        if progress is not None:
            progress(checked, len(paths))
    return len(paths)
