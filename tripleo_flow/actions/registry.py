"""The action registry: every action registered under ``tripleo_flow.actions``.

Actions are found through stevedore.  The registry made by
:meth:`ActionRegistry.load` reads the namespace's entry points and loads each by
name when it is first used (stevedore's :class:`~stevedore.named.NamedExtensionManager`):
a workflow run imports the modules of its own actions, not all thirty.  An entry point that
cannot be imported (a missing module, a syntax error, a class that is not an
:class:`~tripleo_flow.actions.base.Action`) is kept as a *broken* action: it is
listed with its error, and using it raises :class:`ActionNotFound` naming the
cause, so one bad plugin never hides the others.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from stevedore import extension, named

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action

NAMESPACE = "tripleo_flow.actions"


@dataclass(frozen=True)
class ActionInput:
    """One input of an action."""

    name: str
    type: str
    required: bool
    default: Any = None


@dataclass(frozen=True)
class ActionInfo:
    """What ``action list`` / ``action show`` print about an action."""

    name: str
    description: str
    inputs: tuple[ActionInput, ...]
    target: str
    error: str | None = None


class BrokenAction(exceptions.ActionNotFound):
    """An action is registered but its entry point cannot be loaded."""

    def __init__(self, name: str, target: str, error: str) -> None:
        exceptions.NotFound.__init__(
            self,
            f"Action {name!r} is registered ({target}) but cannot be loaded: {error}. "
            "Reinstall tripleo-flow or the package providing it.",
        )
        self.name = name
        self.target = target
        self.error = error


class ActionRegistry:
    """Loaded actions by name, the entry points that failed to load, and those not
    loaded yet."""

    def __init__(self, manager: extension.ExtensionManager,
                 broken: Mapping[str, tuple[str, str]] | None = None,
                 pending: Mapping[str, str] | None = None) -> None:
        self._classes: dict[str, type[Action]] = {}
        self._targets: dict[str, str] = {}
        self._broken: dict[str, tuple[str, str]] = dict(broken or {})
        #: name -> target of the entry points not loaded yet (:meth:`load`)
        self._pending: dict[str, str] = dict(pending or {})
        self._namespace = manager.namespace
        self._lock = threading.Lock()
        self._add(manager)

    def _add(self, manager: extension.ExtensionManager) -> None:
        for ext in manager:
            target = _target(ext.entry_point)
            plugin = ext.plugin
            if not (isinstance(plugin, type) and issubclass(plugin, Action)):
                self._broken[ext.name] = (target, f"{plugin!r} is not an Action subclass")
                continue
            if plugin.action_name in ("", ext.name):
                plugin.action_name = ext.name
            self._classes[ext.name] = plugin
            self._targets[ext.name] = target

    @classmethod
    def load(cls, namespace: str = NAMESPACE) -> ActionRegistry:
        """The entry points of ``namespace``, each loaded on first use; broken ones
        are recorded then."""
        listing: named.NamedExtensionManager[Any] = named.NamedExtensionManager(
            namespace, [], on_missing_entrypoints_callback=None)
        return cls(listing, pending={ep.name: _target(ep)
                                     for ep in listing.list_entry_points()})

    def _load(self, names: Iterable[str] | None = None) -> None:
        """Load the entry points ``names`` (None: all) that are not loaded yet."""
        with self._lock:
            wanted = [name for name in (self._pending if names is None else names)
                      if name in self._pending]
            if not wanted:
                return
            broken: dict[str, tuple[str, str]] = {}

            def on_failure(_manager: Any, entry_point: Any, exc: BaseException) -> None:
                broken[entry_point.name] = (_target(entry_point),
                                            f"{type(exc).__name__}: {exc}")

            manager = named.NamedExtensionManager(
                self._namespace, wanted, invoke_on_load=False,
                on_load_failure_callback=on_failure, on_missing_entrypoints_callback=None)
            self._broken.update(broken)
            self._add(manager)
            for name in wanted:
                del self._pending[name]

    def entry_points(self) -> dict[str, str]:
        """name -> target of every entry point (loaded or not; none for actions given
        as classes)."""
        return {**{name: target for name, (target, _e) in self._broken.items()},
                **self._targets, **self._pending}

    @classmethod
    def from_classes(cls, classes: Mapping[str, type[Action]]) -> ActionRegistry:
        """A registry of exactly ``classes`` (for tests and embedding)."""
        extensions = [extension.Extension(name, None, plugin, None)  # type: ignore[arg-type]
                      for name, plugin in classes.items()]
        return cls(extension.ExtensionManager.make_test_instance(extensions, NAMESPACE))

    def names(self) -> list[str]:
        """Every registered name, loadable or not, sorted."""
        return sorted(set(self._classes) | set(self._broken) | set(self._pending))

    def classes(self) -> dict[str, type[Action]]:
        """The loadable actions by name (every entry point loaded)."""
        self._load()
        return dict(self._classes)

    def broken(self) -> dict[str, str]:
        """Error message of each entry point that failed to load (every one loaded)."""
        self._load()
        return {name: error for name, (_target, error) in self._broken.items()}

    def loaded(self) -> Mapping[str, type[Action]]:
        """The loadable actions by name, each loaded when it is looked up."""
        return LoadedActions(self)

    def __contains__(self, name: object) -> bool:
        return name in self._classes or name in self._broken or name in self._pending

    def get(self, name: str) -> type[Action]:
        """The action class ``name``; ActionNotFound when unknown or broken."""
        self._load([name])
        if name in self._classes:
            return self._classes[name]
        if name in self._broken:
            target, error = self._broken[name]
            raise BrokenAction(name, target, error)
        raise exceptions.ActionNotFound(name)

    def info(self, name: str) -> ActionInfo:
        """Description and inputs of ``name`` (with the load error if broken)."""
        self._load([name])
        if name in self._broken:
            target, error = self._broken[name]
            return ActionInfo(name, "", (), target, error)
        action = self.get(name)
        inputs = tuple(ActionInput(*item) for item in action.inputs())
        return ActionInfo(name, action.description(), inputs, self._targets.get(name, ""))

    def infos(self, names: Iterable[str] | None = None) -> list[ActionInfo]:
        """:meth:`info` of every action (or of ``names``)."""
        return [self.info(name) for name in (self.names() if names is None else names)]


class LoadedActions(Mapping[str, type[Action]]):
    """The loadable actions of a registry as a mapping, each loaded when it is looked
    up (iterating loads them all)."""

    def __init__(self, registry: ActionRegistry) -> None:
        self._registry = registry

    def __getitem__(self, name: str) -> type[Action]:
        if name not in self._registry:
            raise KeyError(name)
        try:
            return self._registry.get(name)
        except exceptions.ActionNotFound:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry.classes())

    def __len__(self) -> int:
        return len(self._registry.classes())


def _target(entry_point: Any) -> str:
    if entry_point is None:
        return ""
    return str(getattr(entry_point, "value", entry_point))
