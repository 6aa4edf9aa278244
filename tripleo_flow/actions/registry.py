"""The action registry: every action registered under ``tripleo_flow.actions``.

Actions are found through stevedore.  An entry point that cannot be imported
(a missing module, a syntax error, a class that is not an
:class:`~tripleo_flow.actions.base.Action`) is kept as a *broken* action: it is
listed with its error, and using it raises :class:`ActionNotFound` naming the
cause, so one bad plugin never hides the others.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from stevedore import extension

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
    """Loaded actions by name, plus the entry points that failed to load."""

    def __init__(self, manager: extension.ExtensionManager,
                 broken: Mapping[str, tuple[str, str]] | None = None) -> None:
        self._classes: dict[str, type[Action]] = {}
        self._targets: dict[str, str] = {}
        self._broken: dict[str, tuple[str, str]] = dict(broken or {})
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
        """Load every entry point of ``namespace``; broken ones are recorded."""
        broken: dict[str, tuple[str, str]] = {}

        def on_failure(_manager: Any, entry_point: Any, exc: BaseException) -> None:
            broken[entry_point.name] = (_target(entry_point), f"{type(exc).__name__}: {exc}")

        manager = extension.ExtensionManager(
            namespace, invoke_on_load=False, on_load_failure_callback=on_failure)
        return cls(manager, broken)

    @classmethod
    def from_classes(cls, classes: Mapping[str, type[Action]]) -> ActionRegistry:
        """A registry of exactly ``classes`` (for tests and embedding)."""
        extensions = [extension.Extension(name, None, plugin, None)  # type: ignore[arg-type]
                      for name, plugin in classes.items()]
        return cls(extension.ExtensionManager.make_test_instance(extensions, NAMESPACE))

    def names(self) -> list[str]:
        """Every registered name, loadable or not, sorted."""
        return sorted(set(self._classes) | set(self._broken))

    def classes(self) -> dict[str, type[Action]]:
        """The loadable actions by name."""
        return dict(self._classes)

    def broken(self) -> dict[str, str]:
        """Error message of each entry point that failed to load."""
        return {name: error for name, (_target, error) in self._broken.items()}

    def __contains__(self, name: object) -> bool:
        return name in self._classes or name in self._broken

    def get(self, name: str) -> type[Action]:
        """The action class ``name``; ActionNotFound when unknown or broken."""
        if name in self._classes:
            return self._classes[name]
        if name in self._broken:
            target, error = self._broken[name]
            raise BrokenAction(name, target, error)
        raise exceptions.ActionNotFound(name)

    def info(self, name: str) -> ActionInfo:
        """Description and inputs of ``name`` (with the load error if broken)."""
        if name in self._broken:
            target, error = self._broken[name]
            return ActionInfo(name, "", (), target, error)
        action = self.get(name)
        inputs = tuple(ActionInput(*item) for item in action.inputs())
        return ActionInfo(name, action.description(), inputs, self._targets.get(name, ""))

    def infos(self, names: Iterable[str] | None = None) -> list[ActionInfo]:
        """:meth:`info` of every action (or of ``names``)."""
        return [self.info(name) for name in (self.names() if names is None else names)]


def _target(entry_point: Any) -> str:
    if entry_point is None:
        return ""
    return str(getattr(entry_point, "value", entry_point))
