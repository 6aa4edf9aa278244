"""Reading workbook files into a :class:`Catalog` of checked workflows.

The catalog holds the shipped workbooks (``tripleo_flow/workbooks/``) and the
user's (``[workflows] workbooks_dir``).  Every file is parsed and validated when
the catalog is built; a file with problems stays listed with them, and running
or showing one of its workflows raises :class:`InvalidWorkbook` naming each
problem, so one broken file never hides the others.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml
from tripleo_flow.engine.lang import action_workflows, adhoc_actions
from tripleo_flow.engine.lang.action import Action
from tripleo_flow.engine.lang.action_workflows import ActionWorkflow

# What checks a workbook (its expressions, its actions' aliases) is imported by the
# functions that check: reading workbooks to list their workflows loads no YAQL.
from tripleo_flow.engine.lang.workbook_model import (
    Problem,
    Workbook,
    WorkflowSpec,
    parse_workbook,
)

#: What the shipped workbooks are read with: no size or task limit.
TRUSTED_SIZE = 1 << 62
#: The shipped workbooks: ``workbooks/`` at the top of the source tree, seen by the
#: package through the ``tripleo_flow/workbooks`` link (wheels hold the files).
SHIPPED_DIR = Path(__file__).resolve().parents[2] / "workbooks"


def invalid(problems: Iterable[Problem]) -> exceptions.InvalidWorkbook:
    """One InvalidWorkbook listing ``problems``, one per line."""
    lines = [str(p) for p in problems]
    head = "Invalid workbook" if len(lines) == 1 else f"Invalid workbook ({len(lines)} problems)"
    error = exceptions.InvalidWorkbook(f"{head}:\n  " + "\n  ".join(lines))
    error.problems = list(problems)  # type: ignore[attr-defined]
    return error


@dataclass(frozen=True)
class WorkbookLimits:
    """``[limits] workbook_max_size`` (bytes of a file) and ``workbook_max_tasks``
    (tasks of all its workflows)."""

    max_size: int = 1 << 20
    max_tasks: int = 1000


def _count_tasks(document: object) -> int:
    workflows = document.get("workflows") if isinstance(document, dict) else None
    if not isinstance(workflows, dict):
        return 0
    return sum(len(wf["tasks"]) for wf in workflows.values()
               if isinstance(wf, dict) and isinstance(wf.get("tasks"), dict))


#: The workbooks parsed lately, by (path, limits, length and digest of the text): a
#: catalog is read again whenever one of its files changes, by every new client of this
#: process, and to check a workbook before it is installed, while the shipped files never
#: change.  The parsed workbook is a frozen value no reader changes; a catalog already
#: shares it between all the runs of its workflows.
_PARSED: OrderedDict[tuple[str, WorkbookLimits, int, bytes],
                     tuple[Workbook | None, list[Problem]]] = OrderedDict()
_PARSED_LOCK = threading.Lock()
#: How many parsed workbooks :data:`_PARSED` keeps, and from how much text (characters)
#: at most: the least recently read go first (a server checks what its clients send).
PARSED_KEPT = 256
PARSED_TEXT_KEPT = 4 << 20
_parsed_text = [0]


def read_file(path: Path, limits: WorkbookLimits = WorkbookLimits()) -> tuple[
        Workbook | None, list[Problem]]:
    """Parse ``path``; unreadable files, YAML errors and files past ``limits`` (checked
    before the YAML is parsed for the size, before the workbook is for the tasks)
    become problems.  A text read before at this path is not parsed again."""
    try:
        size = path.stat().st_size
        if size > limits.max_size:
            return None, [Problem(str(path), f"the file has {size} bytes, more than [limits] "
                                  f"workbook_max_size ({limits.max_size}); split it into "
                                  "several workbooks")]
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(str(path), f"cannot read the file: {exc}")]
    key = (str(path), limits, len(text),
           hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
    with _PARSED_LOCK:
        known = _PARSED.get(key)
        if known is not None:
            _PARSED.move_to_end(key)
    if known is None:
        known = _parse_text(path, text, limits)
        _keep(key, known)
    return known[0], list(known[1])  # the caller may add to its problems


def _keep(key: tuple[str, WorkbookLimits, int, bytes],
          parsed: tuple[Workbook | None, list[Problem]]) -> None:
    with _PARSED_LOCK:
        if key not in _PARSED and key[2] <= PARSED_TEXT_KEPT:
            _PARSED[key] = parsed
            _parsed_text[0] += key[2]
        while _PARSED and (len(_PARSED) > PARSED_KEPT or _parsed_text[0] > PARSED_TEXT_KEPT):
            _parsed_text[0] -= _PARSED.popitem(last=False)[0][2]


def _parse_text(path: Path, text: str, limits: WorkbookLimits) -> tuple[
        Workbook | None, list[Problem]]:
    try:
        document = safe_yaml.parse_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or str(exc)
        return None, [Problem(str(path), f"not valid YAML{where}: {reason}")]
    tasks = _count_tasks(document)
    if tasks > limits.max_tasks:
        return None, [Problem(str(path), f"the workbook has {tasks} tasks, more than [limits] "
                              f"workbook_max_tasks ({limits.max_tasks}); split it into "
                              "several workbooks")]
    return parse_workbook(document, str(path))


@dataclass
class Entry:
    """A workbook file in the catalog, with its problems."""

    name: str
    path: Path
    shipped: bool
    workbook: Workbook | None
    problems: list[Problem] = field(default_factory=list)

    def definition(self) -> str:
        """The workbook's text: its file's, or for one the engine made
        (:mod:`.action_workflows`) its workflows written as YAML."""
        if str(self.path) == action_workflows.MADE_PATH and self.workbook is not None:
            return safe_yaml.dump_yaml(self.workbook.source).decode("utf-8")
        return self.path.read_text(encoding="utf-8", errors="replace")


def shadowed(workbook: Workbook, shipped: Iterable[str]) -> list[str]:
    """The workflows of ``workbook`` whose full names are among ``shipped`` (a user
    workbook named ``tripleo`` with a workflow ``plan.create_deployment_plan``)."""
    taken = set(shipped)
    return sorted(wf.full_name for wf in workbook.workflows.values() if wf.full_name in taken)


class Catalog:
    """Every known workbook and workflow; short names resolve in their workbook first.

    A user workbook never takes the place of a shipped one: one with a shipped
    workbook's name, or a workflow with a shipped workflow's full name, is listed with
    that problem and its workflows are left out; a short name that a user workflow
    shares with one shipped workflow names the shipped one.
    """

    def __init__(self, entries: Iterable[Entry]) -> None:
        ordered = sorted(entries, key=lambda e: not e.shipped)  # shipped ones first
        shipped = [wf.full_name for e in ordered if e.shipped and e.workbook
                   for wf in e.workbook.workflows.values()]
        self.entries: dict[str, Entry] = {}
        #: keys of the entries whose workflows are left out
        self._ignored: set[str] = set()
        for entry in ordered:
            taken = shadowed(entry.workbook, shipped) if entry.workbook and not entry.shipped \
                else []
            if entry.name in self.entries or taken:
                reason = (f"workbook name {entry.name!r} is also used by "
                          f"{self.entries[entry.name].path}" if entry.name in self.entries
                          else f"workflow(s) {', '.join(taken)} ship with tripleo-flow")
                entry.problems.append(Problem(
                    str(entry.path), f"{reason}; this file is ignored: give the workbook "
                    "another name"))
                key = f"{entry.name}@{entry.path}"
                self._ignored.add(key)
                self.entries[key] = entry
            else:
                self.entries[entry.name] = entry
        #: The workbooks' ad-hoc actions as Action classes, by full name.
        self.adhoc: dict[str, type[Action]] = {}
        #: The registered actions an ``action:NAME`` execution may run (set by
        #: :func:`load_catalog`), and the workflows made for them so far.
        self.registered: Mapping[str, type[Action]] = {}
        self._for_actions: dict[str, WorkflowSpec] = {}
        self._made_entry = Entry("", Path(action_workflows.MADE_PATH), True, None)

    def action_lookup(self, registered: Callable[[str], type[Action]]
                      ) -> Callable[[str], type[Action]]:
        """Find an action: the workbooks' ad-hoc actions, then ``registered``."""
        return lambda name: self.adhoc.get(name) or registered(name)

    def workflows(self) -> list[WorkflowSpec]:
        return [wf for key, e in self.entries.items() if e.workbook and key not in self._ignored
                for wf in e.workbook.workflows.values()]

    def lookup(self, name: str, near: str | None = None) -> WorkflowSpec | None:
        """The workflow ``name`` (full, or short within ``near``, or a unique short name;
        ``action:NAME``: the one that runs action NAME, an action execution)."""
        action = action_workflows.action_of(name)
        if action is not None:
            return self._for_action(action)
        if near:
            entry = self.entries.get(near)
            if entry and entry.workbook and name in entry.workbook.workflows:
                return entry.workbook.workflows[name]
        candidates = [wf for wf in self.workflows() if wf.full_name == name]
        if not candidates:
            candidates = [wf for wf in self.workflows() if wf.name == name]
        if len(candidates) > 1:
            candidates = [wf for wf in candidates if self.entry_of(wf).shipped] or candidates
        return candidates[0] if len(candidates) == 1 else None

    def _for_action(self, action: str) -> WorkflowSpec | None:
        made = self._for_actions.get(action)
        if made is None:
            try:
                found = self.adhoc.get(action) or self.registered[action]
            except KeyError:
                return None
            made = self._for_actions[action] = action_workflows.for_action(action, found)
        return made

    def entry_of(self, workflow: WorkflowSpec) -> Entry:
        return self.entries[workflow.workbook] if workflow.workbook else self._made_entry

    def get(self, name: str) -> WorkflowSpec:
        """The workflow ``name``; WorkflowNotFound / InvalidWorkbook when it cannot run
        (ActionNotFound for the execution of an unknown action)."""
        found = self.lookup(name)
        if found is None and action_workflows.action_of(name) is not None:
            raise exceptions.ActionNotFound(str(action_workflows.action_of(name)))
        if found is None:
            matches = [wf.full_name for wf in self.workflows() if wf.name == name]
            if len(matches) > 1:
                raise exceptions.WorkflowNotFound(
                    f"{name} (ambiguous: use one of {', '.join(sorted(matches))})")
            raise exceptions.WorkflowNotFound(name)
        entry = self.entry_of(found)
        if entry.problems:
            raise invalid(entry.problems)
        return found


def validate(workbooks: Iterable[Workbook], catalog: Catalog,
             actions: Mapping[str, type[Action]],
             broken: Mapping[str, str]) -> dict[str, list[Problem]]:
    """Problems of each workbook (keyed by name), checked against ``catalog``."""
    from tripleo_flow.engine.lang import workbook_validator

    # Mistral lets a workflow call itself; a cycle of calls made by tasks each
    # workflow starts with can never stop, and is refused.
    calls = {wf.full_name: [child.full_name for ref in workbook_validator.first_calls(wf)
                            for child in [catalog.lookup(ref, wf.workbook)] if child]
             for wf in catalog.workflows()}
    result: dict[str, list[Problem]] = {}
    for workbook in workbooks:
        problems: list[Problem] = []
        for workflow in workbook.workflows.values():
            problems += workbook_validator.validate_workflow(
                workflow, actions, broken,
                lambda ref, near: catalog.lookup(ref, near))
        for workflow in workbook.workflows.values():
            cycle = _call_cycle(workflow.full_name, calls)
            if cycle:
                problems.append(Problem(workbook.path, "workflows call each other in a cycle: "
                                        + " -> ".join(cycle), workflow.name))
        result[workbook.name] = problems
    return result


def _call_cycle(start: str, calls: Mapping[str, list[str]]) -> list[str] | None:
    stack = [(start, [start])]
    while stack:
        node, path = stack.pop()
        for child in calls.get(node, []):
            if child == start:
                return path + [child]
            if child not in path:
                stack.append((child, path + [child]))
    return None


def workbook_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir()
                  if p.suffix in (".yaml", ".yml") and p.is_file())


TRUSTED = WorkbookLimits(TRUSTED_SIZE, TRUSTED_SIZE)


def _build_adhoc(catalog: Catalog, actions: Mapping[str, type[Action]]) -> None:
    """Make the ad-hoc actions of every workbook, each after the one it is based on
    (``base``: a registered action, or an ad-hoc action by its full name or, in its own
    workbook, by its short name, as Mistral allows)."""
    waiting = [(entry, spec) for entry in catalog.entries.values()
               for spec in (entry.workbook.actions.values() if entry.workbook else ())]
    specs = {spec.name for _entry, spec in waiting}
    while waiting:
        later = []
        for entry, spec in waiting:
            prefix = spec.name.rsplit(".", 1)[0]
            base = spec.base if spec.base in actions or f"{prefix}.{spec.base}" not in specs \
                else f"{prefix}.{spec.base}"
            if base in specs and base not in catalog.adhoc:
                later.append((entry, spec))  # its base is made first
                continue
            spec = dataclasses.replace(spec, base=base)
            known = {**actions, **catalog.adhoc}
            found = adhoc_actions.problems(spec, known)
            entry.problems += [Problem(str(entry.path), text) for text in found]
            if not found:
                catalog.adhoc[spec.name] = adhoc_actions.build(spec, known[base])
            else:
                specs.discard(spec.name)  # actions based on it report an unknown base
        if len(later) == len(waiting):  # bases in a cycle
            for entry, spec in later:
                entry.problems.append(Problem(str(entry.path), (
                    f"action {spec.name.rsplit('.', 1)[-1]!r}: its base {spec.base!r} is "
                    "based on it in turn (ad-hoc actions in a cycle)")))
            break
        waiting = later


def _with_made(entries: list[Entry], made: Iterable[ActionWorkflow]) -> list[Entry]:
    """``entries`` with each made workflow in its workbook: added to the shipped file's
    of that name (whose own workflow of the same name wins), else in a shipped
    workbook of their own, written nowhere."""
    by_workbook: dict[str, dict[str, WorkflowSpec]] = {}
    for workflow in made:
        by_workbook.setdefault(workflow.workbook, {})[workflow.short_name] = \
            action_workflows.spec(workflow)
    result = []
    for entry in entries:
        extra = by_workbook.pop(entry.name, None) if entry.shipped else None
        if extra and entry.workbook is not None:
            workbook = dataclasses.replace(
                entry.workbook, workflows={**extra, **entry.workbook.workflows})
            entry = dataclasses.replace(entry, workbook=workbook)
        result.append(entry)
    for name, workflows in by_workbook.items():
        source = {"version": "2.0", "name": name,
                  "workflows": {short: {k: v for k, v in wf.raw.items() if k != "name"}
                                for short, wf in workflows.items()}}
        result.append(Entry(name, Path(action_workflows.MADE_PATH), True,
                            Workbook(name, action_workflows.MADE_PATH, "", workflows, source)))
    return result


def read_catalog(directories: Iterable[tuple[Path, bool]], extra_files: Iterable[Path] = (),
                 limits: WorkbookLimits = WorkbookLimits(),
                 made: Iterable[ActionWorkflow] = ()) -> Catalog:
    """Read every workbook of ``directories`` (``(dir, shipped)`` pairs) without checking
    them against the actions and each other (:func:`load_catalog` does): its entries
    hold only the problems of reading them, and :meth:`Catalog.workflows` lists the
    same workflows as a checked catalog's (a check's problems leave a workflow
    listed: running it raises them), which is all a listing needs.

    :param made: named one-task workflows to show in their workbooks, as if shipped
        (:mod:`.action_workflows`)"""
    entries = []
    sources = [(path, shipped) for directory, shipped in directories
               for path in workbook_files(directory)]
    sources += [(Path(p), False) for p in extra_files]
    for path, shipped in sources:
        workbook, problems = read_file(path, TRUSTED if shipped else limits)
        name = workbook.name if workbook else path.stem
        entries.append(Entry(name, path, shipped, workbook, problems))
    return Catalog(_with_made(entries, made))


def load_catalog(directories: Iterable[tuple[Path, bool]], actions: Mapping[str, type[Action]],
                 broken: Mapping[str, str] | None = None,
                 extra_files: Iterable[Path] = (),
                 limits: WorkbookLimits = WorkbookLimits(), passed: bool = False,
                 made: Iterable[ActionWorkflow] = ()) -> Catalog:
    """Read and check every workbook of ``directories`` (``(dir, shipped)`` pairs); a
    user file past ``limits`` is listed with that problem (shipped ones are trusted).

    :param passed: these very files passed every check before, with these actions
        (:mod:`tripleo_flow.client.catalog_checks`): the catalog and its ad-hoc
        actions are made, nothing is checked again (``actions`` may then load each
        action when it is looked up: only those the aliases and ad-hoc actions are
        based on are)."""
    from tripleo_flow.engine.lang import action_aliases

    catalog = read_catalog(directories, extra_files, limits, made)
    catalog.registered = actions
    catalog.adhoc.update(action_aliases.alias_classes(actions))
    _build_adhoc(catalog, actions)
    if passed:
        return catalog
    checked = validate([e.workbook for e in catalog.entries.values() if e.workbook],
                       catalog, {**actions, **catalog.adhoc}, broken or {})
    for entry in catalog.entries.values():
        if entry.workbook:
            entry.problems += checked.get(entry.workbook.name, [])
    return catalog
