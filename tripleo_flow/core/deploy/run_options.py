"""The Ansible options of tripleoclient's lifecycle runs (``overcloud update run``,
``upgrade run``, ``external-update run``, ``external-upgrade run``), checked as workflow
inputs (pure: no I/O).

- ``--ansible-forks N``: Ansible's forks for the run (``ANSIBLE_FORKS``); tripleoclient
  takes any integer and uses its default, ``min(4 x CPUs, 100)``, for 0.
- ``-e/--extra-vars`` (external runs only, as tripleoclient): each value is a YAML/JSON
  object or ``key=value`` pairs split at white space (``utils.parse_extra_vars``),
  merged shallowly in order, the later ones winning; tripleoclient hands the result to
  ansible-playbook as an extra-vars file.  ``@FILE`` (ansible-playbook's own form,
  which tripleoclient's parser refuses) is read by the caller's side through ``read``:
  a workflow only ever takes the merged mapping, so no input names a file of the server.
- ``--ssh-user USER``: who Ansible logs in as on the overcloud hosts.
- verbosity: tripleoclient hands its own ``-v`` level to ansible-playbook
  (``utils.playbook_verbosity``: ``--debug`` 3; cliff's level, 1 without ``-v`` and
  one more per ``-v``: 1 or less gives 0, else the level, so one ``-v`` is ``-vv``);
  the run takes the count of ``v`` of ansible-playbook's ``-v`` flag.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import yaml

from tripleo_flow import exceptions

#: An Ansible variable name (what ``-e`` may set).
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: A login name (POSIX portable user names, as useradd takes them).
_USER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")


def check_forks(value: Any) -> int | None:
    """``--ansible-forks`` as the run uses it: None (or 0, as tripleoclient) for the
    default, else a positive number.

    :raises InvalidInput: not an integer, or below 0.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise exceptions.InvalidInput(
            f"ansible_forks must be a whole number of forks (1 or more; 0 for the "
            f"default), not {value!r}.")
    return value or None


#: ansible-playbook's most verbose level (``-vvvvvv``).
MAX_VERBOSITY = 6


def cli_verbosity(debug: bool, verbose_level: int) -> int:
    """The ansible-playbook verbosity of a command run with cliff's ``verbose_level``
    (1 by default, one more per ``-v``, 0 with ``-q``) or ``--debug``, as tripleoclient's
    ``playbook_verbosity``: 3 with ``--debug``, 0 without ``-v`` (level 1), else the
    level (one ``-v``: 2)."""
    if debug:
        return 3
    return 0 if verbose_level <= 1 else min(verbose_level, MAX_VERBOSITY)


def check_verbosity(value: Any) -> int:
    """The ``ansible_verbosity`` input of a run: 0 (None) to :data:`MAX_VERBOSITY`.

    :raises InvalidInput: not a whole number in that range.
    """
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or \
            not 0 <= value <= MAX_VERBOSITY:
        raise exceptions.InvalidInput(
            f"ansible_verbosity must be a whole number from 0 to {MAX_VERBOSITY} (the "
            f"count of v in ansible-playbook's -v), not {value!r}.")
    return value


def verbosity_args(level: int) -> list[str]:
    """ansible-playbook's ``-v...`` flag for ``level`` (none for 0)."""
    return [f"-{'v' * level}"] if level else []


def check_ssh_user(value: Any) -> str | None:
    """``--ssh-user`` (None: the user the config-download inventory names).

    :raises InvalidInput: not a user name.
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _USER.match(value):
        raise exceptions.InvalidInput(f"ssh_user {value!r} is not a user name.")
    return value


def check_extra_vars(value: Any) -> dict[str, Any]:
    """The ``extra_vars`` input of a run: a mapping of Ansible variable names to JSON
    values (None: none).  A string (``key=value`` or ``@FILE``) is refused: callers
    parse those with :func:`parse_extra_vars` on their side.

    :raises InvalidInput: not a mapping, a key that is not a variable name, or a value
        that is not JSON.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise exceptions.InvalidInput(
            "extra_vars must be a mapping of variable names to values (the CLI's "
            "-e key=value, -e '{...}' and -e @FILE are read by the CLI).")
    for key in value:
        if not isinstance(key, str) or not _VARIABLE.match(key):
            raise exceptions.InvalidInput(
                f"Extra variable {key!r} is not an Ansible variable name.")
    try:
        json.dumps(dict(value))
    except (TypeError, ValueError) as exc:
        raise exceptions.InvalidInput(f"extra_vars must hold JSON values: {exc}") from exc
    return dict(value)


def _one(text: str, origin: str) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        loaded = None
    if isinstance(loaded, dict):
        return loaded
    pairs: dict[str, Any] = {}
    for item in text.split():
        key, sep, val = item.partition("=")
        if not sep or not key:
            raise exceptions.InvalidInput(
                f"Invalid format for extra vars {origin}: give key=value pairs, a YAML or "
                "JSON object, or @FILE.")
        pairs[key] = val
    return pairs


def parse_extra_vars(values: Sequence[str] | Mapping[str, Any] | None,
                     read: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Merge ``-e`` values as tripleoclient does (see the module docstring); a mapping
    is taken as already merged.  ``@FILE`` values are read with ``read(FILE)`` (the
    caller's I/O); without ``read`` they are refused.

    :raises InvalidInput: a value that is neither an object nor ``key=value`` pairs, an
        ``@FILE`` that holds no object, or (:func:`check_extra_vars`) a bad name.
    """
    if values is None or isinstance(values, Mapping):
        return check_extra_vars(values)
    if isinstance(values, str):
        values = [values]
    merged: dict[str, Any] = {}
    for value in values:
        if not isinstance(value, str):
            raise exceptions.InvalidInput(f"Extra vars {value!r} is not a string.")
        if value.startswith("@"):
            if read is None:
                raise exceptions.InvalidInput(
                    f"Extra vars {value!r} names a file: give the variables themselves.")
            try:
                loaded = yaml.safe_load(read(value[1:]))
            except yaml.YAMLError as exc:
                raise exceptions.InvalidInput(
                    f"Extra vars file {value[1:]!r} is not YAML: {exc}") from exc
            if not isinstance(loaded, dict):
                raise exceptions.InvalidInput(
                    f"Extra vars file {value[1:]!r} holds no YAML or JSON object.")
            merged.update(loaded)
        else:
            merged.update(_one(value, repr(value)))
    return check_extra_vars(merged)


__all__ = ["MAX_VERBOSITY", "check_extra_vars", "check_forks", "check_ssh_user",
           "check_verbosity", "cli_verbosity", "parse_extra_vars", "verbosity_args"]
