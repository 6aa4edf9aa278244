"""User environments: the operator's own environment files (``-e FILE``) in a plan.

Each one is stored with the local files it references under its own directory,
``user-environments/<n>/`` (``<n>`` a number no other user environment of the
plan has used), so references relative to the file keep resolving the way they
do on the operator's disk::

    user-environments/1/network.yaml          # the environment
    user-environments/1/nic-configs/ctl.yaml  # a template its registry names
    user-environments/2/params.yaml

The plan-environment lists them in its ``environments`` after the plan's own
(the resource registry and the capabilities enabled): they are applied last,
in the operator's order, and the last one wins.

A reference is a ``resource_registry`` value naming a template (relative to the
environment file), and, in the templates so collected, a ``type:`` naming a
template or a ``get_file:`` (relative to that template).  References must stay
inside the environment's own directory tree: an absolute path, a URL or a path
climbing out with ``..`` is refused, since the plan could not hold what it
names the way the operator's disk does.

Pure: the files are read through a callable, so the CLI reads a disk and the
HTTP API reads the files of a request the same way.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.common import value_limits
from tripleo_flow.common.safe_yaml import DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODES, load_yaml

#: Where a plan keeps its user environments.
PREFIX = "user-environments/"
_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_DIR = re.compile(r"^user-environments/(\d+)/")
#: The sections of a Heat environment file.
ENVIRONMENT_KEYS = frozenset({
    "parameters", "parameter_defaults", "resource_registry", "event_sinks",
    "encrypted_param_names", "parameter_merge_strategies"})


@dataclass(frozen=True)
class EnvironmentFile:
    """An environment file and the files it references, by path relative to the
    environment's directory (``name`` is the environment's own path there)."""

    name: str
    files: Mapping[str, bytes]

    def to_json(self) -> dict[str, Any]:
        """As JSON: ``{"name", "files": {path: text}}``."""
        return {"name": self.name,
                "files": {p: d.decode("utf-8") for p, d in sorted(self.files.items())}}

    @classmethod
    def from_json(cls, data: Any, max_nodes: int = DEFAULT_MAX_NODES,
                  max_depth: int = DEFAULT_MAX_DEPTH) -> EnvironmentFile:
        """Check and collect an environment given as ``{"name", "files": {path: text}}``
        (over HTTP): every file it references must be among ``files``."""
        if not isinstance(data, Mapping) or not isinstance(data.get("name"), str) or \
                not isinstance(data.get("files"), Mapping) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in data["files"].items()):
            raise exceptions.InvalidInput(
                "An environment is {\"name\": \"<file>\", \"files\": {\"<path>\": \"<text>\"}}: "
                "the environment file and every file it references, by path relative to "
                "the environment's directory.")
        given = {posixpath.normpath(k): v.encode("utf-8") for k, v in data["files"].items()}

        def read(path: str) -> bytes | None:
            return given.get(path)

        return gather(str(data["name"]), read, str(data["name"]), max_nodes, max_depth)


def _refused(source: str, referrer: str, ref: str, why: str,
             top: bool) -> exceptions.InvalidTemplate:
    where = "" if top else f" (in {referrer!r})"
    return exceptions.InvalidTemplate(
        source, f"it refers to {ref!r}{where}, {why}. An environment may only refer to "
        "files in its own directory or below it, by relative path: copy the file there, "
        "or enable a file of the plan's templates with 'capabilities set'.")


def resolve(source: str, referrer: str, ref: str, top: bool = False) -> str:
    """The path ``ref`` (written in ``referrer``; ``top``: the environment itself)
    names, relative to the environment's directory; refused when absolute, a URL, or
    outside that directory."""
    if ref.startswith("/") or ref.startswith("\\"):
        raise _refused(source, referrer, ref, "an absolute path", top)
    if _SCHEME.match(ref):
        raise _refused(source, referrer, ref, "a URL", top)
    path = posixpath.normpath(posixpath.join(posixpath.dirname(referrer), ref))
    if path == ".." or path.startswith("../"):
        raise _refused(source, referrer, ref, "which is outside the environment's directory",
                       top)
    return path


def _is_template(value: Any) -> bool:
    return isinstance(value, str) and "::" not in value and value.endswith(_TEMPLATE_SUFFIXES)


def registry_references(registry: Any) -> list[str]:
    """The template paths a ``resource_registry`` names (``resources:`` sections too)."""
    found: list[str] = []
    if isinstance(registry, Mapping):
        for key, value in registry.items():
            if key == "resources" and isinstance(value, Mapping):
                for mapping in value.values():
                    found.extend(registry_references(mapping))
            elif _is_template(value):
                found.append(value)
    return found


def template_references(node: Any) -> tuple[list[str], list[str]]:
    """The nested templates (``type:``) and the ``get_file:`` paths of a template."""
    templates: list[str] = []
    files: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, value in item.items():
                if key == "get_file" and isinstance(value, str):
                    files.append(value)
                elif key == "type" and _is_template(value):
                    templates.append(value)
                else:
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return templates, files


def _load_mapping(data: bytes, source: str, path: str, what: str, max_nodes: int,
                  max_depth: int) -> Mapping[str, Any]:
    doc = load_yaml(data, path if path == source else f"{path} (referenced by {source})",
                    max_nodes=max_nodes, max_depth=max_depth)
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise exceptions.InvalidTemplate(path, f"{what} must be a mapping, not "
                                               f"{type(doc).__name__}.")
    return doc


def gather(name: str, read: Callable[[str], bytes | None], source: str = "",
           max_nodes: int = DEFAULT_MAX_NODES,
           max_depth: int = DEFAULT_MAX_DEPTH,
           max_items: int | None = None) -> EnvironmentFile:
    """Read the environment ``name`` and every file it references through ``read``
    (a path relative to the environment's directory -> its bytes, None when absent).

    :param source: how to name the environment in errors (default ``name``).
    :param max_items: most entries of one of its mappings or lists (``[limits]
        input_max_items``: InvalidInput before it is built; None: not counted).
    :raises InvalidTemplate: for bad YAML, an environment that is not a mapping or
        holds a key no environment has, a missing file, or a reference that is
        absolute, a URL or outside the environment's directory.
    """
    source = source or name
    data = read(name)
    if data is None:
        raise exceptions.InvalidTemplate(source, "the file does not exist.")
    if max_items is not None:
        value_limits.check_yaml_entries(data, max_items, f"Environment {source!r}")
    env = _load_mapping(data, source, source, "an environment", max_nodes, max_depth)
    unknown = sorted(str(k) for k in env if k not in ENVIRONMENT_KEYS)
    if unknown:
        raise exceptions.InvalidTemplate(
            source, f"{', '.join(unknown)} is not a section of an environment file (these "
            f"are {', '.join(sorted(ENVIRONMENT_KEYS))}); is it a template?")
    files = {name: data}
    pending = [(name, ref, True) for ref in registry_references(env.get("resource_registry"))]
    while pending:
        referrer, ref, template = pending.pop(0)
        path = resolve(source, referrer, ref, referrer == name)
        if path in files:
            continue
        content = read(path)
        if content is None:
            where = "" if referrer == name else f" (in {referrer!r})"
            raise exceptions.InvalidTemplate(
                source, f"it refers to {ref!r}{where}, which does not exist at {path!r} "
                "relative to the environment; add the file or fix the reference.")
        files[path] = content
        if template:
            doc = _load_mapping(content, source, path, "a template", max_nodes, max_depth)
            nested, got = template_references(doc)
            pending.extend((path, r, True) for r in nested)
            pending.extend((path, r, False) for r in got)
    for path, content in files.items():
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            raise exceptions.InvalidTemplate(
                source, f"{path!r} is not UTF-8 text; Heat takes text files only.") from None
    return EnvironmentFile(name, files)


# -- in the plan ---------------------------------------------------------------


def is_user_environment(path: str) -> bool:
    """Whether a plan-environment ``environments`` path is a user environment."""
    return path.startswith(PREFIX)


def directory(path: str) -> str | None:
    """The ``user-environments/<n>/`` directory of a stored path, else None."""
    match = _DIR.match(path)
    return match.group(0) if match else None


def next_number(plan_files: Iterable[str]) -> int:
    """The first number above every ``user-environments/<n>/`` already in the plan."""
    used = [int(m.group(1)) for m in map(_DIR.match, plan_files) if m]
    return max(used, default=0) + 1


def stored(number: int, env: EnvironmentFile) -> tuple[str, dict[str, bytes]]:
    """The plan path of ``env`` stored as user environment ``number``, and its objects."""
    base = f"{PREFIX}{number}/"
    return base + env.name, {base + p: d for p, d in env.files.items()}


def _path(entry: Any) -> str | None:
    return entry.get("path") if isinstance(entry, Mapping) else None


def user_paths(entries: Sequence[Any]) -> list[str]:
    """The user environments of an ``environments`` list, in order."""
    return [p for p in map(_path, entries) if p is not None and is_user_environment(p)]


def user_last(entries: Sequence[Any]) -> list[Any]:
    """``entries`` with the user environments moved after the others (each group
    keeping its order): the plan's own environments first, the operator's last."""
    own = [e for e in entries if not is_user_environment(_path(e) or "")]
    return own + [e for e in entries if is_user_environment(_path(e) or "")]


def insert(entries: Sequence[Any], paths: Sequence[str], position: int | None = None,
           plan: str = "") -> list[Any]:
    """``entries`` with the user environments ``paths`` inserted at ``position``
    (1-based among the user environments; None: after them all)."""
    own = [e for e in entries if not is_user_environment(_path(e) or "")]
    users = [e for e in entries if is_user_environment(_path(e) or "")]
    if position is None:
        position = len(users) + 1
    if isinstance(position, bool) or not isinstance(position, int) or \
            not 1 <= position <= len(users) + 1:
        raise exceptions.InvalidInput(
            f"Position {position!r} is not a place among the {len(users)} user "
            f"environments of plan {plan!r}: give a number from 1 to {len(users) + 1}.")
    new = [{"path": p} for p in paths]
    return own + users[:position - 1] + new + users[position - 1:]


def listing(entries: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per environment, in order: ``order`` (1-based), ``path`` (``(inline
    data)`` for an inline one) and ``user`` (whether it is a user environment)."""
    rows = []
    for order, entry in enumerate(entries, start=1):
        path = _path(entry)
        rows.append({"order": order, "path": path if path is not None else "(inline data)",
                     "user": path is not None and is_user_environment(path)})
    return rows
