"""Checks on a whole template tree before any of it is written to a plan, and on
the names users give to parameters."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml
from tripleo_flow.common.value_limits import json_size

_YAML_SUFFIXES = (".yaml", ".yml")
#: Heat parameter names as tripleo-heat-templates writes them (every one of its
#: 12.1.0 and 18.0.0 parameters matches): a letter or '_', then letters, digits, '_'.
PARAMETER_NAME_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$"
MAX_PARAMETER_NAME = 255
_PARAMETER_NAME = re.compile(PARAMETER_NAME_PATTERN)


def check_size(value: object, limit: int, what: str) -> None:
    """Refuse ``value`` when its JSON would be over ``limit`` characters
    (``[limits] parameters_max_size``).

    :param what: what ``value`` is, starting the message ("The parameter values").
    :raises InvalidParameter: naming the limit and its option.
    """
    size = json_size(value, limit)
    if size > limit:
        raise exceptions.InvalidParameter(
            f"{what} take over {limit} characters ([limits] parameters_max_size). Put large "
            "content in the plan's template files and refer to it (get_file), or raise "
            "[limits] parameters_max_size in the configuration.")


def check_parameter_name(name: object) -> str:
    """Return ``name`` when it can be a Heat parameter name.

    :raises InvalidParameter: for anything else (``../x``, ``A B``, ``""``, non-strings).
    """
    if (not isinstance(name, str) or not _PARAMETER_NAME.fullmatch(name)
            or len(name) > MAX_PARAMETER_NAME):
        shown = repr(name) if len(repr(name)) <= 80 else repr(name)[:80] + "..."
        raise exceptions.InvalidParameter(
            f"Invalid parameter name {shown}: a Heat parameter name starts with a letter or "
            f"'_' and holds only letters, digits and '_' (at most {MAX_PARAMETER_NAME} "
            "characters).")
    return name


def is_j2(path: str) -> bool:
    return path.endswith((".j2.yaml", ".j2.yml", ".j2"))


def check_yaml_files(files: Mapping[str, bytes],
                     progress: Callable[[int, int], None] | None = None) -> int:
    """Parse every plain (non-j2) YAML file; raise InvalidTemplate naming the first bad one.

    :param progress: called with ``(files checked, files to check)`` after each file.
    :returns: how many files were checked.
    """
    check = YamlCheck(files, progress)
    check(files)
    return check.total


class YamlCheck:
    """The check of :func:`check_yaml_files`, run part by part of a tree.

    A plan create uploads each part of its tree once that part passed (the
    ``check`` of :meth:`~tripleo_flow.plans.store.PlanStore.put_objects`), so
    the check of the next part runs while earlier parts upload.  The error is
    the one :func:`check_yaml_files` raises for the whole tree: when a part
    holds a bad file, the files not checked yet that sort before it are checked
    first, so the file named is the first bad one in sorted order.
    """

    def __init__(self, files: Mapping[str, bytes],
                 progress: Callable[[int, int], None] | None = None) -> None:
        """:param files: the whole tree.
        :param progress: called with ``(files checked, files to check)`` after each file.
        """
        self._files = files
        self._progress = progress
        self._unchecked = {p for p in files if p.endswith(_YAML_SUFFIXES) and not is_j2(p)}
        #: how many files the whole check parses
        self.total = len(self._unchecked)

    def __call__(self, part: Mapping[str, bytes]) -> None:
        """Check the files of ``part`` (some of the tree) not checked yet, in sorted order.

        :raises InvalidTemplate: naming the first bad file of the tree before the
            first bad file of ``part``, or else that one.
        """
        for path in sorted(p for p in part if p in self._unchecked):
            try:
                safe_yaml.check_yaml(part[path], path)
            except exceptions.InvalidTemplate:
                check_yaml_files({p: self._files[p] for p in self._unchecked if p < path})
                raise
            self._unchecked.discard(path)
            if self._progress is not None:
                self._progress(self.total - len(self._unchecked), self.total)
