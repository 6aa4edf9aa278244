"""TripleO's validations: playbook metadata, selection and result records (pure).

A validation is a playbook of validations-common or tripleo-validations
(``<venv>/share/ansible/validation-playbooks/<id>.yaml``) whose play vars hold a
``metadata`` mapping (name, description, groups, categories, products); its other
play vars are its parameters, which ``--extra-vars`` override.  A run writes the
framework's JSON log (validations-common's ``vf_validation_json`` callback):
:func:`result_from_log` turns it into one record per validation run, with a status
per host and the failure reasons.  Nothing here reads a file or runs a process.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

#: Where the framework's playbooks are, under ``<venv>/share/ansible``.
PLAYBOOKS_DIR = "validation-playbooks"
#: The group a deployment runs first with ``deploy --run-validations``.
PRE_DEPLOYMENT = "pre-deployment"
#: A validation's status: every host passed, one failed, or nothing could run.
PASSED, FAILED, SKIPPED, STOPPED = "PASSED", "FAILED", "SKIPPED", "STOPPED"
#: Host statuses (per host of a run).
HOST_PASSED, HOST_FAILED, HOST_UNREACHABLE = "PASSED", "FAILED", "UNREACHABLE"
#: The inventory value that means this machine.
LOCALHOST = "localhost"
#: The longest output kept in a record (its tail).
LOG_MAX_CHARS = 64_000

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_NO_HOSTS = re.compile(r"(?:skipping: no hosts matched|Could not match supplied host pattern"
                       r", ignoring: (\S+))")
_TEMPLATED_DEFAULT = re.compile(r"\{\{[^}]*default\(\s*['\"]([^'\"]+)['\"]\s*\)\s*\}\}")
_MISSING_MODULE = re.compile(r"No module named '([^']+)'")


class MetadataError(ValueError):
    """A validation playbook without the framework's metadata (``id`` says which)."""

    def __init__(self, validation: str, reason: str) -> None:
        super().__init__(f"{validation}: {reason}")
        self.validation, self.reason = validation, reason


@dataclass(frozen=True)
class Validation:
    """One validation playbook and its metadata."""

    id: str
    name: str
    description: str
    groups: tuple[str, ...]
    categories: tuple[str, ...]
    products: tuple[str, ...]
    hosts: str
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "description": self.description,
                "groups": list(self.groups), "categories": list(self.categories),
                "products": list(self.products), "hosts": self.hosts,
                "parameters": dict(self.parameters)}


def check_id(validation: str) -> str:
    """Return ``validation`` when it can name a validation playbook (no path parts).

    :raises ValueError: otherwise.
    """
    if not isinstance(validation, str) or not _ID.match(validation):
        raise ValueError(f"{validation!r} is not a validation name: use letters, digits, "
                         "'-', '_' and '.' (as `validation list` shows them)")
    return validation


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return ()


def parse_playbook(validation: str, text: bytes | str) -> Validation:
    """The :class:`Validation` of playbook ``<validation>.yaml``'s text.

    :raises MetadataError: not YAML, or its first play has no ``vars.metadata``.
    """
    try:
        plays = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise MetadataError(validation, f"not YAML ({exc})") from None
    if not isinstance(plays, list) or not plays or not isinstance(plays[0], dict):
        raise MetadataError(validation, "not a playbook (a list of plays)")
    play = plays[0]
    variables: dict[str, Any] = play["vars"] if isinstance(play.get("vars"), dict) else {}
    metadata = variables.get("metadata")
    if not isinstance(metadata, dict):
        raise MetadataError(validation, "its play has no vars.metadata")
    return Validation(
        id=validation, name=str(metadata.get("name") or validation),
        description=" ".join(str(metadata.get("description") or "").split()),
        groups=_strings(metadata.get("groups")),
        categories=_strings(metadata.get("categories")),
        products=_strings(metadata.get("products")),
        hosts=str(play.get("hosts") or "all"),
        parameters={k: v for k, v in variables.items() if k != "metadata"})


def select(validations: Iterable[Validation], group: str | None = None,
           category: str | None = None, product: str | None = None) -> list[Validation]:
    """The validations in ``group``, ``category`` and ``product`` (each when given),
    sorted by id."""
    chosen = [v for v in validations
              if (group is None or group in v.groups)
              and (category is None or category in v.categories)
              and (product is None or product in v.products)]
    return sorted(chosen, key=lambda v: v.id)


_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def check_extra_vars(extra_vars: Mapping[str, Any]) -> None:
    """Refuse parameters that would change how Ansible connects or runs rather than what
    a validation checks: names that are not identifiers, or ``ansible_*`` variables.

    :raises ValueError: naming the first bad key.
    """
    for key in extra_vars:
        if not isinstance(key, str) or not _VAR_NAME.match(key):
            raise ValueError(f"{str(key)[:60]!r} is not a variable name")
        if key.lower().startswith("ansible_"):
            raise ValueError(f"{key!r} is an Ansible connection or behaviour variable, not a "
                             "validation parameter")


class _Unsafe(str):
    pass


class _UnsafeDumper(yaml.SafeDumper):
    pass


_UnsafeDumper.add_representer(
    _Unsafe, lambda dumper, value: dumper.represent_scalar("!unsafe", str(value)))


def _unsafe(value: Any) -> Any:
    if isinstance(value, str):
        return _Unsafe(value)
    if isinstance(value, list):
        return [_unsafe(v) for v in value]
    if isinstance(value, dict):
        return {k: _unsafe(v) for k, v in value.items()}
    return value


def extra_vars_file(extra_vars: Mapping[str, Any]) -> bytes:
    """The ``--extra-vars @FILE`` YAML: every string tagged ``!unsafe``, so Ansible never
    evaluates a template (``{{ lookup('pipe', ...) }}``) given as a parameter."""
    return yaml.dump(_unsafe(dict(extra_vars)), Dumper=_UnsafeDumper,
                     default_flow_style=False).encode()


def localhost_inventory(python: str) -> dict[str, Any]:
    """The inventory that runs every play on this machine."""
    return {"all": {"hosts": {LOCALHOST: {"ansible_connection": "local",
                                          "ansible_python_interpreter": python}}}}


def missing_hosts(hosts_pattern: str, inventory: Mapping[str, Any]) -> list[str]:
    """The groups or hosts of a play's ``hosts`` pattern (``a:b``, ``a,b``; a Jinja
    ``{{ x | default('Controller') }}`` is read as its default) that ``inventory`` (a YAML
    inventory) does not name; empty when any part matches, or the pattern has wildcards."""
    names: set[str] = {"all", LOCALHOST, "127.0.0.1"}

    def walk(name: str, group: Any) -> None:
        names.add(name)
        if not isinstance(group, Mapping):
            return
        names.update(group.get("hosts") or {})
        for child, sub in (group.get("children") or {}).items():
            walk(child, sub)

    for name, group in inventory.items():
        walk(name, group)
    pattern = _TEMPLATED_DEFAULT.sub(lambda m: m.group(1), hosts_pattern)
    if "{{" in pattern:
        return []
    parts = [p.strip().lstrip("!&") for p in re.split(r"[:,]", pattern) if p.strip()]
    plain = [p for p in parts if not any(ch in p for ch in "*?[~")]
    if len(plain) < len(parts):
        return []
    unknown = [p for p in plain if p not in names]
    return [] if len(unknown) < len(plain) else unknown


def _reason(task: Mapping[str, Any], host: str, result: Mapping[str, Any]) -> str:
    message = result.get("msg") or result.get("stderr") or result.get("reason") or "failed"
    return f"{task.get('name') or 'a task'}: {' '.join(str(message).split())}"


def result_from_log(log: Mapping[str, Any] | None, returncode: int, output: str,
                    hosts: Sequence[str] = ()) -> dict[str, Any]:
    """The status, per-host status and failure reasons of one run.

    :param log: the run's ``vf_validation_json`` log (None: none was written).
    :param returncode: ansible-playbook's exit code (negative: killed by that signal).
    :param output: ansible-playbook's output (for reasons no log gives).
    :param hosts: the inventory's hosts (each not in the log's stats is SKIPPED).
    """
    stats: Mapping[str, Any] = (log or {}).get("stats") or {}
    reasons: list[dict[str, str]] = []
    for entry in (log or {}).get("validation_output") or []:
        task = entry.get("task") or {}
        for host, result in (task.get("hosts") or {}).items():
            reasons.append({"host": host, "reason": _reason(task, host, result or {})})
    per_host: dict[str, str] = {}
    for host, counts in stats.items():
        if counts.get("unreachable"):
            per_host[host] = HOST_UNREACHABLE
        elif counts.get("failures"):
            per_host[host] = HOST_FAILED
        else:
            per_host[host] = HOST_PASSED
    for host in hosts:
        per_host.setdefault(host, SKIPPED)
    if returncode < 0:
        status = STOPPED
        reasons.append({"host": "", "reason": f"stopped (signal {-returncode})"})
    elif any(s in (HOST_FAILED, HOST_UNREACHABLE) for s in per_host.values()):
        status = FAILED
    elif not stats and returncode != 0:
        status = FAILED
        module = _MISSING_MODULE.search(output)
        tail = [ln.strip() for ln in output.splitlines() if ln.strip()][-3:]
        reasons.append({"host": "", "reason": (f"needs the Python module {module.group(1)}"
                                               if module else " | ".join(tail) or
                                               f"ansible-playbook exited {returncode}")})
    elif not stats or returncode == 0 and not any(s == HOST_PASSED for s in per_host.values()):
        status = SKIPPED
        matched = _NO_HOSTS.search(output)
        reasons.append({"host": "", "reason": "skipped: no host of the inventory matched"
                        + (f" {matched.group(1)}" if matched and matched.group(1) else "")})
    elif returncode != 0:
        status = FAILED
        if not reasons:
            reasons.append({"host": "", "reason": f"ansible-playbook exited {returncode}"})
    else:
        status = PASSED
    return {"status": status, "hosts": per_host, "reasons": reasons}


def skipped_result(validation: str, needs: Sequence[str]) -> dict[str, Any]:
    """The result of a validation not run because the inventory lacks ``needs``."""
    return {"status": SKIPPED, "hosts": {},
            "reasons": [{"host": "", "reason": f"skipped: needs {', '.join(needs)} "
                         "in the inventory"}]}


def log_tail(output: str, limit: int = LOG_MAX_CHARS) -> str:
    """The end of ``output``, at most ``limit`` characters, from a line start."""
    if len(output) <= limit:
        return output
    cut = output[-limit:]
    return cut[cut.find("\n") + 1:] if "\n" in cut else cut


def summary(record: Mapping[str, Any]) -> dict[str, Any]:
    """A stored result record without its log and extra vars (what a listing shows,
    and what a run hands to the next task: never a parameter, secret or not)."""
    return {k: v for k, v in record.items() if k not in ("log", "extra_vars")}


__all__ = ["FAILED", "LOCALHOST", "PASSED", "PLAYBOOKS_DIR", "PRE_DEPLOYMENT", "SKIPPED",
           "STOPPED", "MetadataError", "Validation", "check_extra_vars", "check_id",
           "extra_vars_file", "localhost_inventory", "log_tail", "missing_hosts",
           "parse_playbook", "result_from_log", "select", "skipped_result", "summary"]
