"""The static includes of an Ansible project, and those that name no file of it.

A config-download project runs only if every file its playbooks include exists.
This walks the project as Ansible loads it: from each top-level playbook (a YAML
list of plays at the project's root) through ``import_playbook``, the task lists
of each play (``pre_tasks``, ``tasks``, ``post_tasks``, ``handlers``, nested
``block``/``rescue``/``always``) and the task files they include
(``include_tasks``, ``import_tasks``, legacy ``include``; bare or
``ansible.builtin.``), following each file found.  Names with Jinja (``{{``,
``{%``) are decided at run time and are skipped; so are absolute paths.

Resolution follows Ansible's ``load_list_of_tasks`` / ``IncludedFile``: a task
file named by an include is looked for relative to the directory of the including
file, then of each file that included that one, then the playbook's directory
(the project root); ``import_playbook`` relative to the importing playbook;
``script`` also in the ``files/`` directory of each of those.  ``tasks_from`` of
``include_role`` / ``import_role`` names a file of a role's ``tasks/``, checked
when the caller says which task files each role has.

Pure: takes ``{relative path: bytes}``, as :func:`config_download.render` returns
or a directory read into memory.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

TASK_INCLUDES = ("include_tasks", "import_tasks", "include")
ROLE_INCLUDES = ("include_role", "import_role")
TASK_LISTS = ("pre_tasks", "tasks", "post_tasks", "handlers")
BLOCK_LISTS = ("block", "rescue", "always")
#: Extensions Ansible tries after a role file name given without one.
ROLE_FILE_EXTENSIONS = ("", ".yml", ".yaml", ".json")
_BUILTIN = "ansible.builtin."
#: What :func:`_load` returns for a file that is not YAML.
_NOT_YAML = object()


@dataclass(frozen=True)
class Include:
    """One static include: the file it is in, its keyword and the name it gives."""

    source: str
    kind: str
    target: str
    role: str = ""


@dataclass(frozen=True)
class Problem:
    """An include that cannot be followed: ``missing`` (no such file) or
    ``unreadable`` (the file is not YAML of the expected shape)."""

    include: Include
    reason: str

    def __str__(self) -> str:
        where = f" of role {self.include.role}" if self.include.role else ""
        return (f"{self.include.source}: {self.include.kind} {self.include.target!r}"
                f"{where}: {self.reason}")


def _templated(name: str) -> bool:
    return "{{" in name or "{%" in name


def _keyword(task: Mapping[str, Any], names: Iterable[str]) -> tuple[str, Any] | None:
    for name in names:
        for key in (name, _BUILTIN + name):
            if key in task:
                return name, task[key]
    return None


def _load(data: bytes) -> Any:
    try:
        return yaml.safe_load(data)
    except yaml.YAMLError:
        return _NOT_YAML


def is_playbook(data: Any) -> bool:
    """A YAML list of plays: each has ``hosts`` or is an ``import_playbook``."""
    return (isinstance(data, list) and bool(data)
            and all(isinstance(p, Mapping) and ("hosts" in p or _keyword(p, ["import_playbook"]))
                    for p in data))


def playbooks(files: Mapping[str, bytes]) -> list[str]:
    """The top-level playbooks: files at the root whose YAML is a list of plays."""
    return sorted(path for path, data in files.items()
                  if "/" not in path and path.endswith((".yaml", ".yml"))
                  and is_playbook(_load(data)))


def _tasks(tasks: Any) -> Iterator[Mapping[str, Any]]:
    """Every task of a task list, those of blocks included (depth first)."""
    for task in tasks if isinstance(tasks, list) else []:
        if not isinstance(task, Mapping):
            continue
        yield task
        for key in BLOCK_LISTS:
            yield from _tasks(task.get(key))


def _task_includes(source: str, tasks: Any) -> Iterator[Include]:
    for task in _tasks(tasks):
        found = _keyword(task, TASK_INCLUDES)
        if found is not None:
            kind, value = found
            name = value.get("file") if isinstance(value, Mapping) else value
            if isinstance(name, str):
                yield Include(source, kind, name.strip())
        role = _keyword(task, ROLE_INCLUDES)
        if role is not None and isinstance(role[1], Mapping):
            tasks_from, role_name = role[1].get("tasks_from"), role[1].get("name")
            if isinstance(tasks_from, str) and isinstance(role_name, str):
                yield Include(source, "tasks_from", tasks_from.strip(), role_name.strip())
        script = _keyword(task, ["script"])
        if script is not None:
            value = script[1].get("cmd") if isinstance(script[1], Mapping) else script[1]
            if isinstance(value, str) and value.split():
                yield Include(source, "script", value.split()[0])


def _play_includes(source: str, plays: list[Any]) -> Iterator[Include]:
    for play in plays:
        imported = _keyword(play, ["import_playbook"])
        if imported is not None and isinstance(imported[1], str):
            yield Include(source, "import_playbook", imported[1].strip())
        for key in TASK_LISTS:
            yield from _task_includes(source, play.get(key))


def _resolve(files: Mapping[str, bytes], include: Include,
             chain: tuple[str, ...]) -> str | None:
    """The project file ``include`` names, looked for along ``chain`` (the directories
    of the including file and of the files that included it, the root last)."""
    bases = [posixpath.dirname(include.source)] if include.kind == "import_playbook" else chain
    if include.kind == "script":
        bases = [d for base in bases for d in (base, posixpath.join(base, "files"))]
    for base in bases:
        path = posixpath.normpath(posixpath.join(base, include.target))
        if path in files:
            return path
    return None


def _role_has(include: Include, roles: Mapping[str, Collection[str]]) -> str | None:
    """Why a ``tasks_from`` cannot be followed (None: the role has the file)."""
    if include.role not in roles:
        return "missing (no such role)"
    have = roles[include.role]
    if any(include.target + ext in have for ext in ROLE_FILE_EXTENSIONS):
        return None
    return "missing (no such file in the role's tasks/)"


def problems(files: Mapping[str, bytes],
             roles: Mapping[str, Collection[str]] | None = None) -> list[Problem]:
    """Every static include of ``files``' playbooks, and of the task files they reach,
    that names no file of the project (or of ``roles``: role name -> the names of
    the files in its ``tasks/``; ``None``: ``tasks_from`` is not checked)."""
    found: list[Problem] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    pending: list[tuple[str, tuple[str, ...]]] = [(p, ("",)) for p in playbooks(files)]
    while pending:
        path, chain = pending.pop()
        if (path, chain) in seen:
            continue
        seen.add((path, chain))
        data = _load(files[path])
        playbook = is_playbook(data)
        includes = (_play_includes(path, data) if playbook else _task_includes(path, data))
        for include in includes:
            if (_templated(include.target) or _templated(include.role)
                    or posixpath.isabs(include.target)):
                continue
            if include.kind == "tasks_from":
                reason = _role_has(include, roles) if roles is not None else None
                if reason:
                    found.append(Problem(include, reason))
                continue
            target = _resolve(files, include, chain)
            if target is None:
                found.append(Problem(include, "missing"))
            elif include.kind == "import_playbook":
                if not is_playbook(_load(files[target])):
                    found.append(Problem(include, "unreadable (not a list of plays)"))
                else:
                    pending.append((target, ("",)))
            elif include.kind != "script":
                loaded = _load(files[target])
                if loaded is _NOT_YAML or loaded is not None and not isinstance(loaded, list):
                    found.append(Problem(include, "unreadable (not a list of tasks)"))
                else:
                    here = posixpath.dirname(target)
                    pending.append((target, (here, *[d for d in chain if d != here])))
    return sorted(set(found), key=str)


__all__ = ["Include", "Problem", "is_playbook", "playbooks", "problems"]
